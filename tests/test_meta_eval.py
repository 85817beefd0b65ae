"""meta-eval: statistics against hand-computed values, the input formats, the dev-set
converters (scripts/provenance/convert.py) on the real files, the CLI end to end with the fake
judge (pairs won, tied and lost on purpose), partial results after Ctrl-C and --resume."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from localeval.cli import main
from localeval.config import Settings
from localeval.errors import DatasetError, UsageError
from localeval.judge.fake import FakeJudge
from localeval.judge.interface import JudgeRequest
from localeval.meta_eval import formats, stats
from localeval.meta_eval.run import evaluate
from scripts.provenance import convert
from tests.conftest import SHARED

DEV = SHARED / "data" / "dev"


# ---- statistics ----------------------------------------------------------------------------


def test_cohen_kappa_of_a_hand_computed_2x2() -> None:
    # judge 1 / human 1: 20, judge 0 / human 1: 5, judge 1 / human 0: 10, both 0: 15
    judge = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    human = [1] * 25 + [0] * 25
    # p_o = 35/50 = 0.7; p_e = 0.6 · 0.5 + 0.4 · 0.5 = 0.5 → kappa = 0.2 / 0.5 = 0.4
    assert stats.cohen_kappa(judge, human) == pytest.approx(0.4)
    assert stats.cohen_kappa(human, human) == pytest.approx(1.0)
    assert stats.cohen_kappa([1, 0], [0, 1]) == pytest.approx(-1.0)
    assert stats.cohen_kappa([1, 1], [1, 1]) is None  # chance agreement 1: undefined
    assert stats.cohen_kappa([], []) is None


def test_pair_outcome_wins_ties_losses_and_unscored() -> None:
    assert stats.pair_outcome(0.9, 0.1) == 1.0
    assert stats.pair_outcome(0.5, 0.5) == 0.5
    assert stats.pair_outcome(0.1, 0.9) == 0.0
    assert stats.pair_outcome(None, 0.2) == 0.0 and stats.pair_outcome(1.0, None) == 0.0


def test_ranks_auroc_spearman_kendall_by_hand() -> None:
    assert stats.average_ranks([3, 1, 1, 2]).tolist() == [4.0, 1.5, 1.5, 3.0]
    # positives 0.9, 0.8 vs negatives 0.8, 0.1: 1 + 1 + ½ + 1 of 4 pairs
    assert stats.auroc([0.9, 0.8, 0.8, 0.1], [1, 0, 1, 0]) == pytest.approx(0.875)
    assert stats.auroc([0.3, 0.4], [1, 1]) is None  # one class only
    # d = 0, 1, 1, 0 → 1 − 6·2 / (4·15)
    assert stats.spearman([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(0.8)
    assert stats.spearman([1, 1, 1], [1, 2, 3]) is None
    # one discordant pair of six
    assert stats.kendall_tau_b([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(4 / 6)
    # tau-b with ties: concordant 4, discordant 0, 5 untied pairs on each side → 4 / 5
    assert stats.kendall_tau_b([1, 2, 2, 3], [1, 2, 3, 3]) == pytest.approx(0.8)
    assert stats.kendall_tau_b([1, 1], [1, 2]) is None


def test_kendall_in_blocks_matches_the_pairwise_definition(monkeypatch: pytest.MonkeyPatch) -> None:
    x = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5]
    y = [2, 7, 1, 8, 2, 8, 1, 8, 2, 8, 4]
    pairs = [(i, j) for i in range(len(x)) for j in range(i + 1, len(x))]
    sgn = [((x[i] > x[j]) - (x[i] < x[j]), (y[i] > y[j]) - (y[i] < y[j])) for i, j in pairs]
    expected = (
        sum(a * b for a, b in sgn)
        / (sum(a != 0 for a, _ in sgn) * sum(b != 0 for _, b in sgn)) ** 0.5
    )
    assert stats.kendall_tau_b(x, y) == pytest.approx(expected)
    monkeypatch.setattr(stats, "BLOCK", 3)  # several blocks, one of them short
    assert stats.kendall_tau_b(x, y) == pytest.approx(expected)


def test_bootstrap_is_seeded_and_brackets_the_statistic() -> None:
    values = [1.0, 0.0, 0.5, 1.0, 1.0, 0.0, 1.0]
    ci = stats.bootstrap_ci(stats.mean, values)
    assert ci == stats.bootstrap_ci(stats.mean, values)  # fixed seed
    assert ci is not None and ci[0] < sum(values) / len(values) < ci[1]
    assert stats.bootstrap_ci(stats.mean, [1.0, 1.0, 1.0]) == (1.0, 1.0)
    assert stats.bootstrap_ci(stats.mean, [1.0]) is None
    auc = stats.bootstrap_ci(stats.auroc, [0.9, 0.8, 0.7, 0.2, 0.1], [1, 1, 0, 0, 0])
    assert auc is not None and auc[1] == 1.0


# ---- input formats -------------------------------------------------------------------------


def pair(pid: str, a: str, b: str, preferred: str = "a", **extra: Any) -> dict[str, Any]:
    base = {"question": f"What about {pid}?", "contexts": [f"The context of {pid}."]}
    return {
        "pair_id": pid,
        "a": {**base, "answer": a},
        "b": {**base, "answer": b},
        "preferred": preferred,
        **extra,
    }


def write_jsonl(path: Path, lines: list[Any]) -> Path:
    path.write_text(
        "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines),
        encoding="utf-8",
    )
    return path


def test_bad_lines_are_named_and_the_rest_loads(tmp_path: Path) -> None:
    bad_row = pair("p3", "x", "y")
    bad_row["b"]["contexts"] = "not a list"
    data = write_jsonl(
        tmp_path / "p.jsonl",
        [
            pair("p1", "x", "y"),
            "{broken",
            pair("p2", "x", "y", preferred="both"),
            bad_row,
            pair("p1", "x", "y"),
            {"id": "r", "answer": "a", "label": 1},
            pair("p4", "x", "y", "tie"),
        ],
    )
    loaded = formats.load(data)
    assert loaded.kind == "pairs" and [p.pair_id for p in loaded.pairs] == ["p1", "p4"]
    problems = {p.line: p.message for p in loaded.problems}
    assert sorted(problems) == [2, 3, 4, 5, 6]
    assert "malformed JSON" in problems[2] and "preferred" in problems[3]
    assert "row 'b'" in problems[4] and "contexts" in problems[4]
    assert "duplicate id" in problems[5] and "one file holds one kind" in problems[6]
    rows = formats.runner_rows(loaded.pairs)
    assert [r["id"] for r in rows] == ["p1/a", "p1/b", "p4/a", "p4/b"]


def test_labelled_rows_and_their_errors(tmp_path: Path) -> None:
    data = write_jsonl(
        tmp_path / "r.jsonl",
        [
            {"id": 7, "answer": "a", "contexts": ["c"], "label": 1, "language": "en"},
            {"answer": "b", "contexts": ["c"], "human_score": 2.5},
            {"id": "x", "answer": "c", "label": 2},
            {"id": "y", "answer": "d"},
        ],
    )
    loaded = formats.load(data)
    assert [(r.id, r.label, r.human_score) for r in loaded.rows] == [
        ("7", 1, None),
        ("row-2", None, 2.5),
    ]
    assert formats.runner_rows(loaded.rows)[0] == {"id": "7", "answer": "a", "contexts": ["c"]}
    assert [p.line for p in loaded.problems] == [3, 4]
    with pytest.raises(DatasetError, match="no usable pair"):
        formats.load(write_jsonl(tmp_path / "e.jsonl", ["{"]))


# ---- the dev-set converters on the real files ----------------------------------------------


def need_dev() -> None:
    if not DEV.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"{DEV} missing in CI")
        pytest.skip("../shared/data/dev not present")


def converted(name: str, tmp_path: Path) -> list[dict[str, Any]]:
    need_dev()
    out = tmp_path / f"{name}.jsonl"
    n = convert.convert(name, DEV, out)
    lines = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert n == len(lines)
    assert formats.load(out).problems == []  # the converted file is valid meta-eval input
    return lines


def test_convert_halueval(tmp_path: Path) -> None:
    lines = converted("halueval", tmp_path)
    first = json.loads((DEV / "halueval_qa_dev.jsonl").read_text().splitlines()[0])
    assert len(lines) == 200 and lines[0]["pair_id"] == "halueval-qa-5000"
    assert lines[0]["preferred"] == "a" and lines[0]["language"] == "en"
    assert lines[0]["a"] == {
        "question": first["question"],
        "contexts": [first["knowledge"]],
        "answer": "96.3 Rock Radio",
    }
    assert lines[0]["b"]["answer"] == first["hallucinated_answer"]


def test_convert_uhgeval(tmp_path: Path) -> None:
    lines = converted("uhgeval", tmp_path)
    first = json.loads((DEV / "uhgeval_dev.jsonl").read_text().splitlines()[0])
    assert len(lines) == 200 and lines[0]["pair_id"] == "num_000606"
    a, b = lines[0]["a"], lines[0]["b"]
    assert a["question"] == "请续写这篇新闻。" and lines[0]["language"] == "zh"
    assert a["contexts"] == [(first["newsBeginning"] + first["newsRemainder"]).strip()]
    assert a["answer"].startswith("本月10日，上海男排主场") and b["answer"].startswith("沈琼是")


def test_convert_ragchecker_sums_the_annotators_correctness(tmp_path: Path) -> None:
    lines = converted("ragchecker", tmp_path)
    assert len(lines) == 280
    counts = {k: sum(p["preferred"] == k for p in lines) for k in ("a", "b", "tie")}
    assert counts == {"a": 102, "b": 93, "tie": 85}
    first = lines[0]
    assert first["pair_id"] == "ragchecker-0" and "ground_truth" in first["a"]
    labels = first["meta"]["correctness_labels"]
    assert first["preferred"] == {1: "b", -1: "a", 0: "tie"}[(sum(labels) > 0) - (sum(labels) < 0)]


def test_convert_script_and_missing_source(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    need_dev()
    out = tmp_path / "h.jsonl"
    assert convert.main(["halueval", "--src", str(DEV), "--out", str(out)]) == 0
    assert "200 pairs written" in capsys.readouterr().out
    assert convert.main(["uhgeval", "--src", str(tmp_path), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "uhgeval_dev.jsonl not found" in err


# ---- end to end with the fake judge --------------------------------------------------------

# Each side gets one statement whose verdict decides its faithfulness: 1 → 1.0, 0 → 0.0. Each
# answer is the statement the fake judge writes for it (fake_answers), so the statement stays
# true to its sentence (metrics/claims/split.true_to_sentence) and is judged as written.
PAIRS = [  # (pair, verdict of a, verdict of b): p1 won, p2 tied, p3 lost
    (pair("p1", "the claim-zero.", "the claim-one.", language="en"), 1, 0),
    (pair("p2", "the claim-two.", "the claim-three.", language="en"), 1, 1),
    (pair("p3", "the claim-four.", "the claim-five.", preferred="b", language="zh"), 1, 0),
]


WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]


def fake_answers(verdicts: list[int]) -> dict[str, list[dict[str, Any]]]:
    return {
        "faithfulness_statements": [{"statements": [[f"the claim-{WORDS[i]}."]]}
                                    for i in range(len(verdicts))],
        "faithfulness_verdicts": [
            {
                "verdicts": [
                    {"reason": f"reason {i}: " + ("found" if v else "contradicted"), "verdict": v}
                ]
            }
            for i, v in enumerate(verdicts)
        ],
    }


def all_verdicts(pairs: list[tuple[dict[str, Any], int, int]]) -> list[int]:
    return [v for _, va, vb in pairs for v in (va, vb)]


def pairs_file(tmp_path: Path) -> Path:
    return write_jsonl(
        tmp_path / "pairs.jsonl",
        [*(p for p, _, _ in PAIRS), pair("p4", "x", "y", "tie"), "{broken"],
    )


def test_cli_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps(fake_answers(all_verdicts(PAIRS))), encoding="utf-8")
    out = tmp_path / "run"
    code = main(
        [
            "meta-eval",
            str(pairs_file(tmp_path)),
            "--metrics",
            "faithfulness",
            "--out",
            str(out),
            "--judge",
            "fake",
            "--fake-answers",
            str(answers),
            "--no-cache",
            "--quiet",
            "--n-ctx",
            "2048",  # a run option, passed through
            "--claims",
            "statements",
        ]
    )
    assert code == 0
    printed = capsys.readouterr()
    assert "skipped input line 5: malformed JSON" in printed.err
    table = printed.out.splitlines()
    assert table[0].startswith(
        "meta-eval faithfulness: 3 of 3 pairs judged (4 in the file; 1 without a human preference"
    )
    assert table[1].split() == [
        "group",
        "pairs",
        "accuracy",
        "95%",
        "CI",
        "wins",
        "ties",
        "losses",
        "unscored",
    ]
    assert table[2].split()[:3] == ["all", "3", "0.500"] and table[2].split()[-4:] == [
        "1",
        "1",
        "1",
        "0",
    ]
    assert [ln.split()[0] for ln in table[3:5]] == ["en", "zh"]
    assert "ties count ½" in table[5] and "judge calls 12" in table[5]

    result = json.loads((out / "meta_eval.json").read_text(encoding="utf-8"))
    overall = result["groups"]["all"]
    assert overall["pairwise_accuracy"] == pytest.approx(0.5)
    assert (overall["wins"], overall["ties"], overall["losses"]) == (1, 1, 1)
    assert len(overall["ci95"]) == 2 and overall["ci95"][0] <= 0.5 <= overall["ci95"][1]
    assert result["groups"]["en"]["pairwise_accuracy"] == pytest.approx(0.75)
    assert result["groups"]["zh"]["pairwise_accuracy"] == 0.0
    assert result["status"] == {
        "complete": True,
        "done": 3,
        "selected": 3,
        "in_file": 4,
        "no_preference": 1,
        "input_errors": [result["status"]["input_errors"][0]],
    }
    assert result["disagreements"] == ["p3", "p2"]  # losses first
    assert [p["outcome"] for p in result["pairs"]] == [1.0, 0.5, 0.0]
    assert result["judge"]["calls"] == 12 and result["seconds_per_sample"] is not None
    assert len(result["sessions"]) == 1 and result["sessions"][0]["samples"] == 6
    assert result["settings"]["n_ctx"] == 2048 and result["settings"]["judge"] == "fake"
    ids = [json.loads(x)["id"] for x in (out / "results.jsonl").read_text().splitlines()]
    assert ids == ["p1/a", "p1/b", "p2/a", "p2/b", "p3/a", "p3/b"]

    md = (out / "meta_eval.md").read_text(encoding="utf-8")
    section = md.split("## Disagreements (2)")[1]
    assert section.index("### p3 — loss") < section.index("### p2 — tie")
    assert "people prefer b; a = 1.000, b = 0.000" in section
    assert "✗ statement: the claim-five.; sentence: 1; judge_verdict: 0" in section  # p3/b, why
    assert "the claim-four." in section and "p1 —" not in section
    page = (out / "meta_eval.html").read_text(encoding="utf-8")
    assert "Content-Security-Policy" in page and "the claim-five." in page
    assert "<script" not in page and "http" not in page.split("</head>")[1]


def test_score_key_must_belong_to_the_metrics(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "meta-eval",
            str(pairs_file(tmp_path)),
            "--metrics",
            "faithfulness",
            "--score",
            "answer_correctness",
            "--out",
            str(tmp_path / "o"),
            "--quiet",
        ]
    )
    assert code == 2
    assert "not produced by the metrics run" in capsys.readouterr().err
    out = str(tmp_path / "o")
    assert (
        main(["meta-eval", str(pairs_file(tmp_path)), "--metrics", "faithfulnes", "--out", out])
        == 2
    )
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "did you mean 'faithfulness'" in err


class InterruptingJudge(FakeJudge):
    """Ctrl-C after `after` judge calls."""

    def __init__(self, answers: Any, after: int) -> None:
        super().__init__(answers)
        self.after = after

    async def complete(self, request: JudgeRequest):  # type: ignore[no-untyped-def]
        if len(self.requests) >= self.after:
            raise KeyboardInterrupt
        return await super().complete(request)


def test_partial_results_then_resume(tmp_path: Path) -> None:
    data, out = pairs_file(tmp_path), tmp_path / "run"
    settings = Settings(no_cache=True, claims="statements", metrics=["faithfulness"], parallel=1)
    verdicts = all_verdicts(PAIRS)
    # Ctrl-C after 5 calls: p1 (4 calls) done, p2/a half way
    first = evaluate(data, out, settings, judge=InterruptingJudge(fake_answers(verdicts), 5))
    assert first.interrupted is not None
    partial = json.loads((out / "meta_eval.json").read_text())
    assert partial["status"]["complete"] is False
    assert (partial["status"]["done"], partial["status"]["selected"]) == (1, 3)
    assert partial["groups"]["all"]["pairwise_accuracy"] == 1.0
    assert "PARTIAL" in (out / "meta_eval.md").read_text()

    # the rest: only the four rows not yet judged ask the judge
    judge = FakeJudge(fake_answers(verdicts[2:]))
    done = evaluate(data, out, settings, resume=True, judge=judge)
    assert done.interrupted is None and len(judge.requests) == 8
    final = json.loads((out / "meta_eval.json").read_text())
    assert final["status"]["complete"] is True and final["status"]["done"] == 3
    assert final["groups"]["all"]["pairwise_accuracy"] == pytest.approx(0.5)
    assert [s["samples"] for s in final["sessions"]] == [2, 4]
    # calls started per session (the fifth was cut off by Ctrl-C), summed over the sessions
    assert [s["judge"]["calls"] for s in final["sessions"]] == [5, 8]
    assert final["judge"]["calls"] == 13
    with pytest.raises(UsageError, match="would drop 2 judged"):  # --limit 2 would lose p3
        evaluate(data, out, settings, limit=2, resume=True, judge=FakeJudge([]))
    # another --score on resume judges nothing again; one the metric does not give is refused
    with pytest.raises(UsageError, match="no row has this score; faithfulness gives faith"):
        evaluate(data, out, settings, score="faithfulness.x", resume=True, judge=FakeJudge([]))


def test_limit_judges_the_first_pairs_with_a_preference(tmp_path: Path) -> None:
    data = write_jsonl(
        tmp_path / "p.jsonl", [pair("t0", "x", "y", "tie"), *(p for p, _, _ in PAIRS)]
    )
    judge = FakeJudge(fake_answers(all_verdicts(PAIRS[:2])))
    got = evaluate(
        data,
        tmp_path / "o",
        Settings(no_cache=True, claims="statements", metrics=["faithfulness"]),
        limit=2,
        judge=judge,
    )
    status = got.result.status
    assert (status.done, status.selected, status.in_file, status.no_preference) == (2, 2, 4, 1)
    assert [p.pair_id for p in got.result.pairs or []] == ["p1", "p2"]


def test_labelled_rows_end_to_end(tmp_path: Path) -> None:
    rows = [  # (row, verdicts of its two statements) → faithfulness 1, ½ or 0
        ({"id": "r1", "label": 1, "human_score": 3}, [1, 1]),
        ({"id": "r2", "label": 1, "human_score": 2}, [1, 0]),
        ({"id": "r3", "label": 0, "human_score": 2}, [1, 0]),
        ({"id": "r4", "label": 0, "human_score": 1}, [0, 0]),
        ({"id": "r5", "label": 0, "human_score": 3}, [1, 1]),
    ]
    data = write_jsonl(
        tmp_path / "rows.jsonl",
        [
            {
                **r,
                "question": "q?",
                "answer": "this row makes two claims, one and two.",
                "contexts": ["c"],
            }
            for r, _ in rows
        ],
    )
    answers = {
        "faithfulness_statements": [{"statements": [["this row makes claim one.",
                                                     "this row makes claim two."]]}
                                    for _ in rows],
        "faithfulness_verdicts": [
            {"verdicts": [{"reason": f"why {v}", "verdict": v} for v in vs]} for _, vs in rows
        ],
    }
    got = evaluate(
        data,
        tmp_path / "o",
        Settings(no_cache=True, claims="statements", metrics=["faithfulness"]),
        judge=FakeJudge(answers),
    )
    overall = got.result.groups["all"]
    # scores 1, .5 | .5, 0, 1 — positive/negative pairs: r1 (1, 1, ½), r2 (½, 1, 0) → 4/6
    assert overall.auroc == pytest.approx(4 / 6)
    assert overall.spearman == pytest.approx(stats.spearman([1, 0.5, 0.5, 0, 1], [3, 2, 2, 1, 3]))
    assert overall.spearman == pytest.approx(1.0)
    assert overall.kendall_tau_b == pytest.approx(1.0)
    # cut at 0.5 the judge says 1, 1, 1, 0, 1 against labels 1, 1, 0, 0, 0: agree on 3 of 5;
    # chance agreement 0.8 · 0.4 + 0.2 · 0.6 = 0.44 → kappa (0.6 − 0.44) / 0.56 = 2/7
    assert (overall.base_rate, overall.judge_rate) == pytest.approx((0.4, 0.8))
    assert overall.agreement == pytest.approx(0.6)
    assert overall.kappa == pytest.approx(2 / 7)
    stored = json.loads((tmp_path / "o" / "meta_eval.json").read_text())["groups"]["all"]
    assert stored["kappa"] == pytest.approx(2 / 7) and stored["kappa_cut"] == 0.5
    for page in ("meta_eval.md", "meta_eval.html"):
        text = (tmp_path / "o" / page).read_text()
        assert "kappa" in text and "0.286" in text and "base rate" in text
    # r5 (label 0, score 1) is above both positives' average: the worst disagreement
    assert got.result.disagreements[0] == "r5"
    assert "✓ statement: this row makes claim one.; sentence: 1; judge_verdict: 1" in (
        tmp_path / "o" / "meta_eval.md").read_text()  # the disagreement shows why


def test_convert_ragchecker_by_aspect_keeps_the_same_shortest_pairs(tmp_path: Path) -> None:
    need_dev()
    files = {}
    for aspect in convert.ASPECTS:
        out = tmp_path / f"{aspect}.jsonl"
        assert convert.convert("ragchecker", DEV, out, aspect, shortest=6) == 6
        assert formats.load(out).problems == []
        files[aspect] = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    ids = [[p["pair_id"] for p in pairs] for pairs in files.values()]
    assert ids[0] == ids[1] == ids[2]  # the same rows: the answer cache judges them once
    for aspect, pairs in files.items():
        for p in pairs:
            total = sum(p["meta"][f"{aspect}_labels"])
            assert total != 0 and p["preferred"] == ("b" if total > 0 else "a")
