"""context_relevance(a, C): how much of the retrieved contexts the answer uses, on deterministic
sentences (text.sentences_of); padding a context with sentences the answer does not use
lowers it.

- context_relevance (the headline) = the probability-weighted context-supported precision: the
  mean over the contexts' sentences of the judge's P(the answer states this sentence), 0 for a
  sentence that shares no content term with the answer (below). Chosen from the dev pairs of
  focused against padded contexts (docs/metrics.md, *context_relevance*);
- context_supported_precision (+ `.greedy`, the same; `.weighted`, the headline's figure): the
  share of the contexts' sentences the answer states, each P ≥ τ (metrics/claims/verdicts.
  threshold);
- rank_weighted: each context's own context-supported precision, averaged with weights
  w_i = 1 / log2(i + 1) for the context at rank i (1, 0.63, 0.5, 0.43, …, as in DCG);
- answer_supported_precision (+ `.greedy`, `.weighted`), with the option `answer_supported`: the
  share of the answer's sentences the contexts support. This is faithfulness's figure with
  sentences as claims, asked with faithfulness's own requests (step faithfulness_verdicts), so a
  run of both metrics judges them once. Off by default: it cannot see padding, and on a long
  context it cost more than the context direction (research/notes.md, *answer_relevance and
  context_relevance: round 10*).

Candidates: a context sentence with no content term (number, English 5-letter stem of a content
word, Chinese character bigram: text.overlap_words) in common with the answer is not stated by it;
nor is one that, for every answer sentence, has `per_answer_sentence` (3) context sentences
sharing more terms with it ranked above it (ties: the earlier first). These get P = 0 without a
request (`rule: "not a candidate"`); only the others are judged, in numbered lists
(claims/verdicts.py), so the requests grow with the answer, not with the context. A
one-sentence answer of a few words is shown to the judge with its question ("Q: … A: …",
claims.claim_text), whose terms then count as the answer's.

Options (`--metric-option context_relevance.<option>=<value>`): `narrow` (true: judge only the
candidates; false: every sentence), `per_answer_sentence` (3; 0: every sentence sharing a
term), `answer_supported` (false; true: also the answer direction).
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from localeval.data.dataset import Sample
from localeval.metrics.base import MetricContext, MetricResult, metric
from localeval.metrics.claims.record import Verdict
from localeval.metrics.claims.score import claims_supported, mean_p, nonempty
from localeval.metrics.claims.split import claim_text
from localeval.metrics.claims.verdicts import support_verdicts
from localeval.names import GREEDY, WEIGHTED
from localeval.text import overlap_words, sentences_of

NAME = "context_relevance"
HEADLINE = "context_supported_precision" + WEIGHTED
"""The sub-score the main score equals (chosen on the dev pairs, research/notes.md)."""
NOT_CANDIDATE = "not a candidate"
NO_SHARED_TERM = ("shares no word, number or name with the answer, or fewer than the context "
                  "sentences ranked above it for each answer sentence: not stated by it")
UNASKED = Verdict(0, NO_SHARED_TERM, shape="not_candidate", rule=NOT_CANDIDATE, p_yes=0.0)
"""The verdict of a context sentence that is not a candidate (no request)."""


class ContextRelevanceOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    narrow: bool = Field(True, description="judge only the candidates: context sentences that "
                                           "share a content term with the answer (the others: 0)")
    per_answer_sentence: int = Field(
        3, ge=0, description="with narrow: judge, for each answer sentence, the k candidates "
                             "sharing the most terms with it (0: every candidate)")
    answer_supported: bool = Field(False, description="also the share of the answer's sentences "
                                                      "the contexts support (faithfulness's "
                                                      "requests)")


def rank_weight(rank: int) -> float:
    """Weight of the context at 1-based `rank`: 1/log2(rank+1)."""
    return 1.0 / math.log2(rank + 1)


def answer_material(answer: str, question: str | None, language: str) -> str:
    """The answer as the judge sees it: a one-sentence fragment with its question."""
    sentences = sentences_of(answer).items
    if len(sentences) == 1:
        return claim_text(sentences[0], question, language)
    return answer


def candidates(sentences: list[str], material: str, per_sentence: int = 0) -> list[bool]:
    """Per context sentence: is it judged? It must share a content term with the answer (as
    shown); with `per_sentence` k > 0, it must also be among the k context sentences sharing the
    most terms with some answer sentence (ties: the earlier one), so the sentences judged grow
    with the answer, not with the context."""
    terms = overlap_words(material)
    own = [overlap_words(s) for s in sentences]
    shared = [bool(t & terms) for t in own]
    if per_sentence <= 0:
        return shared
    keep = [False] * len(sentences)
    for piece in sentences_of(material).items or [material]:
        mine = overlap_words(piece)
        ranked = sorted((-len(t & mine), i) for i, t in enumerate(own) if t & mine)
        for _, i in ranked[:per_sentence]:
            keep[i] = True
    return [k and s for k, s in zip(keep, shared, strict=True)]


async def context_verdicts(ctx: MetricContext, sentences: list[str], material: str,
                           question: str | None, options: ContextRelevanceOptions
                           ) -> tuple[list[Verdict], int]:
    """One verdict per context sentence (its `p_yes` None from a judge without
    probabilities); only the candidates are asked about when `narrow`. And the requests
    retried split smaller."""
    asked = (candidates(sentences, material, options.per_answer_sentence) if options.narrow
             else [True] * len(sentences))
    judged = [s for s, a in zip(sentences, asked, strict=True) if a]
    support = None
    if judged:
        support = await support_verdicts(ctx, "context_relevance_context", judged,
                                         split="answer", items_var="sentences",
                                         answer=[material], question=question,
                                         material_name="answer", details=False)
    found = iter(support.verdicts if support else [])
    out = [next(found) if was_asked else UNASKED for was_asked in asked]
    return out, support.retries if support else 0


def per_context(groups: list[list[str]], verdicts: list[Verdict]) -> list[float | None]:
    """Each context's own share of stated sentences (None for a context without sentences)."""
    out: list[float | None] = []
    at = 0
    for group in groups:
        mine = verdicts[at:at + len(group)]
        at += len(group)
        out.append(sum(v.verdict for v in mine) / len(group) if group else None)
    return out


