"""Padding (issue 53, item 13): an answer with one false claim and a true restatement beside it
scores 0.5 where the false claim alone scores 0. `faithfulness.all_supported` (1 when every
claim is supported, else 0) is the sub-score a true restatement cannot raise; it stands beside
the mean share. The fake-judge test pins the arithmetic; the 1.5B test that on the judge's own
verdicts a padded answer's all_supported stays where the unpadded answer's is (en and zh; the
first version of it, which expected the 1.5B to count the true sentence, failed: it judged
"The bridge was designed by Thomas Bouch." and its zh twin unsupported beside the false date)."""

from __future__ import annotations

from typing import Any

import pytest

from localeval.metrics.claims.score import ALL_SUPPORTED
from tests.conftest import run_fake

KEY = f"faithfulness.{ALL_SUPPORTED}"
CONTEXT = "The Tay Bridge opened in 1878. It was designed by Thomas Bouch."


def _verdicts(*vs: int) -> dict[str, Any]:
    return {"verdicts": [{"verdict": v} for v in vs]}


def test_a_true_restatement_raises_the_share_never_all_supported() -> None:
    rows = [{"id": "alone", "question": "When did the Tay Bridge open?",
             "answer": "The Tay Bridge opened in 1925.", "contexts": [CONTEXT]},
            {"id": "padded", "question": "When did the Tay Bridge open?",
             "answer": "The Tay Bridge opened in 1925. Thomas Bouch designed the Tay Bridge.",
             "contexts": [CONTEXT]}]
    outcome, _ = run_fake(rows, {"faithfulness_verdicts": [_verdicts(0), _verdicts(0, 1)]},
                          metrics=["faithfulness"])
    alone, padded = (r.scores for r in outcome.records)
    assert alone["faithfulness"] == 0.0 and padded["faithfulness"] == 0.5  # the mean is padded
    assert alone[KEY] == padded[KEY] == 0.0  # all_supported is not


def test_all_supported_is_one_only_when_every_claim_is() -> None:
    row = {"id": "a", "question": "When did the Tay Bridge open?",
           "answer": "The Tay Bridge opened in 1878. Thomas Bouch designed it.",
           "contexts": [CONTEXT]}
    outcome, _ = run_fake([row], {"faithfulness_verdicts": [_verdicts(1, 1)]},
                          metrics=["faithfulness"])
    assert outcome.records[0].scores[KEY] == 1.0
    assert "faithfulness.all_supported" in outcome.summary["metrics"]  # summarised like the rest


PADDED = [
    ({"question": "When did the Tay Bridge open?", "contexts": [CONTEXT],
      "answer": "The Tay Bridge opened in 1925."},
     " The bridge was designed by Thomas Bouch."),
    ({"question": "泰桥是哪一年通车的？",
      "contexts": ["泰桥于1878年建成通车，由英国工程师托马斯·鲍奇设计。"],
      "answer": "泰桥于1925年通车。"},
     "泰桥由英国工程师托马斯·鲍奇设计。"),
]


@pytest.mark.model_small
@pytest.mark.parametrize(("row", "pad"), PADDED, ids=["en", "zh"])
def test_on_the_real_judge_padding_lifts_the_share_not_all_supported(  # type: ignore[no-untyped-def]
        small_judge, row: dict[str, Any], pad: str) -> None:
    from localeval.config import Settings
    from localeval.models.embed import HashEmbedder
    from localeval.runner import run
    from tests.conftest import OpenJudge

    rows = [{"id": "alone", **row}, {"id": "padded", **row, "answer": row["answer"] + pad}]
    outcome = run(rows, None, Settings(no_cache=True, metrics=["faithfulness"]),
                  judge=OpenJudge(small_judge), embedder=HashEmbedder())
    alone, padded = outcome.records
    assert not alone.errors and not padded.errors
    assert alone.scores["faithfulness"] == 0.0, alone.details  # the false date
    # whether the judge counts the true sentence (0.5) or not (on these rows the 1.5B judged
    # it unsupported too: 0.0), all_supported stays at the unpadded answer's 0
    assert padded.scores["faithfulness"] in (0.0, 0.5), padded.details
    assert alone.scores[KEY] == padded.scores[KEY] == 0.0
