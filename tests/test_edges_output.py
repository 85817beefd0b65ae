"""Issue 29.4, what reaches a reader: an answer line `[x]: https://…` is no link definition in
report.md; terminal escapes of dataset text never reach the terminal through a printed table
(`retrieval --per-query`, the meta-eval table) or assert_scores' message, which is capped and
says how many samples it left out; assert_scores passes on no run of the fake judge outside
localeval's tests."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from localeval import testing
from localeval.judge.fake import ALLOW_ENV, FakeJudge
from localeval.models.embed import HashEmbedder
from localeval.report.kit import details_md, md_cell, text_table
from localeval.testing import assert_scores

ESC = "\x1b[2J\x1b]0;owned\x07\u202e\x9b31m"
LINK = "[x]: https://e.vil/p"
# a line CommonMark reads as a link reference definition (in a nested list item too):
# indentation, any list or quote markers, then "[label]:" (the label without an unescaped "]")
LINK_DEF = re.compile(r"^[ \t]*(?:(?:[-*+]|\d{1,9}[.)]|>)\s+)*\[(?:[^\]\\]|\\.)+\]:", re.M)


def test_md_cell_and_details_make_no_link_definition() -> None:
    assert md_cell(LINK) == "[x\\]: https://e.vil/p"
    lines = details_md({"statements": [LINK, {"statement": LINK, "verdict": 0}],
                        "reason": LINK})
    assert not LINK_DEF.search("\n".join(lines))


def test_report_md_has_no_link_definition_from_an_answer(fake_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    data = tmp_path / "d.jsonl"
    row = {"id": "r1", "question": "Where is Paris?", "contexts": ["Paris is in France."],
           "answer": f"{LINK}\nParis is in [x]."}
    data.write_text(json.dumps(row) + "\n", encoding="utf-8")
    answers = [{"verdicts": [{"reason": LINK, "verdict": 0}]}] * 4
    out = tmp_path / "out"
    assert fake_cli(data, answers, out, "--claims", "sentences") == 0  # each sentence listed
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "e.vil" in md  # the text is shown ...
    assert not LINK_DEF.search(md)  # ... but defines no link


def test_text_tables_escape_terminal_controls() -> None:
    lines = text_table([["query", "mrr"], [f"q{ESC}", "1.0000"]])
    joined = "\n".join(lines)
    assert "\x1b" not in joined and "\x07" not in joined and "\u202e" not in joined
    assert "\x9b" not in joined and "q\\x1b[2J" in joined


def test_retrieval_per_query_prints_no_terminal_escape(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from localeval.cli import main

    qid = f"q{ESC}".replace(" ", "")
    qrels = tmp_path / "qrels.txt"
    run = tmp_path / "run.txt"
    qrels.write_text(f"{qid} 0 d1 1\n", encoding="utf-8")
    run.write_text(f"{qid} Q0 d1 1 2.0 t\n", encoding="utf-8")
    assert main(["retrieval", "--qrels", str(qrels), "--run", str(run), "--per-query"]) == 0
    out = capsys.readouterr()
    for text in (out.out, out.err):
        assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    assert "q\\x1b[2J" in out.out


def test_meta_eval_table_prints_no_terminal_escape() -> None:
    from types import SimpleNamespace

    from localeval.meta_eval.analyse import RowResult, by_group, row_stats
    from localeval.report.meta_eval_page import table

    rows = [RowResult(id=f"r{i}", line=i, language=f"en{ESC}", label=i % 2, human_score=None,
                      score=float(i % 2), discordance=0.0, unscored="") for i in range(4)]
    status = SimpleNamespace(done=4, selected=4, in_file=4, no_preference=0, input_errors=[],
                             complete=True)
    result = SimpleNamespace(kind="rows", score="faithfulness", rows=rows, pairs=None,
                             groups=by_group(rows, row_stats), status=status, judge=None,
                             seconds_per_sample=None, sessions=[])
    text = table(result)
    assert "en\\x1b[2J" in text  # the group is shown, escaped
    assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text


def _long_rows(n: int) -> list[dict[str, str]]:
    return [{"id": f"s{i}{ESC}", "question": f"q{ESC}", "answer": "word " * 30 + ESC}
            for i in range(n)]


def test_assert_scores_message_is_capped_and_escaped() -> None:
    shown = testing.MAX_SHOWN
    n = shown + 13
    with pytest.raises(AssertionError) as info:
        assert_scores(_long_rows(n), response_length=0.9, embedder=HashEmbedder(),
                      metric_options={"response_length": {"max_words": 10}}, no_cache=True)
    text = str(info.value)
    assert f"{n} of {n} samples below" in text
    assert text.count("\nsample ") == shown
    assert f"... and {n - shown} more failing sample(s) not shown" in text
    for ch in ("\x1b", "\x07", "\u202e", "\x9b"):
        assert ch not in text


def test_assert_scores_message_stays_small_for_many_failures() -> None:
    with pytest.raises(AssertionError) as info:
        assert_scores(_long_rows(2000), response_length=0.9, embedder=HashEmbedder(),
                      metric_options={"response_length": {"max_words": 10}}, no_cache=True)
    assert len(str(info.value)) < 40_000  # was ~300 bytes per failing sample, unbounded


def test_assert_scores_fails_on_the_fake_judge_outside_the_tests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    row = {"id": "a", "question": "Who?", "contexts": ["Banting found insulin."],
           "answer": "Banting found insulin."}
    judge = FakeJudge({"faithfulness_statements": [{"statements": [["Banting found insulin."]]}],
                       "faithfulness_verdicts": [{"verdicts": [{"reason": "r", "verdict": 1}]}]})
    monkeypatch.delenv(ALLOW_ENV, raising=False)
    with pytest.raises(AssertionError, match="fake one"):
        assert_scores([row], faithfulness=0.5, judge=judge, embedder=HashEmbedder(),
                      claims="statements", cache=tmp_path / "c.sqlite")
