"""answer_relevance(q, a): how well the answer responds to the question asked, all of it and
nothing else: similarity × completeness × focus, each a probability-weighted part.

- **similarity** (the design documents' method): the judge writes n distinct questions that the
  answer responds to, each flagged clear = 1 if the answer answers it clearly and directly (0:
  evasive, vague, non-committal); similarity = mean over the distinct questions of
  clear_i · max(0, (cos_i − b_q) / (1 − b_q)), cos_i = cos(E(q), E(q_i)) and b_q the mean
  cosine of E(q) and the 40 bundled unrelated sentences of the language
  (metrics/baseline_text.py): BERTScore's rescaling with a baseline of this question's own, since
  any two questions on one topic get 0.8–0.97 from m3e-small. n = settings.answer_relevance_n
  (default 3), asked for in one call; repeats (after normalising case, width and spaces) count
  once. A noncommittal answer has every flag 0: similarity 0, so the score is 0.
- **completeness**: the judge lists the parts of the question (what it asks for: usually one;
  "how long, and what was the outcome?" two), from the question alone, so every answer to a
  question is measured against the same parts; then gives, for each part, P(the answer gives
  it). The factor is the mean P; `.completeness` = parts with P ≥ ½ / parts.
- **focus**: for each sentence of the answer (text.split_sentences) the judge gives P(it gives
  something the question asks for). The factor is the mean P; `.focus` = sentences with P ≥ ½ /
  sentences. A sentence that answers nothing asked (an unrelated fact) lowers it.

A judge without probabilities gives its written digits (P = 0 or 1). The product of the
probabilities, not of the ½-cut shares, is the score: on the relevance dev pairs the cut shares
flipped on P near ½ and ranked worse (docs/metrics.md, *answer_relevance and context_relevance:
measured*). Sub-scores: `.similarity`, `.completeness`, `.focus`.

Options (`--metric-option answer_relevance.<option>=<value>`): `reasons` (a short reason before
each clear flag, off by default: docs/metrics.md, *answer_relevance without reasons*);
`completeness` and `focus` (true by default; false leaves that factor out of the product and
its requests unsent).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from localeval.data.dataset import Sample
from localeval.judge.schemas import question_list, verdict_list
from localeval.metrics.base import MetricContext, MetricResult, metric
from localeval.metrics.similarity import rescale
from localeval.metrics.support.threshold import p_yes
from localeval.metrics.support.verdicts import ITEMS_PER_REQUEST
from localeval.text import json_safe, normalize, split_sentences

NAME = "answer_relevance"
MAX_PARTS = 4
"""Most parts a question is split into."""
PART_CHARS = 200


class AnswerRelevanceOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reasons: bool = Field(False, description="a short reason before each clear flag")
    completeness: bool = Field(True, description="multiply by the share of the question's "
                                                 "parts the answer gives")
    focus: bool = Field(True, description="multiply by the share of the answer's sentences "
                                          "that give something the question asks for")


class QuestionParts(BaseModel):
    """What a question asks for, one short question per part (usually one)."""

    parts: list[Annotated[str, Field(max_length=PART_CHARS)]] = Field(
        min_length=1, max_length=MAX_PARTS, description="one short question per thing asked")


def verdicts(answer: BaseModel, probs: list[Any]) -> list[dict[str, Any]]:
    """Each verdict of a bare verdict list with P(1): the judge's probability when it gave one
    for every item (the hard verdict is then P ≥ ½), else its written digit."""
    written = [int(v.verdict) for v in answer.verdicts]  # type: ignore[attr-defined]
    found = [p_yes(f) for f in probs] if len(probs) == len(written) else [None] * len(written)
    out = []
    for digit, p in zip(written, found, strict=True):
        if p is None:
            out.append({"verdict": digit, "p": float(digit)})
        else:
            out.append({"verdict": int(p >= 0.5), "p": round(p, 4)})
    return out


def share(items: list[dict[str, Any]], key: str) -> float:
    return sum(i[key] for i in items) / len(items)


async def question_baseline(ctx: MetricContext, question: str) -> float:
    """b_q: the mean cosine of the question and the bundled unrelated sentences of the sample's
    language (at most 0.99)."""
    from localeval.metrics.baseline_text import SENTENCES

    store = await ctx.embedder()
    others = SENTENCES.get(ctx.language, SENTENCES["en"])
    cosines = [await store.cosine(question, s) for s in others]
    return min(0.99, sum(cosines) / len(cosines))


async def similarity(sample: Sample, ctx: MetricContext, options: AnswerRelevanceOptions
                     ) -> tuple[list[dict[str, Any]], float]:
    """The distinct generated questions, each with its flag, cosine and rescaled cosine, and
    the question's baseline b_q."""
    n = ctx.settings.answer_relevance_n
    found = await ctx.ask("answer_relevance_questions", question_list(n, options.reasons),
                          answer=sample.answer, n=n, explain=options.reasons)
    generated = []
    seen: set[str] = set()
    for item in found.questions:  # type: ignore[attr-defined]
        key = normalize(item.question)
        if key and key not in seen:
            seen.add(key)
            generated.append(item.model_dump())
    question = sample.question or ""
    base = await question_baseline(ctx, question) if generated else 0.0
    for g in generated:
        g["cosine"] = await ctx.cosine(question, g["question"])
        g["rescaled"] = rescale(g["cosine"], base)
    return generated, base


