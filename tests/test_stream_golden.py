"""A run's files are the same bytes whether its records are held in memory or streamed from
results.jsonl: summary.json, report.md, report.html and results.jsonl of three small runs (a
fresh run, a resumed one whose results.jsonl is out of order, duplicated and cut short, and a
re-rendered folder of hand-made records with details, errors beyond the report's caps and
skips) equal the files the in-memory code wrote (tests/golden/stream, written by
`python tests/test_stream_golden.py WRITE_DIR` before the streaming code existed).
Times are the only thing replaced before comparing."""

from __future__ import annotations

import json
import random
import re
import shutil
import sys
from pathlib import Path

GOLDEN = Path(__file__).resolve().parent / "golden" / "stream"
FILES = ("summary.json", "report.md", "report.html", "results.jsonl")


def retrieval_rows(path: Path, n: int = 150) -> Path:
    """Retrieval rows with a malformed line, a duplicate id and rows a metric skips."""
    rng = random.Random(3)
    lines = []
    for i in range(n):
        retrieved = [f"d{rng.randrange(40)}" for _ in range(6)]
        relevant = [*rng.sample(retrieved, rng.randint(0, 2)), f"d{rng.randrange(40)}"]
        row: dict = {"id": f"q{i}", "question": f"query {i} <&>", "retrieved_ids": retrieved}
        if i % 11:
            row["expected_ids"] = relevant
        lines.append(json.dumps(row))
    lines[40] = "{not json"
    lines[77] = json.dumps({"id": "q5", "question": "again", "retrieved_ids": ["d1"]})
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def hand_made_records() -> list[dict]:
    """Records as results.jsonl holds them: judge details, errors on most rows, skips, unscored
    values, a key that appears late, few distinct values."""
    rng = random.Random(5)
    out = []
    for i in range(1, 321):
        r: dict = {"id": f"s{i:03d}", "line": i, "language": "en", "question": f"Q{i} <b>?",
                   "answer": f"answer {i} & more", "input_hash": f"{i:016x}", "scores": {},
                   "details": {}, "errors": {}, "skipped": {}}
        if i % 4:
            r["errors"]["faithfulness"] = f"judge failed on row {i} | twice"
        else:
            r["scores"]["faithfulness"] = rng.choice([0.0, 0.25, 0.5, 1.0])
            r["details"]["faithfulness"] = {
                "statements": [{"statement": f"s{i}", "verdict": i % 8 // 4,
                                "reason": "because"}],
                "judge_retries": i % 3,
            }
        r["scores"]["mrr"] = rng.choice([0.0, 0.5, 1.0])
        r["scores"]["mrr@5"] = None if i % 9 == 0 else rng.random()
        if i % 13 == 0:
            r["skipped"]["answer_relevance"] = "needs 'answer'"
        else:
            r["scores"]["answer_relevance"] = None if i % 7 == 0 else round(rng.random(), 3)
        if i > 200:
            r["scores"]["late_metric"] = rng.random()
        out.append(r)
    return out


def write_hand_made(folder: Path) -> None:
    """results.jsonl out of order, one id twice, a bad line, a NaN score; a summary.json."""
    folder.mkdir(parents=True)
    records = hand_made_records()
    rng = random.Random(9)
    order = list(range(len(records)))
    rng.shuffle(order)
    lines = [json.dumps(records[i]) for i in order]
    older = dict(records[10], scores={"mrr": 0.75})
    lines.insert(5, json.dumps(older))
    lines.insert(100, "{broken")
    nan = json.dumps(records[20]).replace('"mrr": ', '"mrr": NaN, "x": ', 1)
    lines[lines.index(json.dumps(records[20]))] = nan
    (folder / "results.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    summary = {"localeval_version": "0.1.0", "complete": False,
               "dataset": {"source": "rows.jsonl", "samples": 330, "input_errors": []},
               "metrics": {"answer_relevance": {"metric": "answer_relevance"},
                           "faithfulness": {"metric": "faithfulness"}},
               "settings": {"metrics": ["faithfulness"]}}
    (folder / "summary.json").write_text(json.dumps(summary), encoding="utf-8")


def make_runs(work: Path) -> dict[str, Path]:
    """The three run folders, made by the code under test (cwd: `work`)."""
    from localeval.cli import main

    retrieval_rows(work / "rows.jsonl")
    args = ["run", "rows.jsonl", "--metrics", "retrieval", "--at", "3,5", "--quiet"]
    assert main([*args, "--out", "fresh"]) == 0
    shutil.copytree(work / "fresh", work / "resumed")
    results = work / "resumed" / "results.jsonl"
    lines = results.read_text(encoding="utf-8").splitlines()
    kept = lines[60:90] + lines[:20] + [lines[30], lines[2]]  # out of order, one id twice
    results.write_text("\n".join(kept) + "\n" + lines[95][:40], encoding="utf-8")  # cut short
    assert main([*args, "--out", "resumed", "--resume"]) == 0
    write_hand_made(work / "hand")
    assert main(["report", "hand"]) == 0
    (work / "hand" / "summary.json").write_text(
        json.dumps(load_summary(work / "hand"), indent=2) + "\n", encoding="utf-8")
    return {name: work / name for name in ("fresh", "resumed", "hand")}


def load_summary(folder: Path) -> dict:
    """summary.json as `localeval report` sees it (metrics recomputed from results.jsonl)."""
    from localeval.results.folder import load_run

    return load_run(folder).summary


def normalized(folder: Path, name: str) -> str:
    """A file's text with the run's times (finished at, elapsed) replaced."""
    text = (folder / name).read_text(encoding="utf-8")
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    if summary.get("finished_at"):
        text = text.replace(summary["finished_at"], "<FINISHED>")
    if summary.get("elapsed_s") is not None:
        text = re.sub(r'"elapsed_s": [0-9.e-]+', '"elapsed_s": 0', text)
        text = text.replace(f"{summary['elapsed_s']:.1f} s", "<ELAPSED>")
    return text


def test_streamed_run_files_equal_the_in_memory_ones(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    for name, folder in make_runs(tmp_path).items():
        for file in FILES:
            expected = (GOLDEN / name / file).read_text(encoding="utf-8")
            assert normalized(folder, file) == expected, f"{name}/{file} differs"


if __name__ == "__main__":  # write the golden files with the code on PYTHONPATH
    import os
    import tempfile

    target = Path(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        for name, folder in make_runs(Path(tmp)).items():
            (target / name).mkdir(parents=True, exist_ok=True)
            for file in FILES:
                (target / name / file).write_text(normalized(folder, file), encoding="utf-8")
