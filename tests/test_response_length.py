"""response_length: the answer's words against the `max_words` option (no judge)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from localeval.errors import ConfigError
from localeval.metrics import REGISTRY, resolve
from localeval.metrics.response_length import length_score
from tests.conftest import run_fake

NAME = "response_length"


def scores(rows: list[dict[str, str]], **settings: object) -> list[float | None]:
    outcome, _ = run_fake(rows, [], metrics=[NAME], **settings)  # no answer queued: no judge
    assert all(not r.errors for r in outcome.records)
    return [r.scores.get(NAME) for r in outcome.records]


def test_registered_after_the_first_metrics_with_its_options() -> None:
    m = REGISTRY[NAME]
    assert not m.uses_judge and not m.uses_embedder and m.steps == ()
    assert m.options is not None and m.options().max_words == 100  # type: ignore[attr-defined]
    assert list(REGISTRY).index(NAME) > list(REGISTRY).index("ndcg")
    assert [x.name for x in resolve([NAME])] == [NAME]


@pytest.mark.parametrize(("words", "limit", "expected"), [
    (0, 10, 1.0), (10, 10, 1.0), (15, 10, 0.5), (20, 10, 0.0), (35, 10, 0.0), (12.5, 10, 0.75),
])
def test_linear_from_the_limit_to_twice_it(words: float, limit: int, expected: float) -> None:
    assert length_score(words, limit) == pytest.approx(expected)


def test_english_and_chinese_answers_against_the_limit() -> None:
    rows = [
        {"id": "short", "answer": "Paris is the capital of France."},  # 6 words
        {"id": "long", "answer": " ".join(["word"] * 9)},  # 9 words
        {"id": "zh", "answer": "巴黎是法国的首都。"},  # 8 characters → 16/3 words
    ]
    got = scores(rows, metric_options={NAME: {"max_words": 6}})
    assert got[0] == 1.0
    assert got[1] == pytest.approx(0.5)
    assert got[2] == 1.0
    assert scores(rows[2:], metric_options={NAME: {"max_words": 4}}) == [pytest.approx(2 - 16 / 12)]


def test_details_and_default_limit() -> None:
    outcome, _ = run_fake([{"id": "a", "answer": "巴黎 is 首都"}], [], metrics=[NAME])
    (record,) = outcome.records
    assert record.scores[NAME] == 1.0
    assert record.details[NAME] == {"words": round(1 + 4 * 2 / 3, 2), "characters": 6,
                                    "max_words": 100}


def test_no_answer_is_skipped() -> None:
    outcome, _ = run_fake([{"id": "a", "question": "Why?", "answer": ""}], [], metrics=[NAME])
    (record,) = outcome.records
    assert NAME in record.skipped and NAME not in record.scores


def test_a_wrong_option_stops_the_run_in_one_line() -> None:
    with pytest.raises(ConfigError) as caught:
        run_fake([{"id": "a", "answer": "x"}], [], metrics=[NAME],
                 metric_options={NAME: {"max_words": 0}})
    assert str(caught.value) == ("[metric_options.response_length]: metric response_length "
                                 "option 'max_words': Input should be greater than or equal to 1")


def test_set_from_the_cli(tmp_path: Path, fake_cli) -> None:  # type: ignore[no-untyped-def]
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({"id": "a", "answer": "one two three"}) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    assert fake_cli(data, [], out, "--metric-option", f"{NAME}.max_words=2", metrics=NAME) == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["metrics"][NAME]["mean"] == pytest.approx(0.5)
    assert summary["settings"]["metric_options"] == {NAME: {"max_words": 2}}
