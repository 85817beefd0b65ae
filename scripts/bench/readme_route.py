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

    .venv/bin/python scripts/bench/readme_route.py [--stop _finish] [-- extra run flags]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
from inspect import CO_NEWLOCALS
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # this checkout's package, not an installed one elsewhere
ROW = {"id": "r1", "question": "When was the Eiffel Tower built?",
       "answer": "It was finished in 1889 for a fair.",
       "contexts": ["The Eiffel Tower was completed in 1889 for the World's Fair."]}
ANSWERS = [{"verdicts": [{"verdict": 1}]}]
"""The fake judge's one answer: the verdict on the row's one sentence."""


def follow(argv: list[str], stop: str) -> tuple[int, list[str], list[str]]:
    """The exit status and the modules in the order the run first calls their functions:
    without the calls made at import time, and with them."""
    package = str(ROOT / "localeval") + os.sep
    orders: tuple[list[str], list[str]] = ([], [])
    seen: tuple[set[Any], set[Any]] = (set(), set())
    stopped = False

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
            if not order or order[-1] != module:
                order.append(module)
        stopped = code.co_name == stop and not importing(frame.f_back)

    from localeval.cli import main

    sys.setprofile(profile)
    threading.setprofile(profile)
    try:
        rc = main(argv)
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    return rc, *orders


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
        rc, order, with_imports = follow(
            ["run", str(rows), "--out", str(Path(tmp, "out")), "--judge", "fake",
             "--fake-answers", str(answers), "--metrics", "faithfulness", "--no-cache",
             "--quiet", *args.extra], args.stop)

    def counts(route: list[str]) -> dict[str, int]:
        modules = list(dict.fromkeys(route))
        return {"modules": len(modules), "reentries": len(route) - len(modules)}

    print(json.dumps({"exit_status": rc, **counts(order), "with_import_time": counts(with_imports),
                      "route": order}, indent=1))
    return rc


if __name__ == "__main__":
    sys.exit(main())
