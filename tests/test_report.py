"""report.md and report.html: per score the distribution and the mean with its 95% CI, the
lowest-scoring samples with their explanations, errors, the run's metadata; self-contained
HTML; `localeval report DIR` re-renders from results.jsonl. (The browser check is in
test_browser.py.)"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from localeval.cli import main
from localeval.report import details_html, details_md, histogram, render_html, write_report
from localeval.results import RunFolder, SampleRecord, load_run
from tests.conftest import EXAMPLE, true_to_sentences

# In the order the example's rows ask (seed-roe: 7 sentences in 4 groups, en-eiffel: 3 in 2,
# then one sentence each): seed-roe 0.5, en-eiffel 2/3 (da Vinci is not in its context: the
# judge's support is overruled), en-photosynthesis 1, en-insulin 0.
YES, NO = {"verdict": 1}, {"verdict": 0}
ANSWERS = {
    "faithfulness_statements": true_to_sentences([
        {"statements": [["sa", "sb"], ["sc"]]}, {"statements": [["sd"], ["se"]]},
        {"statements": [["sf"], ["sg"]]}, {"statements": [["<script>alert('x')</script> sh"]]},
        {"statements": [["sa"], ["sb"]]}, {"statements": [["sc"]]},
        {"statements": [["sa"]]},
        {"statements": [["sa", "sb"]]},
    ]),
    "faithfulness_verdicts": [
        {"verdicts": [YES, NO] * 4},
        {"verdicts": [YES, YES, YES]},
        {"verdicts": [YES]},
        {"verdicts": [NO, NO]},
    ],
}


@pytest.fixture
def example_run(fake_cli, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    out = tmp_path / "run"
    assert fake_cli(EXAMPLE, ANSWERS, out, metrics="faithfulness,answer_similarity") == 0
    return out


def test_run_writes_both_reports(example_run: Path) -> None:
    md = (example_run / "report.md").read_text()
    summary = json.loads((example_run / "summary.json").read_text())
    f = summary["metrics"]["faithfulness"]
    lo, hi = f["ci95"]
    assert f"| faithfulness | {f['mean']:.3f} | [{lo:.3f}, {hi:.3f}] | 4 | 0 | 0 | 0 |" in md
    assert "## Distributions" in md and "| 0.0–0.1 | 1 |" in md  # en-insulin scored 0
    # the lowest faithfulness sample first, with its statements and verdict reasons
    lowest = md.split("## Lowest-scoring samples")[1]
    assert lowest.index("en-insulin (line 4): faithfulness = 0.000") < lowest.index("seed-roe")
    assert ("- ✗ statement: Insulin was discovered by Marie Curie in 1935 in Paris. sa; "
            "sentence: 1; judge_verdict: 0; closest_sentence: Insulin was discovered in 1921 by "
            "Frederick Banting") in md
    assert "question: Who discovered insulin?" in md
    # metadata: models and sha256, prompt hashes, settings, time, tokens, cache hits
    assert "| judge | fake | fake |" in md and "hash-ngram-512-v1" in md
    assert "| en/faithfulness_statements.j2 | " in md and "| max_tokens | 768 |" in md
    assert "| elapsed |" in md and "| cache hits | 0 (0% of 12 requests) |" in md
    assert "| tokens |" in md


def test_html_is_self_contained_and_escapes_judge_text(example_run: Path) -> None:
    page = (example_run / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>")
    assert "<script" not in page and "&lt;script&gt;alert" in page
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    urls = re.findall(r"""(?:src|href)\s*=\s*["']([^"']*)""", page)
    assert all(u.startswith("data:") for u in urls), urls
    assert "@import" not in page and "url(" not in page
    assert not re.findall(r"https?://(?!www\.w3\.org/2000/svg\")", page)  # only the SVG namespace
    # faithfulness, faithfulness.all_supported, answer_similarity and answer_similarity.cosine
    assert page.count('<svg class="chart hist"') == 4 and page.count('class="dot"') == 4
    assert page.count('class="bar"') == 40 and page.count('class="mean"') == 4
    assert page.count('class="ci"') == 4
    assert '<span class="bad">✗ 0</span>' in page and '<span class="ok">✓ 1</span>' in page


def test_report_command_rerenders_from_results_jsonl(
    example_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    html_before = (example_run / "report.html").read_text()
    for name in ("report.md", "report.html"):
        (example_run / name).unlink()
    assert main(["report", str(example_run)]) == 0
    out = capsys.readouterr().out
    assert "faithfulness" in out and "report.html" in out
    assert (example_run / "report.html").read_text() == html_before
    # without summary.json (a run killed hard) the scores still come from results.jsonl
    (example_run / "summary.json").unlink()
    assert main(["report", str(example_run)]) == 0
    assert "| faithfulness | 0.542 |" in (example_run / "report.md").read_text()


def test_report_of_a_missing_folder_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(tmp_path / "nope")]) == 2
    assert "not a run folder" in capsys.readouterr().err


