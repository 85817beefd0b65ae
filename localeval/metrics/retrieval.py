"""The ranking metrics over ids (no judge, no model): one registered metric per name, all
selected by `--metrics retrieval`. Scores use the names of localeval.retrieval (hit_rate, mrr,
ndcg, ... and `name@k` for the cutoffs of `--at`). Without ids, retrieved_texts are matched to
expected_texts after normalisation (NFKC, case, whitespace); such a row's details say
`matched_on: texts` (ids, the usual case, add no details to a row)."""

from __future__ import annotations

import functools
from collections import OrderedDict

from localeval.data.dataset import Sample
from localeval.metrics.base import GROUPS, MetricContext, MetricResult, metric

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
"""Every retrieval metric, in the order of localeval.retrieval's RETRIEVAL_METRICS (the library
is imported when a retrieval metric scores a row, never to register them)."""


_Found = tuple[dict[str, float | None], str | None, str]
_RECENT: OrderedDict[int, tuple[Sample, tuple[object, ...], _Found]] = OrderedDict()
_RECENT_MAX = 4  # the metrics of one sample run back to back; keep few rows alive


def _score_all(sample: Sample, ctx: MetricContext) -> _Found | None:
    """Every retrieval metric of a sample at once: (scores, reason if unscored, matched on), or
    None without the fields. The metrics of one sample share it (a small cache keyed by the
    sample object), so a row is scored once, not once per metric."""
    options = (ctx.settings.retrieval_at, ctx.settings.retrieval_gain)
    cached = _RECENT.get(id(sample))
    if cached is not None and cached[0] is sample and cached[1] == options:
        return cached[2]
    from localeval.retrieval.query import score_query, score_texts

    kw = {"at": options[0], "gain": options[1]}
    expected = sample.expected_relevance or sample.expected_ids
    if sample.has("retrieved_ids") and expected:
        found: _Found = (*score_query(sample.retrieved_ids or [], expected, **kw), "ids")
    elif sample.has("retrieved_texts") and sample.has("expected_texts"):
        texts = score_texts(sample.retrieved_texts or [], sample.expected_texts or [], **kw)
        found = (*texts, "texts")
    else:
        return None
    _RECENT[id(sample)] = (sample, options, found)
    if len(_RECENT) > _RECENT_MAX:
        _RECENT.popitem(last=False)
    return found


@functools.lru_cache(maxsize=256)
def _keys(name: str, at: tuple[int, ...]) -> list[str]:
    from localeval.retrieval.options import metric_names

    return metric_names((name,), at)


def _register(name: str) -> None:
    async def score(sample: Sample, ctx: MetricContext) -> MetricResult:
        found = _score_all(sample, ctx)
        if found is None:
            return MetricResult.unscored(
                name,
                "needs retrieved_ids with expected_ids (or "
                "expected_relevance), or retrieved_texts with expected_texts",
            )
        scores, reason, matched_on = found
        mine = {k: scores[k] for k in _keys(name, tuple(ctx.settings.retrieval_at))}
        # ids are the usual match: said only for texts (8 dicts fewer per row held and written)
        details = {"matched_on": matched_on} if matched_on == "texts" else {}
        return MetricResult(scores=mine, reason=reason, details=details)

    metric(
        name,
        requires=(
            "retrieved_ids|retrieved_texts",
            "expected_ids|expected_relevance|expected_texts",
        ),
        description=DESCRIPTIONS[name],
        order=100,
    )(score)


for _name in DESCRIPTIONS:
    _register(_name)
GROUPS["retrieval"] = tuple(DESCRIPTIONS)
