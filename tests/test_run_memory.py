"""A run into a folder holds neither every row as a Sample nor every record (issue 18: 200,000
rows under 1 GiB): rows are kept as pickles (PickledList), records go to results.jsonl and are
read back one at a time for the summary and the reports. Each piece says the same as the
in-memory way it replaced."""

from __future__ import annotations

import errno
import json
import random
import tracemalloc
from pathlib import Path

import pytest

from localeval.config import load_config
from localeval.data import dataset
from localeval.data.dataset import PickledList
from localeval.results.folder import rewrite_in_order
from localeval.results.records import SampleRecord
from localeval.results.tally import ScoreTally, metric_summary, score_keys
from localeval.runner import run


def query_log(path: Path, n: int, seed: int = 0) -> Path:
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            retrieved = [f"doc{rng.randrange(10**6)}" for _ in range(10)]
            row = {"id": f"q{i}", "question": f"query {i}", "retrieved_ids": retrieved,
                   "expected_ids": retrieved[: rng.randint(0, 3)], "extra": {"k": [i]}}
            f.write(json.dumps(row) + "\n")
    return path


def test_compact_load_gives_the_same_samples_and_is_never_iterated_by_pydantic(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = query_log(tmp_path / "rows.jsonl", 300)
    with open(path, "a", encoding="utf-8") as f:
        f.write("{broken\n\n" + json.dumps({"id": "q3"}) + "\n")
    plain = dataset.load(path)
    iterated: list[int] = []
    original = PickledList.__iter__
    monkeypatch.setattr(PickledList, "__iter__", lambda s: iterated.append(1) or original(s))
    compact = dataset.load(path, compact=True)
    assert isinstance(compact.samples, PickledList) and not iterated
    assert list(compact.samples) == plain.samples and compact.samples[7] == plain.samples[7]
    assert compact.problems == plain.problems and len(plain.problems) == 2
    kept = compact.samples.select(s.id.endswith("7") for s in plain.samples)
    assert [s.id for s in kept] == [s.id for s in plain.samples if s.id.endswith("7")]


def _peak_mib(path: Path, out: Path) -> float:
    settings = load_config(None, {"metrics": ["retrieval"]})
    tracemalloc.start()
    try:
        run(path, out, settings)
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def test_a_run_into_a_folder_grows_by_well_under_2_kb_per_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows as Samples (~2.3 KB each) or records kept (~3.5 KB each, 24 scores) at any point
    of a run would show here; pickles, ids, hashes and score columns take under 1 KB. (The
    bootstrap, bounded on its own, is left out: its buffers vary with the number of values.)"""
    monkeypatch.setattr("localeval.results.tally.bootstrap_ci", lambda values, **kw: None)
    small, large = query_log(tmp_path / "a.jsonl", 500), query_log(tmp_path / "b.jsonl", 3500)
    _peak_mib(small, tmp_path / "warm")  # imports, caches
    per_row_kb = (_peak_mib(large, tmp_path / "b") - _peak_mib(small, tmp_path / "a")) * 1024 / 3000
    assert per_row_kb < 1.5, per_row_kb
    summary = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert summary["complete"] is True and summary["metrics"]["mrr"]["count"] > 0


def _records(n: int) -> list[SampleRecord]:
    rng = random.Random(4)
    out = []
    for i in range(n):
        r = SampleRecord(id=f"s{i}", line=i + 1)
        for key in ("mrr", "ndcg@5", "late" if i > n // 2 else "mrr@3"):
            r.scores[key] = None if rng.random() < 0.1 else rng.random()
        if rng.random() < 0.2:
            r.errors["faithfulness" if i % 2 else "late"] = "boom"
        r.details["faithfulness"] = {"judge_retries": i % 3}
        out.append(r)
    return out


def test_tally_discovers_score_keys_as_score_keys_orders_them() -> None:
    records = _records(400)
    first = {"faithfulness": "faithfulness", "ndcg": "ndcg"}
    tally = ScoreTally(first, discover=True)
    for r in records:
        tally.add(r)
    owners = score_keys(records, first)
    assert tally.owners == owners and list(owners)[-1] == "late"
    assert tally.summary() == metric_summary(records, owners)


def test_no_room_to_reorder_still_gives_every_record_in_input_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = _records(50)
    path = tmp_path / "results.jsonl"
    shuffled = records[25:] + records[:25]
    before = "".join(r.model_dump_json() + "\n" for r in shuffled)
    path.write_text(before, encoding="utf-8")

    def full(target: Path, chunks: object) -> None:
        next(iter(chunks))  # type: ignore[call-overload]
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("localeval.results.folder.write_atomic", full)
    notes: list[str] = []
    lines = {r.id: r.line + 100 for r in records}
    ordered = rewrite_in_order(path, lines, notes.append)
    assert path.read_text(encoding="utf-8") == before and "no room" in notes[0]
    got = list(ordered)
    assert [r.id for r in got] == [r.id for r in records] and len(ordered) == 50
    assert [r.line for r in got] == [r.line + 100 for r in records]
    assert got[3].scores == records[3].scores


def test_the_view_keeps_every_error_row_a_report_shows() -> None:
    from localeval.report import html, markdown, view

    assert max(markdown.MAX_ROWS, html.MAX_ROWS) <= view.ROWS_KEPT
