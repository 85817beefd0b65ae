"""TREC qrels/run files and the ``retrieval`` subcommand, checked against pytrec_eval."""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from localeval.cli import retrieval as retrieval_cli
from localeval.retrieval import evaluate
from localeval.retrieval.trec import (
    TrecFormatError,
    parse_qrels,
    parse_run,
    rank,
    read_qrels,
    read_run,
)


def numbered(text: str) -> list[tuple[int, list[str]]]:
    return [
        (i, ln.split())
        for i, ln in enumerate(text.splitlines(), 1)
        if ln.split() and not ln.startswith("#")
    ]


def write(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)


def cli(*argv: str) -> int:
    return retrieval_cli.main(["retrieval", *argv])


# --------------------------------------------------------------------------- reading


def test_read_qrels(tmp_path: Path) -> None:
    path = write(tmp_path / "q.txt", "# judged\n1 0 a 2\n\n1 0 b 0\n2 Q0 c 1\n1 0 a 2\n")
    assert read_qrels(path) == {"1": {"a": 2, "b": 0}, "2": {"c": 1}}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1 0 a 1\n1 0 b\n", r"q.txt:2: malformed qrels line"),
        ("1 0 a 1 extra\n", r"q.txt:1: malformed qrels line"),
        ("1 0 a 1\n\n1 0 b high\n", r"q.txt:3: relevance grade 'high' is not an integer"),
        ("1 0 a 1\n1 0 a 2\n", r"q.txt:2: doc 'a' of query '1' is judged twice"),
    ],
)
def test_bad_qrels_name_the_line(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(TrecFormatError, match=message):
        read_qrels(write(tmp_path / "q.txt", text))


def test_read_run_keeps_best_rank_of_repeats(tmp_path: Path) -> None:
    path = write(
        tmp_path / "r.txt",
        "1 Q0 a 1 0.5 tagA\n1 Q0 b 2 0.9 tagA\n1 Q0 a 3 0.7 tagA\n2 Q0 c 1 -1e3\n1 Q0 b 9 0.1 x\n",
    )
    run = read_run(path)
    assert run.scores == {"1": {"a": 0.7, "b": 0.9}, "2": {"c": -1000.0}}
    assert run.duplicates == [(3, "1", "a"), (5, "1", "b")]
    assert run.run_id == "x"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1 Q0 a 1 0.5 t\n1 Q0 b 2\n", r"r.txt:2: malformed run line"),
        ("1 Q0 a 1 high t\n", r"r.txt:1: score 'high' is not a number"),
        ("1 Q0 a 1 nan t\n", r"r.txt:1: score 'nan' is not a number"),
    ],
)
def test_bad_run_names_the_line(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(TrecFormatError, match=message):
        read_run(write(tmp_path / "r.txt", text))


def test_missing_and_undecodable_files(tmp_path: Path) -> None:
    with pytest.raises(TrecFormatError, match="qrels file not found"):
        read_qrels(tmp_path / "nope.txt")
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"1 0 a 1\n1 0 \xff 1\n")
    with pytest.raises(TrecFormatError, match="not valid UTF-8"):
        read_qrels(bad)


def test_rank_breaks_ties_by_docid_descending() -> None:
    assert rank({"b": 0.1, "a": 0.1 + 1e-12}) == ["b", "a"]  # equal as 32-bit floats
    assert rank({"a": 1.0, "b": 1.0, "c": 2.0, "d1": 1.0, "d10": 1.0}) == [
        "c",
        "d10",
        "d1",
        "b",
        "a",
    ]


