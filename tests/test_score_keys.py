"""Issue 54 item 4: one meaning per score-key suffix. `NAME.weighted` is the probability-weighted
score and `NAME.greedy` the greedy verdicts' (or level's) score on every metric that has both,
`answer_similarity.cosine` the cosine before rescaling; the old `.soft` / `.raw` keys of a run
folder written before the rename still read as the new names in `report` and `compare` (paired
with a new run), in the gates, in a labels file and in the Python API, with a note naming the
new key."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

from localeval.api import EvalResults
from localeval.cli import main
from localeval.labels.store import read_labels
from localeval.models.embed import HashEmbedder
from localeval.names import (
    COSINE,
    GREEDY,
    WEIGHTED,
    OldScoreKeyWarning,
    current_key,
    current_scores,
    same_as_headline,
)
from localeval.report.compare import compare_runs
from localeval.results.folder import load_run

OLD_KEYS = {"faithfulness.soft", "helpful.raw", "answer_similarity.raw",
            "context_relevance.context_supported_precision.soft"}


def test_each_old_key_has_one_new_name_and_new_keys_stay() -> None:
    assert current_key("faithfulness.soft") == "faithfulness" + WEIGHTED
    assert current_key("refusal.soft") == "refusal.weighted"
    assert current_key("helpful.raw") == "helpful" + GREEDY  # a rubric's greedy level
    assert current_key("answer_similarity.raw") == "answer_similarity" + COSINE
    assert current_key("context_relevance.context_supported_precision.soft") == \
        "context_relevance.context_supported_precision.weighted"
    for key in ("faithfulness", "faithfulness.weighted", "helpful.greedy", "raw", "soft",
                "mrr@10", "answer_relevance.completeness"):
        assert current_key(key) == key
    # a record holding both names (a hand-merged file): the new one wins
    assert current_scores({"f.soft": 0.1, "f.weighted": 0.2}) == {"f.weighted": 0.2}


def _record(sid: str, line: int, scores: dict[str, float | None]) -> dict[str, Any]:
    return {"id": sid, "line": line, "language": "en", "question": f"question {sid}?",
            "answer": f"answer {sid}.", "input_hash": f"h{sid}", "scores": scores}


def _folder(path: Path, records: list[dict[str, Any]]) -> Path:
    """A run folder as localeval writes it: results.jsonl and summary.json (its metrics under the
    records' keys, as the version that wrote them named them)."""
    path.mkdir()
    (path / "results.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    keys = list(dict.fromkeys(k for r in records for k in r["scores"]))
    metrics = {k: {"metric": k.split(".")[0], "mean": None, "count": 0} for k in keys}
    (path / "summary.json").write_text(json.dumps({"metrics": metrics}), encoding="utf-8")
    return path


OLD = [  # how localeval wrote them before the rename
    _record("s1", 1, {"faithfulness": 1.0, "faithfulness.soft": 0.9, "helpful": 0.75,
                      "helpful.raw": 1.0, "answer_similarity": 0.5, "answer_similarity.raw": 0.9}),
    _record("s2", 2, {"faithfulness": 0.5, "faithfulness.soft": 0.4, "helpful": 0.25,
                      "helpful.raw": 0.0, "answer_similarity": 0.2, "answer_similarity.raw": 0.7}),
]
NEW = [
    _record("s1", 1, {"faithfulness": 1.0, "faithfulness.greedy": 1.0,
                      "faithfulness.weighted": 0.95, "helpful": 0.8, "helpful.greedy": 1.0,
                      "helpful.weighted": 0.8, "answer_similarity": 0.5,
                      "answer_similarity.cosine": 0.9}),
    _record("s2", 2, {"faithfulness": 1.0, "faithfulness.greedy": 1.0,
                      "faithfulness.weighted": 0.6, "helpful": 0.5, "helpful.greedy": 0.5,
                      "helpful.weighted": 0.5, "answer_similarity": 0.4,
                      "answer_similarity.cosine": 0.8}),
]


def test_an_old_run_folder_reads_under_the_new_names(tmp_path: Path) -> None:
    old = load_run(_folder(tmp_path / "old", OLD))
    keys = list(old.summary["metrics"])
    assert keys == ["faithfulness", "faithfulness.weighted", "helpful", "helpful.greedy",
                    "answer_similarity", "answer_similarity.cosine"]
    assert old.summary["metrics"]["faithfulness.weighted"]["mean"] == pytest.approx(0.65)
    assert old.summary["metrics"]["helpful.greedy"]["mean"] == pytest.approx(0.5)
    assert [r.scores["answer_similarity.cosine"] for r in old.records] == [0.9, 0.7]


def test_report_renders_an_old_run_folder_under_the_new_names(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = _folder(tmp_path / "old", OLD)
    assert main(["report", str(old)]) == 0
    out = capsys.readouterr().out
    for text in (out, (old / "report.md").read_text(encoding="utf-8"),
                 (old / "report.html").read_text(encoding="utf-8")):
        assert "faithfulness.weighted" in text and "helpful.greedy" in text
        assert "answer_similarity.cosine" in text
        assert ".soft" not in text and ".raw" not in text
    assert "0.650" in out  # faithfulness.weighted's mean, recomputed from results.jsonl


def test_compare_pairs_an_old_run_with_a_new_one(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    old, new = _folder(tmp_path / "old", OLD), _folder(tmp_path / "new", NEW)
    rows = {r.key: r for r in compare_runs(old, new).rows}
    assert not OLD_KEYS & set(rows)
    for key, diff in (("faithfulness.weighted", 0.125), ("helpful.greedy", 0.25),
                      ("answer_similarity.cosine", 0.05), ("helpful", 0.15)):
        assert rows[key].n == 2 and rows[key].only_a == rows[key].only_b == 0, key
        assert rows[key].diff == pytest.approx(diff), key
    # the keys an old run did not write twice are B's only
    assert rows["faithfulness.greedy"].n == 0 and rows["faithfulness.greedy"].only_b == 2
    # a gate under the old name gates the new key, with a note naming it
    assert main(["compare", str(old), str(new), "--max-drop", "faithfulness.soft=0.5"]) == 0
    err = capsys.readouterr().err
    assert "'faithfulness.soft' is the old name of 'faithfulness.weighted'" in err


def test_fail_under_with_an_old_name_gates_the_new_key(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = _folder(tmp_path / "old", OLD)
    assert main(["report", str(old), "--fail-under", "faithfulness.soft=0.6"]) == 0
    err = capsys.readouterr().err
    assert "note: --fail-under faithfulness.soft=0.6: 'faithfulness.soft' is the old name of " \
           "'faithfulness.weighted'" in err
    assert main(["report", str(old), "--fail-under", "helpful.raw=0.6"]) == 1
    captured = capsys.readouterr()
    assert "gate failed: helpful.greedy mean 0.5000 < 0.6" in captured.out + captured.err


def test_labels_naming_an_old_key_label_the_new_one(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(json.dumps({"id": "s1", "metric": "faithfulness.soft", "label": 1}) + "\n"
                    + json.dumps({"id": "s2", "metric": "faithfulness", "label": 0}) + "\n",
                    encoding="utf-8")
    read = read_labels(path)
    assert sorted(k[1] for k in read.labels) == ["faithfulness", "faithfulness.weighted"]
    (note,) = [n for n in read.notes(path) if "old name" in n]
    assert "'faithfulness.soft' is the old name of 'faithfulness.weighted'" in note
    assert "(1 label(s))" in note


def test_the_api_reads_an_old_name_with_a_warning(tmp_path: Path) -> None:
    folder = load_run(_folder(tmp_path / "new", NEW))
    results = EvalResults(records=list(folder.records), summary=folder.summary)
    with pytest.warns(OldScoreKeyWarning, match="'faithfulness.weighted'"):
        assert results.mean("faithfulness.soft") == pytest.approx(0.775)
    with pytest.warns(OldScoreKeyWarning, match="'answer_similarity.cosine'"):
        assert results.scores("answer_similarity.raw") == {"s1": 0.9, "s2": 0.8}
    with pytest.warns(OldScoreKeyWarning, match="'helpful.greedy'"):
        assert results.check({"helpful.raw": 0.8}) == [
            "gate failed: helpful.greedy mean 0.7500 < 0.8 (n=2) (fail_under helpful.greedy=0.8)"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert results.mean("faithfulness.weighted") == pytest.approx(0.775)  # no warning


def test_the_summary_table_hides_a_sub_key_that_reads_as_its_headline(tmp_path: Path) -> None:
    from localeval.cli.common import summary_table

    summary = load_run(_folder(tmp_path / "new", NEW)).summary
    # faithfulness.greedy and helpful.weighted equal their headlines on every sample
    assert same_as_headline(summary["metrics"]) == ["faithfulness.greedy", "helpful.weighted"]
    table = summary_table(summary)
    rows = [ln.split()[0] for ln in table.splitlines()[1:-2]]
    assert rows == ["faithfulness", "faithfulness.weighted", "helpful", "helpful.greedy",
                    "answer_similarity", "answer_similarity.cosine"]
    assert ("not shown, each the same as its headline: faithfulness.greedy, helpful.weighted"
            in table)


def test_assert_scores_reads_an_old_name_with_a_warning() -> None:
    from localeval.testing import assert_scores

    rows = [{"id": "a", "question": "Where is Paris?", "answer": "Paris is in France.",
             "ground_truth": "Paris is in France."}]
    with pytest.warns(OldScoreKeyWarning, match="'answer_similarity.cosine'"):
        results = assert_scores(rows, {"answer_similarity.raw": 0.5}, embedder=HashEmbedder(),
                                no_cache=True)
    assert results.records[0].scores["answer_similarity.cosine"] == pytest.approx(1.0)