@metric(NAME, options=ContextRelevanceOptions, requires=("answer", "contexts"),
        order=30,
        steps=("context_relevance_context", "faithfulness_verdicts", "faithfulness_statements"),
        examples={"context_relevance_context": lambda ex: {"answer": [ex.answer],
                                                           "sentences": ex.contexts}},
        verdict_keys=("verdict",),
        description="how much of the contexts the answer uses: mean P(the answer states it) "
                    "over the context sentences (+ hard share, rank-weighted, and the answer "
                    "sentences the contexts support)")
async def context_relevance(sample: Sample, ctx: MetricContext) -> MetricResult:
    options: ContextRelevanceOptions = ctx.options
    contexts = nonempty(sample.contexts)
    answer = sample.answer or ""
    groups = [list(sentences_of(c).items) for c in contexts]
    sentences = [s for group in groups for s in group]
    if not contexts:
        return MetricResult.unscored(NAME, "every context is empty")
    if not sentences_of(answer).items:
        return MetricResult.unscored(NAME, "the answer has no sentences")
    if not sentences:
        return MetricResult.unscored(NAME, "the contexts have no sentences")
    material = answer_material(answer, sample.question, ctx.language)
    verdicts, retries = await context_verdicts(ctx, sentences, material, sample.question,
                                               options)
    precisions = per_context(groups, verdicts)
    weighted = [(rank_weight(i), p) for i, p in enumerate(precisions, start=1) if p is not None]
    scores: dict[str, float | None] = {
        f"{NAME}.context_supported_precision": sum(v.verdict for v in verdicts)
        / len(sentences),
        f"{NAME}.rank_weighted": sum(w * p for w, p in weighted) / sum(w for w, _ in weighted),
    }
    csp = f"{NAME}.context_supported_precision"
    scores[csp + GREEDY] = scores[csp]
    weighted_share = mean_p(verdicts)  # the mean P(stated)
    if weighted_share is not None:
        scores[csp + WEIGHTED] = weighted_share
    details: dict[str, Any] = {
        "context_sentences": [{"sentence": s, **v.as_json()}
                              for s, v in zip(sentences, verdicts, strict=True)],
        "judged": sum(v.rule != NOT_CANDIDATE for v in verdicts),
        "per_context_precision": precisions,
        "rank_weights": [round(rank_weight(i), 4) for i in range(1, len(contexts) + 1)],
    }
    if retries:
        details["judge_retries"] = retries
    if material != answer:
        details["answer_shown_as"] = material
    if options.answer_supported:
        asp = await claims_supported(ctx, f"{NAME}.answer_supported_precision",
                                     "faithfulness_verdicts", answer, sample.question,
                                     contexts, whose="the answer")
        scores |= asp.scores
        details["answer_sentences"] = asp.details.get("statements", [])
        if asp.reason:
            details["answer_supported_unscored_reason"] = asp.reason
    # a judge without probabilities (the fake judge) gives no weighted figure: the hard share
    scores[NAME] = scores.get(f"{NAME}.{HEADLINE}", scores[csp])
    scores[NAME + GREEDY] = scores[csp]
    if csp + WEIGHTED in scores:
        scores[NAME + WEIGHTED] = scores[csp + WEIGHTED]
    return MetricResult(scores=scores, details=details)
