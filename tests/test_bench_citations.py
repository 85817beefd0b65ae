"""scripts/bench/bench_citations.py without a model: the filler rows, the fact figures read
from a record's details, and the variants' fact templates."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from localeval import prompts
from scripts.bench import bench_citations as bc


def test_each_correct_answer_is_judged_once_more_between_two_fillers() -> None:
    rows = [{"pair": "p1", "variant": "correct", "language": "zh", "answer": "甲[1]。"},
            {"pair": "p1", "variant": "swap", "language": "zh", "answer": "甲[2]。"}]
    (filled,) = bc.with_fillers(rows)
    assert filled["id"] == "p1:filler" and filled["variant"] == "filler"
    assert filled["answer"] == f"{bc.FILLERS['zh'][0]} 甲[1]。 {bc.FILLERS['zh'][5]}"


def test_fact_figures_count_own_sentences_and_fillers_apart() -> None:
    rows = [{"variant": "filler", "language": "en"}, {"variant": "correct", "language": "en"}]
    sentences = [{"sentence": "Great question!", "fact": 1, "p_fact": 0.6},
                 {"sentence": "Paris [1].", "fact": 0, "p_fact": 0.4},
                 {"sentence": "Happy to help!", "fact": 0, "p_fact": 0.2}]
    record = SimpleNamespace(details={"citation_recall": {"sentences": sentences}})
    other = SimpleNamespace(details={"citation_recall": {"sentences": sentences[:1]}})
    got = bc.fact_figures(rows, [record, other])
    assert got == {"en": {"own": {"sentences": 1, "called_fact": 0, "mean_p_fact": 0.4},
                          "filler": {"sentences": 2, "called_fact": 1, "mean_p_fact": 0.4}}}


def test_a_variant_replaces_the_fact_templates_and_an_unknown_one_stops() -> None:
    with bc.fact_template("bare"):
        messages = prompts.render("en", "citations_fact", question="Q?", sentences=["Paris."])
    assert "Reply 1 or 0 per sentence" in messages[-1]["content"]
    packaged = prompts.render("en", "citations_fact", question="Q?", sentences=["Paris."])
    assert "Reply 1 or 0 per sentence" not in packaged[-1]["content"]
    with pytest.raises(SystemExit, match=r"no citations_fact\.j2") as stopped:
        bc.fact_template("no_such_variant")
    assert str(stopped.value).endswith("one of bare, fact_first, no_example")
