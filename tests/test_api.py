"""The Python API `localeval.evaluate(...)`: the same path as the CLI, an EvalResults with
records, summary, gates and to_pandas(); plus the progress bar (a terminal only)."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

import localeval
from localeval.cli import main
from localeval.errors import ConfigError, DatasetError, UsageError
from localeval.judge.fake import FakeJudge
from localeval.models.embed import HashEmbedder
from localeval.progress import Progress
from tests.conftest import fake_run_args

STATEMENTS = {"statements": [["Paris is the capital of France."], ["Paris has 90 million people."]]}
VERDICTS = {
    "verdicts": [
        {"reason": "context 1 says so", "verdict": 1},
        {"reason": "the contexts give no population", "verdict": 0},
    ]
}
ROWS = [
    {
        "id": f"r{i}",
        "question": "What is the capital of France?",
        "answer": "Paris is the capital of France. It has 90 million people.",
        "contexts": ["Paris is the capital and largest city of France."],
        "ground_truth": "Paris.",
    }
    for i in range(3)
]


def fake_answers(n: int) -> dict[str, list[dict]]:
    return {"faithfulness_statements": [STATEMENTS] * n, "faithfulness_verdicts": [VERDICTS] * n}


def test_lazy_export() -> None:
    assert localeval.evaluate.__module__ == "localeval.api"
    with pytest.raises(AttributeError):
        localeval.no_such_thing  # noqa: B018


def test_evaluate_rows_returns_records_summary_and_frame(tmp_path: Path) -> None:
    res = localeval.evaluate(
        ROWS,
        metrics=["faithfulness", "answer_similarity"],
        claims="statements",
        judge=FakeJudge(fake_answers(3)),
        embedder=HashEmbedder(),
        no_cache=True,
    )
    assert [r.id for r in res.records] == ["r0", "r1", "r2"]
    assert res.mean("faithfulness") == 0.5 and res.metrics["faithfulness"]["count"] == 3
    assert res.scores("faithfulness") == {"r0": 0.5, "r1": 0.5, "r2": 0.5}
    statements = res.records[0].details["faithfulness"]["statements"]
    assert statements[1]["verdict"] == 0 and "not in the context: 90" in statements[1]["reason"]
    assert res.errors == [] and res.out_dir is None
    assert res.check({"faithfulness": 0.5}) == []
    assert res.check({"faithfulness": 0.9}) == [
        "gate failed: faithfulness mean 0.5000 < 0.9 (n=3) (fail_under faithfulness=0.9)"
    ]
    with pytest.raises(UsageError, match="did you mean 'faithfulness'"):
        res.mean("faithfulnes")
    frame = res.to_pandas()
    assert list(frame.columns[:7]) == [
        "id",
        "line",
        "language",
        "question",
        "answer",
        "faithfulness",
        "answer_similarity",
    ]
    assert frame["faithfulness"].tolist() == [0.5, 0.5, 0.5]
    assert "faithfulness=0.500" in repr(res)


def test_api_and_cli_take_the_same_path(tmp_path: Path) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps(fake_answers(3)), encoding="utf-8")
    args = fake_run_args(data, answers, tmp_path / "cli", metrics="faithfulness,answer_similarity")
    assert main(args) == 0
    res = localeval.evaluate(
        data,
        metrics="faithfulness,answer_similarity",
        claims="statements",
        judge="fake",
        fake_answers=answers,
        no_cache=True,
        out=tmp_path / "api",
    )
    cli_lines = (tmp_path / "cli" / "results.jsonl").read_text().splitlines()
    api_lines = (tmp_path / "api" / "results.jsonl").read_text().splitlines()
    assert cli_lines == api_lines
    assert [json.loads(x) for x in api_lines] == [r.model_dump(mode="json") for r in res.records]
    assert (tmp_path / "api" / "report.html").exists()
    cli_summary = json.loads((tmp_path / "cli" / "summary.json").read_text())
    assert cli_summary["metrics"] == res.summary["metrics"]


def test_errors_and_bad_rows_are_reported_not_raised() -> None:
    rows = [
        *ROWS[:1],
        {"id": "bad", "question": 3},
        {"id": "no-ctx", "question": "q", "answer": "a"},
    ]
    res = localeval.evaluate(
        rows, metrics=["faithfulness"],
            claims="statements", judge=FakeJudge(fake_answers(1)), no_cache=True
    )
    assert [p.line for p in res.problems] == [2]
    assert [r.id for r in res.records] == ["r0", "no-ctx"]
    assert "contexts" in res.records[1].skipped["faithfulness"]
    frame = res.to_pandas()
    assert frame.loc[1, "skipped.faithfulness"].startswith("needs")


def test_bad_arguments_are_clear_errors() -> None:
    with pytest.raises(ConfigError, match="Judge protocol"):
        localeval.evaluate(ROWS, metrics=["faithfulness"], claims="statements", judge=object())
    with pytest.raises(ConfigError, match="n_ctx"):
        localeval.evaluate(ROWS, metrics=["faithfulness"],
            claims="statements", judge=FakeJudge([]), n_ctx=10)
    with pytest.raises(ConfigError, match="no_such_setting"):
        localeval.evaluate(ROWS, judge=FakeJudge([]), no_such_setting=1)
    with pytest.raises(DatasetError, match="list of dicts"):
        localeval.evaluate({"question": "q"}, judge=FakeJudge([]))
    with pytest.raises(UsageError, match="did you mean"):
        localeval.evaluate(ROWS, metrics=["faithfulnes"], judge=FakeJudge([]))


# The README's example, with the fake judge in place of the local model.
def my_rag_pipeline(question: str) -> tuple[str, list[str]]:
    contexts = ["Paris is the capital and largest city of France."]
    return "Paris is the capital of France. It has 90 million people.", contexts


def test_readme_style_quality_gate() -> None:
    questions = ["What is the capital of France?", "Which city is France's capital?"]
    rows = []
    for q in questions:
        answer, contexts = my_rag_pipeline(q)
        rows.append({"question": q, "answer": answer, "contexts": contexts})
    results = localeval.evaluate(
        rows, metrics=["faithfulness"],
            claims="statements", judge=FakeJudge(fake_answers(2)), no_cache=True
    )
    failures = results.check({"faithfulness": 0.8})
    assert failures and "faithfulness mean 0.5000 < 0.8" in failures[0]  # the pipeline invents


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    class Stats:
        calls, cached, completion_tokens = 7, 2, 140

    tty = FakeTTY()
    monkeypatch.setattr(sys, "stderr", tty)
    bar = Progress(4, done=1, stats=lambda: Stats)
    for _ in range(3):
        bar.advance()
    bar.close()
    text = tty.getvalue()
    assert "4/4" in text and "judge calls=7" in text and "cached=2" in text and "tok/s=" in text
    pipe = io.StringIO()
    monkeypatch.setattr(sys, "stderr", pipe)
    quiet = Progress(4, stats=lambda: Stats)
    quiet.advance()
    quiet.close()
    assert pipe.getvalue() == "" and not quiet.enabled
    assert not Progress(4, enabled=False).enabled


# ---- data in, data out: DataFrames, datasets, ragas names (issue 19, item 3) -----------------

RAGAS_ROWS = [
    {
        "user_input": r["question"],
        "response": r["answer"],
        "retrieved_contexts": r["contexts"],
        "reference": r["ground_truth"],
        "reference_contexts": r["contexts"],
    }
    for r in ROWS
]
PROBED_VERDICTS = {**VERDICTS, "_probs": [["verdict", {"1": 0.9, "0": 0.1}],
                                          ["verdict", {"1": 0.2, "0": 0.8}]]}


def round_trip(data: object) -> localeval.EvalResults:
    answers = {"faithfulness_statements": [STATEMENTS] * 3,
               "faithfulness_verdicts": [PROBED_VERDICTS] * 3}
    return localeval.evaluate(data, metrics=["faithfulness", "answer_similarity"],
                              claims="statements", judge=FakeJudge(answers),
                              embedder=HashEmbedder(), no_cache=True)


def check_round_trip(res: localeval.EvalResults) -> None:
    assert [r.id for r in res.records] == ["row-1", "row-2", "row-3"] and not res.problems
    assert res.records[0].question == "What is the capital of France?"
    frame = res.to_pandas(details=True)
    assert len(frame) == 3
    assert {"faithfulness", "faithfulness.weighted", "answer_similarity"} <= set(frame.columns)
    assert frame["faithfulness"].tolist() == [0.5] * 3
    # (0.9 + 0) / 2: "90 million" is not in the context, so the check settles that claim at 0
    # whatever its P (0.2) and τ (issue 53.15: .soft does not move with τ)
    assert frame["faithfulness.weighted"].tolist() == pytest.approx([0.45] * 3)
    statements = frame.loc[0, "details.faithfulness"]["statements"]
    assert [s["verdict"] for s in statements] == [1, 0]
    assert res.details["row-1"]["faithfulness"]["statements"][1]["verdict"] == 0
    assert res.judge_calls == 6  # statements + verdicts per sample


def test_ragas_column_names_as_a_list_of_dicts() -> None:
    res = round_trip(RAGAS_ROWS)
    check_round_trip(res)
    assert res.records[0].answer == ROWS[0]["answer"]


def test_a_pandas_dataframe_with_numpy_cells_and_nan() -> None:
    pd = pytest.importorskip("pandas")
    np = pytest.importorskip("numpy")
    frame = pd.DataFrame(RAGAS_ROWS)
    frame["retrieved_contexts"] = [np.array(c, dtype=object) for c in frame["retrieved_contexts"]]
    frame["extra"] = [1.5, float("nan"), None]  # a missing cell is not an error
    check_round_trip(round_trip(frame))


class FakeHFDataset:
    """What localeval uses of a Hugging Face `datasets.Dataset`: iteration and to_list()."""

    def __init__(self, rows: list[dict]) -> None:
        self.rows = rows

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.rows)

    def to_list(self) -> list[dict]:
        return [dict(r) for r in self.rows]


class OnlyToPandas:
    def __init__(self, rows: list[dict]) -> None:
        self.rows = rows

    def to_pandas(self):  # type: ignore[no-untyped-def]
        import pandas as pd

        return pd.DataFrame(self.rows)


def test_a_duck_typed_dataset_and_a_to_pandas_table() -> None:
    check_round_trip(round_trip(FakeHFDataset(RAGAS_ROWS)))
    pytest.importorskip("pandas")
    check_round_trip(round_trip(OnlyToPandas(RAGAS_ROWS)))


def test_a_hugging_face_dataset() -> None:
    datasets = pytest.importorskip("datasets")
    pa = pytest.importorskip("pyarrow")
    # an explicit fingerprint: Dataset.from_list's hashing fails with pyarrow 26 (datasets 5.2)
    table = datasets.Dataset(pa.Table.from_pylist(RAGAS_ROWS), fingerprint="ragas-rows")
    check_round_trip(round_trip(table))


def test_a_bad_row_in_a_dataframe_names_its_row() -> None:
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame([*RAGAS_ROWS[:2], {"user_input": "q", "retrieved_contexts": 3}])
    res = round_trip(frame)
    assert [p.line for p in res.problems] == [3]
    assert "must be a list" in res.problems[0].message


def test_to_pandas_without_pandas_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    res = round_trip(RAGAS_ROWS)
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(localeval.api.LocalevalError, match="pip install pandas"):
        res.to_pandas()


def test_a_pyarrow_table() -> None:
    pa = pytest.importorskip("pyarrow")
    check_round_trip(round_trip(pa.Table.from_pylist(RAGAS_ROWS)))
