"""answer_similarity(a, g): how much of the answer's content the ground truth shares, with the
embedder's cosine rescaled by its own baseline to break ties; 1/0 against a threshold if set.

Cosine alone separates nothing a user can read: any two texts on one topic get 0.9 from
m3e-small (the example's wrong insulin answer 0.905, the right photosynthesis one 0.902). So

- `rescaled` = max(0, (cos − b) / (1 − b)), b the embedder's mean cosine over unrelated
  sentences of the sample's language (EmbeddingStore.baseline), as BERTScore's
  rescale_with_baseline: 0 is "as similar as two unrelated sentences";
- `overlap` = |A ∩ G| / min(|A|, |G|) over content terms (numbers, 5-letter stems of English
  content words, Chinese character bigrams: text.overlap_words): the share of the shorter text's
  content the longer one has (a complete answer to a short ground truth scores 1; a wrong
  name or year scores what else it shares);
- `answer_similarity` = max(overlap, COSINE_WEIGHT · rescaled): shared content decides, the
  embedding speaks when it says much more than the words (a paraphrase in other words, two
  answers with no term in common); `answer_similarity.cosine` = max(0, cos), the score before.

The embedder is the run's, except that a sample in a language the run's embedder was not made
for is embedded by the manifest's embedder of its language when present (embed.store_for).
Details name the embedder, the cosine, its baseline and both parts.
"""

from __future__ import annotations

from localeval.data.dataset import Sample
from localeval.metrics.base import MetricContext, MetricResult, metric
from localeval.names import COSINE
from localeval.text import overlap_words

COSINE_WEIGHT = 0.25
"""Weight of the rescaled cosine against the overlap, fitted on the first half of the HalluQA
and HaluEval QA dev pairs over 0..0.5 (at most half credit from the embedding alone; best
worst-set pairwise accuracy; of tied grid values, the middle of the longest run):
scripts/provenance/similarity_eval.py shows the fit and reports both halves."""


def rescale(cos: float, baseline: float) -> float:
    """max(0, (cos − baseline) / (1 − baseline)): 0 at the unrelated-pairs baseline, 1 at 1."""
    return max(0.0, (cos - baseline) / (1.0 - baseline))


def overlap(answer: str, truth: str) -> float:
    """Shared content terms over the smaller text's count (0 when either has none)."""
    a, g = overlap_words(answer), overlap_words(truth)
    if not a or not g:
        return 0.0
    return len(a & g) / min(len(a), len(g))


def blend(overlap_share: float, rescaled: float, weight: float = COSINE_WEIGHT) -> float:
    """The score: max(overlap, weight · rescaled cosine), at most 1."""
    return min(1.0, max(overlap_share, weight * rescaled))


@metric("answer_similarity", requires=("answer", "ground_truth"), embedder=True,
        order=80,
        description="content overlap of answer and ground truth, or their embedding cosine "
                    "rescaled by the embedder's unrelated-pairs baseline when higher "
                    "(.cosine: the cosine)")
async def answer_similarity(sample: Sample, ctx: MetricContext) -> MetricResult:
    store = await ctx.embedder()
    answer, truth = sample.answer or "", sample.ground_truth or ""
    cos = await store.cosine(answer, truth)
    base = await store.baseline(ctx.language)
    shared, rescaled = overlap(answer, truth), rescale(cos, base)
    score = blend(shared, rescaled)
    details: dict[str, object] = {"cosine": cos, "baseline": base, "rescaled": rescaled,
                                  "overlap": shared, "cosine_weight": COSINE_WEIGHT,
                                  "embedder": store.embedder.name}
    scores = {"answer_similarity" + COSINE: max(0.0, cos)}
    threshold = ctx.settings.similarity_threshold
    if threshold is None:
        return MetricResult(scores={"answer_similarity": score, **scores}, details=details)
    return MetricResult(scores={"answer_similarity": float(score >= threshold), **scores},
                        details={**details, "threshold": threshold})
