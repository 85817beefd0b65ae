"""The ranking metrics over ids (no judge, no model): one registered metric per name, all
selected by `--metrics retrieval`. Scores use the names of localeval.retrieval (hit_rate, mrr,
ndcg, ... and `name@k` for the cutoffs of `--at`). Without ids, retrieved_texts are matched to
expected_texts after normalisation (NFKC, case, whitespace)."""

from __future__ import annotations

from localeval.dataset import Sample
from localeval.metrics.base import GROUPS, MetricContext, MetricResult, metric
from localeval.retrieval import RETRIEVAL_METRICS, score_query, score_texts

DESCRIPTIONS = {
    "hit_rate": "1 if any expected id was retrieved",
    "hit_rate_granular": "share of the expected ids that were retrieved",
    "mrr": "1 / rank of the first relevant id",
    "mrr_granular": "mean of 1 / rank over every relevant id retrieved",
    "precision": "share of the retrieved ids that are relevant (@k: divided by k)",
    "recall": "share of the relevant ids that were retrieved",
    "average_precision": "average precision (trec_eval map)",
    "ndcg": "normalised discounted cumulative gain (graded with expected_relevance)",
}


def _register(name: str) -> None:
    async def score(sample: Sample, ctx: MetricContext) -> MetricResult:
        options = {
            "at": ctx.settings.retrieval_at,
            "gain": ctx.settings.retrieval_gain,
            "metrics": (name,),
        }
        expected = sample.expected_relevance or sample.expected_ids
        if sample.has("retrieved_ids") and expected:
            scores, reason = score_query(sample.retrieved_ids or [], expected, **options)
            matched_on = "ids"
        elif sample.has("retrieved_texts") and sample.has("expected_texts"):
            scores, reason = score_texts(
                sample.retrieved_texts or [], sample.expected_texts or [], **options
            )
            matched_on = "texts"
        else:
            return MetricResult.unscored(
                name,
                "needs retrieved_ids with expected_ids (or "
                "expected_relevance), or retrieved_texts with expected_texts",
            )
        return MetricResult(scores=scores, reason=reason, details={"matched_on": matched_on})

    metric(
        name,
        requires=(
            "retrieved_ids|retrieved_texts",
            "expected_ids|expected_relevance|expected_texts",
        ),
        description=DESCRIPTIONS[name],
    )(score)


for _name in RETRIEVAL_METRICS:
    _register(_name)
GROUPS["retrieval"] = RETRIEVAL_METRICS