def test_tie_breaking_matches_pytrec_eval() -> None:
    """All scores equal: where trec_eval puts each relevant doc tells its order."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rng = random.Random(5)
    pool = ["a", "b", "B", "a1", "a10", "a2", "é", "z", "Z9", "10", "9", "-x"]
    for _ in range(200):
        docs = rng.sample(pool, rng.randint(2, len(pool)))
        scores = {d: rng.choice((1, 1, 2)) + rng.choice((0, 1e-9, 1e-6)) for d in docs}
        target = rng.choice(docs)
        qrels = {"q": {target: 1}}
        ref = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate({"q": scores})
        assert 1 / ref["q"]["recip_rank"] == pytest.approx(rank(scores).index(target) + 1)
        assert evaluate(qrels, {"q": scores}, metrics=["mrr"])["q"]["mrr"] == pytest.approx(
            ref["q"]["recip_rank"], abs=1e-12
        )


def test_parse_functions_take_numbered_lines() -> None:
    assert parse_qrels(numbered("q 0 a 1\n")) == {"q": {"a": 1}}
    assert parse_run(numbered("q Q0 a 1 2.5 t\n")).scores == {"q": {"a": 2.5}}


# --------------------------------------------------------------------------- the subcommand


def trec_files(tmp_path: Path, n: int = 300, seed: int = 3) -> tuple[str, str, dict, dict]:
    """Files with graded qrels, tied scores, a shuffled rank column, missing/unjudged queries."""
    rng = random.Random(seed)
    pool = [f"D{i}" for i in range(60)]
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(n):
        judged = rng.sample(pool, rng.randint(1, 20))
        grades = [rng.choice((0, 1, 2)) for _ in judged]
        grades[0] = max(grades[0], 1)
        qrels[str(q)] = dict(zip(judged, grades, strict=True))
        if q % 25 != 4:
            docs = rng.sample(pool, rng.randint(1, 40))
            run[str(q)] = {d: rng.randint(0, 20) / 10 + rng.choice((0, 1e-9)) for d in docs}
    run["extra"] = {"D1": 1.0}
    q_lines = [f"{q} 0 {d} {g}" for q, js in qrels.items() for d, g in js.items()]
    r_lines = [
        f"{q} Q0 {d} {rng.randint(1, 99)} {s} myrun" for q, ds in run.items() for d, s in ds.items()
    ]
    rng.shuffle(r_lines)  # trec_eval does not need any order
    qp = write(tmp_path / "qrels.txt", "\n".join(q_lines) + "\n")
    rp = write(tmp_path / "run.txt", "\n".join(r_lines) + "\n")
    return qp, rp, qrels, run


def test_subcommand_prints_trec_eval_means(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qp, rp, qrels, run = trec_files(tmp_path)
    measures = {"map", "recip_rank", "ndcg", "set_P", "set_recall", "P.5,10", "ndcg_cut.5,10"}
    ref = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    pairs = {
        "map": "average_precision",
        "recip_rank": "mrr",
        "ndcg": "ndcg",
        "set_P": "precision",
        "set_recall": "recall",
        "P_5": "precision@5",
        "P_10": "precision@10",
        "ndcg_cut_5": "ndcg@5",
        "ndcg_cut_10": "ndcg@10",
    }
    # trec_eval -c: queries of the qrels missing from the run count as 0 in the mean
    want = {ours: sum(r[t] for r in ref.values()) / len(qrels) for t, ours in pairs.items()}

    assert cli("--qrels", qp, "--run", rp, "--at", "5,10", "--format", "json") == 0
    out = capsys.readouterr()
    doc = json.loads(out.out)
    for name, value in want.items():
        assert doc["means"][name] == pytest.approx(value, abs=1e-9), name
    assert doc["scored"] == len(qrels)
    assert doc["missing_from_run_scored_0"] == [q for q in qrels if q not in run]
    assert doc["not_in_qrels_ignored"] == ["extra"]
    assert "of the qrels missing from the run, scored 0: 4, 29," in out.err

    assert cli("--qrels", qp, "--run", rp, "--at", "5,10") == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["metric", "mean", "queries"]
    shown = {ln.split()[0]: ln.split()[1] for ln in table[1:]}
    for name, value in want.items():  # trec_eval prints 4 decimals too
        assert shown[name] == f"{value:.4f}"


def test_subcommand_json_file_and_per_query(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qp = write(tmp_path / "q", "1 0 a 1\n1 0 b 1\n2 0 c 0\n")
    rp = write(tmp_path / "r", "1 Q0 b 1 3 t\n1 Q0 x 2 2 t\n1 Q0 a 3 1 t\n1 Q0 a 4 0 t\n")
    out_json = tmp_path / "out.json"
    rc = cli(
        "--qrels", qp, "--run", rp, "--metrics", "mrr,recall", "--per-query", "--json",
        str(out_json),
    )  # fmt: skip
    assert rc == 0
    out = capsys.readouterr()
    lines = out.out.splitlines()
    assert lines[:3] == [
        "metric    mean  queries",
        "mrr     1.0000        1",
        "recall  1.0000        1",
    ]
    assert lines[4].split() == ["query", "mrr", "recall"]
    assert lines[5].split() == ["1", "1.0000", "1.0000"]
    assert lines[6].split() == ["2", "-", "-"]
    assert "note: 1 query without a relevant doc, not scored: 2\n" in out.err
    assert "1 repeated docids" in out.err
    doc = json.loads(out_json.read_text())
    assert doc["per_query"] == {
        "1": {"mrr": 1.0, "recall": 1.0},
        "2": {"mrr": None, "recall": None},
    }
    assert doc["skipped_no_relevant"] == ["2"]
    assert doc["repeated_ids_in_run"] == 1


@pytest.mark.parametrize(
    ("files", "extra", "message"),
    [
        (("1 0 a 1\n", None), (), "error: run file not found: "),
        (("1 0 a 1\n1 0 b\n", "1 Q0 a 1 1 t\n"), (), "qrels:2: malformed qrels line"),
        (("1 0 a 1\n", "1 Q0 a 1 1 t\n1 Q0 a\n"), (), "run:2: malformed run line"),
        (("1 0 a 1\n", "1 Q0 a 1 1 t\n"), ("--metrics", "ndgc"), "did you mean 'ndcg'"),
        (("1 0 a 1\n", "1 Q0 a 1 1 t\n"), ("--at", "5,x"), "--at: 'x' is not a positive"),
        (("1 0 a 1\n", "1 Q0 a 1 1 t\n"), ("--at", "0"), "cutoff must be a positive integer"),
    ],
)
def test_subcommand_errors_are_one_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    files: tuple[str, str | None],
    extra: tuple[str, ...],
    message: str,
) -> None:
    qp = write(tmp_path / "qrels", files[0])
    rp = str(tmp_path / "run") if files[1] is None else write(tmp_path / "run", files[1])
    assert cli("--qrels", qp, "--run", rp, *extra) == 2
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err.count("\n") == 1
    assert message in out.err


def test_add_parser_registers_on_a_foreign_parser() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    retrieval_cli.add_parser(sub)
    args = parser.parse_args(["retrieval", "--qrels", "q", "--run", "r", "--at", "5"])
    assert args.func is retrieval_cli.run_retrieval
    assert args.retrieval_gain == "linear"
    assert args.retrieval_at == "5"


def test_no_model_library_is_imported() -> None:
    code = (
        "import sys; import localeval.retrieval, localeval.retrieval.trec, "
        "localeval.cli.retrieval; "
        "heavy = {'torch', 'llama_cpp', 'sentence_transformers'} & set(sys.modules); "
        "sys.exit(sorted(heavy) or 0)"
    )
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
