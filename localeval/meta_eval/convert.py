"""Turn the dev sets (../shared/data/dev beside the checkout) into meta-eval pairs.

- halueval   (faithfulness): context = `knowledge` (the one context), a = `right_answer`,
             b = `hallucinated_answer`; people prefer a.
- uhgeval    (faithfulness): context = the article, `newsBeginning` + `newsRemainder`; a =
             `realContinuation`, b = `hallucinatedContinuation`; the question is the neutral
             "请续写这篇新闻。" (with the headline in the question, the 1.5B judge copied headline
             claims into the statements of the continuation); people prefer a.
- ragchecker (answer_correctness): ground_truth = `gt_answer`, a = model1's response, b =
             model2's. Each instance has two annotators whose `correctness_label` (−2..2) rates
             model2 against model1; their sum decides: > 0 → b, < 0 → a, 0 → "tie" (no
             preference: counted by meta-eval, never judged). `overall_label` is kept in `meta`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from localeval.errors import DatasetError

UHGEVAL_QUESTION = "请续写这篇新闻。"
FILES = {
    "halueval": "halueval_qa_dev.jsonl",
    "uhgeval": "uhgeval_dev.jsonl",
    "ragchecker": "ragchecker_human_labeled.json",
}
METRIC = {"halueval": "faithfulness", "uhgeval": "faithfulness", "ragchecker": "answer_correctness"}


def default_src() -> Path:
    """../shared/data/dev beside the localeval checkout (the repository root's parent)."""
    return Path(__file__).resolve().parents[3] / "shared" / "data" / "dev"


def _jsonl(path: Path) -> Iterator[dict[str, Any]]:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            yield json.loads(line)


def halueval(src: Path) -> Iterator[dict[str, Any]]:
    for r in _jsonl(src / FILES["halueval"]):
        base = {"question": r["question"], "contexts": [r["knowledge"]]}
        yield {
            "pair_id": r["id"],
            "language": "en",
            "preferred": "a",
            "a": {**base, "answer": r["right_answer"]},
            "b": {**base, "answer": r["hallucinated_answer"]},
        }


def uhgeval(src: Path) -> Iterator[dict[str, Any]]:
    for r in _jsonl(src / FILES["uhgeval"]):
        base = {
            "question": UHGEVAL_QUESTION,
            "contexts": [(r["newsBeginning"] + r["newsRemainder"]).strip()],
        }
        yield {
            "pair_id": r["id"],
            "language": "zh",
            "preferred": "a",
            "a": {**base, "answer": r["realContinuation"].strip()},
            "b": {**base, "answer": r["hallucinatedContinuation"].strip()},
        }


def ragchecker(src: Path) -> Iterator[dict[str, Any]]:
    rows = json.loads((src / FILES["ragchecker"]).read_text(encoding="utf-8"))
    by_instance: dict[int, list[dict[str, Any]]] = {}
    for r in rows:
        by_instance.setdefault(int(r["instance_id"]), []).append(r)
    for iid, group in sorted(by_instance.items()):
        first = group[0]
        correctness = [int(r["correctness_label"]) for r in group]
        total = sum(correctness)
        base = {"question": first["query"], "ground_truth": first["gt_answer"]}
        yield {
            "pair_id": f"ragchecker-{iid}",
            "language": "en",
            "preferred": "b" if total > 0 else "a" if total < 0 else "tie",
            "a": {**base, "answer": first["model1"]["response"]},
            "b": {**base, "answer": first["model2"]["response"]},
            "meta": {
                "subset": first.get("dataset"),
                "correctness_labels": correctness,
                "overall_labels": [int(r["overall_label"]) for r in group],
                "models": [first["model1"].get("model_name"), first["model2"].get("model_name")],
            },
        }


CONVERTERS: dict[str, Callable[[Path], Iterator[dict[str, Any]]]] = {
    "halueval": halueval,
    "uhgeval": uhgeval,
    "ragchecker": ragchecker,
}


def convert(name: str, src: Path, out: Path) -> int:
    """Write the pairs of one dev set as JSONL; return how many were written."""
    path = Path(src) / FILES[name]
    if not path.is_file():
        raise DatasetError(f"{path} not found; pass --src DIR (the folder holding {FILES[name]})")
    try:
        pairs = list(CONVERTERS[name](Path(src)))
    except (KeyError, TypeError, ValueError) as exc:
        raise DatasetError(
            f"{path}: not the expected {name} format ({type(exc).__name__}: {exc})"
        ) from None
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(
        "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in pairs), encoding="utf-8"
    )
    tmp.replace(out)
    return len(pairs)
