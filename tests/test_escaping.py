"""Issue 18.11: dataset text in report.md / meta_eval.md / compare.md cannot forge Markdown blocks
or inject HTML, and ids printed on stderr/stdout cannot carry terminal escape sequences."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from localeval.report import meta_eval_page as meta_render
from localeval.report.kit import md_cell, md_table
from localeval.safe import terminal_safe

FORGED = "x\n## Scores\n| x |\n<script>alert(1)</script>"
ESC = "e\x1b[31mred\x1b]0;title\x07\u202eevil\x9b2J"
ANSWERS = [{"statements": [["Paris is in France."]]},
           {"verdicts": [{"reason": "<b>ok</b>\n# no", "verdict": 0}]}]  # fmt: skip


def rows_file(path: Path) -> Path:
    rows = [
        {"id": FORGED, "question": "q <img src=x onerror=alert(1)>\n## Q", "answer":
         "Paris is in France.", "contexts": ["Paris is in France."]},
        {"id": ESC, "question": "q", "contexts": ["c"]},  # no answer: skipped, named on stderr
        {"id": ESC, "question": "dup"},  # a duplicate id: a row problem, named on stderr
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def markdown_is_inert(md: str, scores_headings: int) -> None:
    lines = md.splitlines()
    assert lines.count("## Scores") == scores_headings  # only the report's own
    forged = ("## Q", "# no", "# lang", "| x |", "<script>", "## Scores\n")
    assert not [ln for ln in lines if ln.lstrip().startswith(forged)]
    assert not re.search(r"<\s*(script|img|b)\b", md, re.I)
    assert "\x1b" not in md and "\u202e" not in md and "\x9b" not in md
    assert "&lt;script&gt;" in md


def test_report_md_has_no_forged_heading_table_or_html_and_stderr_no_escapes(
    fake_cli, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert fake_cli(rows_file(tmp_path / "d.jsonl"), ANSWERS, out) == 0
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\u202e" not in err and "\x9b" not in err and "\x07" not in err
    assert "skipped: e\\x1b[31mred" in err  # the skipped sample, escaped and on one line
    assert "(id e\\x1b[31mred" in err  # the duplicate row problem
    md = (out / "report.md").read_text(encoding="utf-8")
    markdown_is_inert(md, 1)
    assert "x ## Scores \\| x \\|" in md  # the forged id stays in one line, its pipes escaped


def test_md_cell_cannot_open_a_block_a_cell_html_a_code_span_or_a_link() -> None:
    cells = {
        "a|b": "a\\|b",
        "1\r\n2\u20283\x0b4": "1 2 3 4",
        "<i>&amp;": "&lt;i&gt;&amp;amp;",
        "# title": "\\# title",
        "`code`": "\\`code\\`",
        "[x](javascript:alert(1))": "[x\\](javascript:alert(1))",
        "\\|": "\\\\\\|",  # a backslash cannot cancel the pipe's escape
        "\x1b[2J\u202e": "\\x1b[2J\\u202e",
        "[0.1, 0.2]": "[0.1, 0.2]",  # what is harmless stays readable
        "-": "-",
    }
    for raw, want in cells.items():
        assert md_cell(raw) == want, raw
    table = md_table(["h"], [[FORGED]])
    assert len(table.splitlines()) == 3


def test_terminal_safe_escapes_controls_bidi_and_surrogates() -> None:
    got = terminal_safe("a\x1b[31mb\nc\u202ed\u2066\x85")
    assert got == "a\\x1b[31mb\\x0ac\\u202ed\\u2066\\x85"
    assert terminal_safe("caf\udce9 \ud800") == "caf\\xe9 \\ud800"
    assert terminal_safe("中文 ok") == "中文 ok"


def test_meta_eval_md_escapes_dataset_text(tmp_path: Path) -> None:
    from localeval.meta_eval.analyse import RowResult

    case = RowResult(id=FORGED, line=1, language="en\n# lang", label=0, human_score=None,
                     score=1.0, discordance=1.0, unscored="")  # fmt: skip
    md = _render_one(case, tmp_path)
    markdown_is_inert(md, 0)
    assert "d&lt;script&gt;.jsonl" in md and "(id &lt;script&gt;): bad ## Scores" in md


def _render_one(case, tmp_path: Path) -> str:  # type: ignore[no-untyped-def]
    from types import SimpleNamespace

    from localeval.results.records import SampleRecord

    status = SimpleNamespace(done=1, selected=1, in_file=1, no_preference=0,
                             input_errors=["line 9 (id <script>): bad\n## Scores"],
                             complete=True)  # fmt: skip
    result = SimpleNamespace(
        kind="rows", score="faithfulness", data="d<script>.jsonl", status=status, groups={},
        tie_rule="", judge=None, seconds_per_sample=None, sessions=[], models={},
        metrics=["faithfulness"], disagreements=[case.id], rows=[case], pairs=None,
    )
    rec = SampleRecord(id=case.id, line=1, question="q\n## Q <img src=x>", answer="a",
                       details={"faithfulness": {"reason": "<script>\n# no"}})  # fmt: skip
    return meta_render.render_markdown(result, {case.id: rec})