async def parts_of(ctx: MetricContext, question: str) -> list[str]:
    """The parts of the question, as the judge lists them from the question alone (repeats and
    empty ones dropped; the whole question when none is left)."""
    found = await ctx.ask("answer_relevance_parts", QuestionParts, question=question,
                          max_parts=MAX_PARTS)
    parts: list[str] = []
    seen: set[str] = set()
    for part in found.parts:  # type: ignore[attr-defined]
        key = normalize(part)
        if any(ch.isalnum() for ch in key) and key not in seen:
            seen.add(key)
            parts.append(part.strip())
    return parts or [question.strip()]


async def coverage(ctx: MetricContext, question: str, answer: str, parts: list[str]
                   ) -> list[dict[str, Any]]:
    """Per part: does the answer give it (verdict, p)."""
    answer_, probs = await ctx.ask_probs(
        "answer_relevance_coverage", verdict_list(len(parts), False), ["verdict"],
        question=json_safe(question), answer=json_safe(answer),
        parts=[json_safe(p) for p in parts])
    return [{"part": p, "answered": v["verdict"], "p_answered": v["p"]}
            for p, v in zip(parts, verdicts(answer_, probs), strict=True)]


async def asked(ctx: MetricContext, question: str, sentences: list[str]) -> list[dict[str, Any]]:
    """Per answer sentence: does it give something the question asks for (verdict, p)."""
    out: list[dict[str, Any]] = []
    for start in range(0, len(sentences), ITEMS_PER_REQUEST):
        group = sentences[start:start + ITEMS_PER_REQUEST]
        answer_, probs = await ctx.ask_probs(
            "answer_relevance_sentences", verdict_list(len(group), False), ["verdict"],
            question=json_safe(question), sentences=[json_safe(s) for s in group])
        out += [{"sentence": s, "asked": v["verdict"], "p_asked": v["p"]}
                for s, v in zip(group, verdicts(answer_, probs), strict=True)]
    return out


@metric(NAME, options=AnswerRelevanceOptions, requires=("question", "answer"),
        order=20,
        embedder=True,
        steps=("answer_relevance_questions", "answer_relevance_parts",
               "answer_relevance_coverage", "answer_relevance_sentences"),
        examples={"answer_relevance_questions": lambda ex: {"answer": ex.answer, "n": 3},
                  "answer_relevance_parts": lambda ex: {"question": ex.question,
                                                        "max_parts": MAX_PARTS},
                  "answer_relevance_coverage": lambda ex: {
                      "question": ex.question, "answer": ex.answer, "parts": [ex.question]},
                  "answer_relevance_sentences": lambda ex: {
                      "question": ex.question, "sentences": ex.statements}},
        verdict_keys=("clear", "answered", "asked"),
        description="questions generated from the answer against the real one (rescaled "
                    "cosine, 0 when evasive) × parts of the question answered × answer "
                    "sentences that answer something asked")
async def answer_relevance(sample: Sample, ctx: MetricContext) -> MetricResult:
    options: AnswerRelevanceOptions = ctx.options
    question, answer = sample.question or "", sample.answer or ""
    sentences = split_sentences(answer)
    if not sentences:
        return MetricResult.unscored(NAME, "the answer has no sentences")
    generated, base = await similarity(sample, ctx, options)
    if not generated:
        return MetricResult.unscored(NAME, "the judge wrote no usable question")
    sim = sum(g["clear"] * g["rescaled"] for g in generated) / len(generated)
    raw = sum(g["clear"] * max(0.0, g["cosine"]) for g in generated) / len(generated)
    details: dict[str, Any] = {"generated_questions": generated, "distinct": len(generated),
                               "baseline": base, "similarity": sim, "raw": raw}
    scores: dict[str, float | None] = {f"{NAME}.similarity": sim}
    score = sim
    if options.completeness:
        parts = await coverage(ctx, question, answer, await parts_of(ctx, question))
        details["parts"] = parts
        scores[f"{NAME}.completeness"] = details["completeness"] = share(parts, "answered")
        score *= share(parts, "p_answered")
    if options.focus:
        judged = await asked(ctx, question, sentences)
        details["sentences"] = judged
        scores[f"{NAME}.focus"] = details["focus"] = share(judged, "asked")
        score *= share(judged, "p_asked")
    scores[NAME] = score
    return MetricResult(scores=scores, details=details)