def test_explanations_of_other_metrics_render(tmp_path: Path) -> None:
    records = [
        SampleRecord(
            id="a",
            line=1,
            question="Q?",
            answer="A.",
            scores={
                "answer_correctness": 0.4,
                "answer_correctness.precision": 0.5,
                "answer_relevance": 0.2,
            },
            details={
                "answer_correctness": {
                    "tp": ["Paris is in France."],
                    "fp": ["It has 9M people."],
                    "fn": ["It is the capital."],
                    "weights": [1.0, 0.0],
                },
                "answer_relevance": {
                    "generated_questions": [
                        {"question": "Where is Paris?", "clear": 1, "cosine": 0.81234},
                        {"question": "What is it?", "clear": 0, "cosine": 0.1},
                    ],
                    "distinct": 2,
                },
            },
            errors={"faithfulness": "judge answer reached max_tokens=768; raise --max-tokens"},
        ),
        SampleRecord(
            id="b",
            line=2,
            scores={"answer_correctness": 0.9, "answer_relevance": None},
            skipped={"faithfulness": "needs 'contexts'"},
        ),
    ]
    summary = {
        "metrics": {},
        "dataset": {
            "source": "x.jsonl",
            "samples": 3,
            "input_errors": [{"line": 3, "id": None, "message": "malformed JSON"}],
        },
        "complete": False,
    }
    from localeval.results import recompute_metrics

    summary["metrics"] = recompute_metrics(records, {"faithfulness": {"metric": "faithfulness"}})
    md_path, html_path = write_report(tmp_path, records, summary)
    md, page = md_path.read_text(), html_path.read_text()
    assert "partial run: 2 of 3 samples done" in md and "partial run" in page
    assert "- tp:" in md and "  - Paris is in France." in md and "- fp:" in md and "- fn:" in md
    assert "- ✓ clear question: Where is Paris?; cosine: 0.8123" in md
    assert "also: answer_correctness.precision = 0.500" in md
    assert "| a | 1 | faithfulness | judge answer reached max_tokens=768" in md
    assert "| 3 |  | malformed JSON |" in md
    assert "<th>tp</th>" in page and '<li><span class="text">It is the capital.</span></li>' in page
    assert "<th>question</th>" in page and "<th>clear</th>" in page
    assert page.count('<span class="bad">✗ 0</span>') == 1
    assert "| faithfulness | - | - | 0 | 0 | 1 | 1 |" in md  # errored everywhere: still listed


def test_histogram_bins_and_details_limits() -> None:
    assert histogram([0.0, 0.05, 0.1, 0.55, 0.99, 1.0, 1.3, -0.2]) == [3, 1, 0, 0, 0, 1, 0, 0, 0, 3]
    deep: object = "x"
    for _ in range(12):
        deep = [deep]
    assert "<code>" in details_html(deep)  # very deep details are shown as JSON, not recursed
    assert details_md({"k": 1.23456}) == ["- k: 1.235"]
    assert len(details_html("y" * 10_000)) < 2_000  # long texts are clipped


def test_render_html_with_empty_run(tmp_path: Path) -> None:
    page = render_html(RunFolder(path=tmp_path, records=[], summary={"metrics": {}}))
    assert page.startswith("<!DOCTYPE html>") and "Scores" in page


def test_load_run_recomputes_metrics(example_run: Path) -> None:
    run = load_run(example_run)
    assert run.summary["metrics"]["faithfulness"]["count"] == 4
    assert [r.id for r in run.records] == [
        "seed-roe",
        "en-eiffel",
        "en-photosynthesis",
        "en-insulin",
    ]


def test_lowest_lists_one_key_per_metric_and_one_for_retrieval() -> None:
    from localeval.report import lowest_keys

    metrics = {
        "faithfulness": {"metric": "faithfulness", "count": 3},
        "context_relevance.answer_supported_precision": {"metric": "context_relevance", "count": 2},
        "context_relevance": {"metric": "context_relevance", "count": 2},
        "answer_relevance": {"metric": "answer_relevance", "count": 0},
        "mrr": {"metric": "mrr", "count": 4},
        "mrr@10": {"metric": "mrr", "count": 4},
        "ndcg@10": {"metric": "ndcg", "count": 4},
        "recall@5": {"metric": "retrieval", "count": 4},
    }
    assert lowest_keys(metrics) == [
        ("faithfulness", "faithfulness"),
        ("context_relevance", "context_relevance"),
        ("mrr", "mrr"),
    ]


def test_the_page_kit_serves_every_page(tmp_path: Path) -> None:
    """One kit: the run report, compare and the meta-eval page share its CSS and document
    shell; its text table aligns columns (left, or right where asked) with no trailing space."""
    from types import SimpleNamespace

    from localeval.report import CSS, meta_eval_page, page, text_table

    assert text_table([["a", "bb", "x"], ["ccc", "d", ""]], right=[1]) == ["a    bb  x",
                                                                            "ccc   d"]
    assert text_table([]) == []
    status = SimpleNamespace(done=0, selected=0, in_file=0, no_preference=0, input_errors=[],
                             complete=True)
    result = SimpleNamespace(kind="rows", score="faithfulness", data="d.jsonl", status=status,
                             groups={}, judge=None, seconds_per_sample=None, sessions=[],
                             models={}, metrics=["faithfulness"], disagreements=[], rows=[],
                             pairs=None)
    meta = meta_eval_page.render_html(result, {})
    assert CSS in meta and meta.startswith(page("x", "")[:200])
