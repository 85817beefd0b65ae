"""Follow README's route for one faithfulness row, `python -m localeval run` to results.jsonl, as a
reader would: every localeval function the run calls, read once, in the order the run first
calls it (depth first), up to `--stop` (default `_finish`: the row is in results.jsonl). Prints
JSON: the modules opened, how many times the reader enters a module already left (`reentries`),
and the path itself. Import-time code is left out: module and class bodies and every call they
make (a decorator registering a metric, a schema built at import); `with_import_time` gives the
counts of the same run with those calls kept (the count of earlier rounds, which left out the
bodies only). A mechanical proxy of the issue's hand count: it also counts each small helper a
function calls, and each method of an object (a list, the judge's statistics) as an entry into
its module.

Two counts of re-entries, over the same `route` (a step of the route is a move into another
module to read a function not read before):

- `reentries` (the strict count, kept so that earlier rounds' figures stay comparable): every
  step into a module already opened, going back to the caller included.
- `reader_reentries` (a reader's count, the one the issue's hand count is measured by): only the
  steps into a module already opened that is not on the current call stack — the reader had left
  it and must go back to it for new code. Reading a callee and coming back to the caller (whose
  module is on the stack) is not a re-entry. A worker thread's stack continues the stack of the
  code that started it. `reader_reentered` lists each such step: the module, the function read
  there, the position of the step in `route`, and whether the function is a method of a class
  the reader met before (`class_met_before`: the object's class was read at its creation or at
  another method; a person who read the class whole would not go back for it).
  `reader_reentries_class_met_before` counts those steps.

A generator's body is counted where it is first iterated, not where it is made (the profiler
sees no call there): data/readers.py's `_jsonl_rows`, returned by `_read_jsonl` and iterated by
data/dataset.py, counts as one reader re-entry that a person reading `_read_jsonl` would not make.

    .venv/bin/python scripts/bench/readme_route.py [--stop _finish] [-- extra run flags]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import threading
from asyncio.base_events import BaseEventLoop
from inspect import CO_NEWLOCALS
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # this checkout's package, not an installed one elsewhere
ROW = {"id": "r1", "question": "When was the Eiffel Tower built?",
       "answer": "It was finished in 1889 for a fair.",
       "contexts": ["The Eiffel Tower was completed in 1889 for the World's Fair."]}
ANSWERS = [{"verdicts": [{"verdict": 1}]}]
"""The fake judge's one answer: the verdict on the row's one sentence."""


def follow(argv: list[str], stop: str) -> tuple[int, list[str], list[str], list[dict[str, Any]]]:
    """The exit status and the modules in the order the run first calls their functions:
    without the calls made at import time, and with them; and the steps of the first route
    that a reader counts as re-entries (the module opened again is not on the call stack)."""
    package = str(ROOT / "localeval") + os.sep
    orders: tuple[list[str], list[str]] = ([], [])
    seen: tuple[set[Any], set[Any]] = (set(), set())
    reentered: list[dict[str, Any]] = []
    classes: set[tuple[str, str]] = set()  # (module, class) of every method read
    started: dict[Any, set[str]] = {}  # a worker thread's id, or an asyncio task: the modules
    # on the stack of the code that started it
    stopped = False

    def module_of(code: CodeType) -> str | None:
        if not code.co_filename.startswith(package):
            return None
        return str(Path(code.co_filename).relative_to(ROOT))

    def on_stack(frame: FrameType | None) -> set[str]:
        modules: set[str] = set()
        while frame is not None:
            module = module_of(frame.f_code)
            if module is not None:
                modules.add(module)
            frame = frame.f_back
        try:
            task = asyncio.current_task()
        except RuntimeError:  # no event loop in this thread
            task = None
        return modules | started.get(threading.get_ident(), set()) | started.get(task, set())

    start, create_task = threading.Thread.start, BaseEventLoop.create_task

    def starting(thread: threading.Thread) -> None:
        stack = on_stack(sys._getframe(1))
        start(thread)
        if thread.ident is not None:
            started[thread.ident] = stack

    def creating_task(loop: BaseEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
        stack = on_stack(sys._getframe(1))
        task = create_task(loop, coro, **kwargs)
        started[task] = stack
        return task

    def importing(frame: FrameType | None) -> bool:
        while frame is not None:
            code = frame.f_code
            if code.co_filename.startswith(package) and not code.co_flags & CO_NEWLOCALS:
                return True
            frame = frame.f_back
        return False

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal stopped
        code = frame.f_code
        if (event != "call" or stopped or not code.co_flags & CO_NEWLOCALS
                or not code.co_filename.startswith(package)):  # module and class bodies: imports
            return
        module = str(Path(code.co_filename).relative_to(ROOT))
        for order, known in zip(orders, seen, strict=True):
            if code in known or (known is seen[0] and importing(frame.f_back)):
                continue
            known.add(code)
            owner = _class_of(code.co_qualname)
            met = (module, owner) in classes
            if owner and order is orders[0]:
                classes.add((module, owner))
            if not order or order[-1] != module:
                if order is orders[0] and module in order and module not in on_stack(frame.f_back):
                    reentered.append({"step": len(order), "module": module,
                                      "function": code.co_qualname, "class_met_before": met})
                order.append(module)
        stopped = code.co_name == stop and not importing(frame.f_back)

    from localeval.cli import main

    sys.setprofile(profile)
    threading.setprofile(profile)
    threading.Thread.start = starting  # type: ignore[method-assign]
    BaseEventLoop.create_task = creating_task  # type: ignore[method-assign,assignment]
    try:
        rc = main(argv)
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
        threading.Thread.start = start  # type: ignore[method-assign]
        BaseEventLoop.create_task = create_task  # type: ignore[method-assign]
    return rc, *orders, reentered


def _class_of(qualname: str) -> str | None:
    """The class a method belongs to ("Class.method", "Class.method.<locals>.f"), else None."""
    head, _, rest = qualname.partition(".")
    return head if rest and not rest.startswith("<locals>") and head != "<locals>" else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stop", default="_finish", help="the function where the route ends")
    parser.add_argument("extra", nargs="*", help="more `run` flags, after --")
    args = parser.parse_args()
    os.environ["LOCALEVAL_ALLOW_FAKE_JUDGE"] = "1"
    with tempfile.TemporaryDirectory() as tmp:
        rows, answers = Path(tmp, "row.jsonl"), Path(tmp, "answers.json")
        rows.write_text(json.dumps(ROW) + "\n", encoding="utf-8")
        answers.write_text(json.dumps(ANSWERS), encoding="utf-8")
        rc, order, with_imports, reentered = follow(
            ["run", str(rows), "--out", str(Path(tmp, "out")), "--judge", "fake",
             "--fake-answers", str(answers), "--metrics", "faithfulness", "--no-cache",
             "--quiet", *args.extra], args.stop)

    def counts(route: list[str]) -> dict[str, int]:
        modules = list(dict.fromkeys(route))
        return {"modules": len(modules), "reentries": len(route) - len(modules)}

    print(json.dumps({"exit_status": rc, **counts(order), "reader_reentries": len(reentered),
                      "reader_reentries_class_met_before": sum(r["class_met_before"]
                                                               for r in reentered),
                      "with_import_time": counts(with_imports), "reader_reentered": reentered,
                      "route": order}, indent=1))
    return rc


if __name__ == "__main__":
    sys.exit(main())
