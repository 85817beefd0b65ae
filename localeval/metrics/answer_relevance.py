"""answer_relevance(q, a): how well the answer responds to the question asked, all of it:
related × completeness, the design documents' generated questions deciding whether the answer
responds at all, the judge's per-part probabilities how much of the question it answers.

- **related** (the design documents' method): the judge writes n distinct questions that the
  answer responds to, each flagged clear = 1 if the answer answers it clearly and directly (0:
  evasive, vague, non-committal); each is compared with the real question by
  rescaled_i = max(0, (cos_i − b_q) / (1 − b_q)), cos_i = cos(E(q), E(q_i)) and b_q the mean
  cosine of E(q) and the 40 bundled unrelated sentences of the language
  (models/baseline_text.py). related = 0.9 · share + 0.1 · expected share: share is the
  share of the distinct questions that are clear (P(clear) ≥ ½) and closer to the real question
  than that baseline (rescaled_i > 0), expected share the mean of P(clear_i) · [rescaled_i > 0]
  with P(clear_i) the judge's probability of its flag (its written digit when it gives none).
  The share decides; the judge's doubt only breaks what would tie: a terse direct answer ("no",
  "不一定…") whose every flag the judge writes 0 still ranks above an evasive one, which scores
  at most 0.1 · its mean P(clear) (research/notes.md, *answer_relevance: P(clear) as the
  tie-break*). n = settings.answer_relevance_n (default 3), asked for in one call; repeats
  (after normalising case, width and spaces) count once.
- **completeness**: the judge writes how many separate things the question asks for (a digit,
  1 to MAX_PARTS: usually 1; "how long, and what was the outcome?" 2), then lists that many
  parts, from the question alone, so every answer to a question is measured against the same
  parts; parts written past the count are dropped (the 1.5B judge, asked for the parts alone,
  added parts no question asked: a spider's lifespan to "How many legs does a spider have?").
  Then the judge gives, for each part, P(the answer gives it). The factor is the mean P;
  `.completeness` = parts with P ≥ ½ / parts. An answer that leaves a part out, or buries what
  was asked among unrelated sentences, gets a lower P.
- `.similarity` (sub-score): the graded form, mean over the distinct questions of
  clear_i · rescaled_i. It is not in the score: on the relevance dev pairs it ranked a partial
  answer above the complete one (a partial answer's questions all match one part of the
  question well; a complete answer's spread over its parts), and every product with it ranked
  worse in English than related × completeness (research/notes.md, *answer_relevance and
  context_relevance: round 10*).
- `.focus` (option `focus`): for each sentence of the answer (text.split_sentences) the judge
  gives P(it gives something the question asks for); the factor is the mean P, `.focus` =
  sentences with P ≥ ½ / sentences. Off by default: near chance with the 1.5B judge, and it
  cost pairs in both languages when multiplied in.

A judge without probabilities gives its written digits (P = 0 or 1). The mean probability, not
the ½-cut share, is the factor: the cut shares flipped on P near ½ and ranked worse. Sub-scores:
`.related`, `.similarity`, `.completeness` (and `.focus`).

Options (`--metric-option answer_relevance.<option>=<value>`): `reasons` (a short reason before
each clear flag, off by default: research/notes.md, *answer_relevance without reasons*);
`completeness` (true; false leaves that factor out and its requests unsent); `focus` (false;
true multiplies the focus factor in and sends its requests).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from localeval.data.dataset import Sample
from localeval.judge.schemas import question_list, verdict_list
from localeval.metrics.base import MetricContext, MetricResult, metric
from localeval.metrics.claims.verdicts import ITEMS_PER_REQUEST, p_yes
from localeval.metrics.similarity import rescale
from localeval.text import json_safe, normalize, split_sentences

NAME = "answer_relevance"
MAX_PARTS = 4
"""Most parts a question is split into (QuestionParts.count's largest digit)."""
PART_CHARS = 200
DOUBT_WEIGHT = 0.1
"""The weight of the expected share in `related` (the written share has the rest)."""


class AnswerRelevanceOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reasons: bool = Field(False, description="a short reason before each clear flag")
    completeness: bool = Field(True, description="multiply by the share of the question's "
                                                 "parts the answer gives")
    focus: bool = Field(False, description="multiply by the share of the answer's sentences "
                                           "that give something the question asks for")


class QuestionParts(BaseModel):
    """What a question asks for: how many separate things, written first, then one short
    question per part (usually one)."""

    count: Literal[1, 2, 3, 4] = Field(description="how many separate things the question "
                                                   "asks for")
    parts: list[Annotated[str, Field(max_length=PART_CHARS)]] = Field(
        min_length=1, max_length=MAX_PARTS, description="one short question per thing asked")


def with_p(written: list[int], probs: list[Any]) -> list[dict[str, Any]]:
    """Each written 0/1 flag with P(1): the judge's probability when it gave one for every flag
    (the hard flag is then P ≥ ½), else the written digit."""
    found = [p_yes(f) for f in probs] if len(probs) == len(written) else [None] * len(written)
    out = []
    for digit, p in zip(written, found, strict=True):
        if p is None:
            out.append({"verdict": digit, "p": float(digit)})
        else:
            out.append({"verdict": int(p >= 0.5), "p": round(p, 4)})
    return out


def verdicts(answer: BaseModel, probs: list[Any]) -> list[dict[str, Any]]:
    """Each verdict of a bare verdict list with P(1) (`with_p`)."""
    return with_p([int(v.verdict) for v in answer.verdicts], probs)  # type: ignore[attr-defined]


def share(items: list[dict[str, Any]], key: str) -> float:
    return sum(i[key] for i in items) / len(items)


async def question_baseline(ctx: MetricContext, question: str) -> float:
    """b_q: the mean cosine of the question and the bundled unrelated sentences of the sample's
    language (at most 0.99)."""
    from localeval.models.baseline_text import SENTENCES

    store = await ctx.embedder()
    others = SENTENCES.get(ctx.language, SENTENCES["en"])
    cosines = await store.cosines(question, list(others))
    return min(0.99, sum(cosines) / len(cosines))


async def similarity(sample: Sample, ctx: MetricContext, options: AnswerRelevanceOptions
                     ) -> tuple[list[dict[str, Any]], float]:
    """The distinct generated questions, each with its flag, cosine and rescaled cosine, and
    the question's baseline b_q."""
    n = ctx.settings.answer_relevance_n
    found, probs = await ctx.ask_probs(
        "answer_relevance_questions", question_list(n, options.reasons), ["clear"],
        answer=sample.answer, n=n, explain=options.reasons)
    items = found.questions  # type: ignore[attr-defined]
    flags = with_p([int(item.clear) for item in items], probs)
    generated = []
    seen: set[str] = set()
    for item, flag in zip(items, flags, strict=True):
        key = normalize(item.question)
        if key and key not in seen:
            seen.add(key)
            generated.append({**item.model_dump(), "clear": flag["verdict"], "p_clear": flag["p"]})
    question = sample.question or ""
    base = await question_baseline(ctx, question) if generated else 0.0
    cosines = await (await ctx.embedder()).cosines(question, [g["question"] for g in generated])
    for g, cosine in zip(generated, cosines, strict=True):
        g["cosine"] = cosine
        g["rescaled"] = rescale(cosine, base)
    return generated, base


async def parts_of(ctx: MetricContext, question: str) -> list[str]:
    """The parts of the question (`listed_parts`)."""
    return (await listed_parts(ctx, question))[0]


async def listed_parts(ctx: MetricContext, question: str) -> tuple[list[str], int, list[str]]:
    """The parts of the question, as the judge lists them from the question alone (repeats and
    empty ones dropped, then the first `count` kept; the whole question when none is left), the
    judge's count, and the distinct parts it wrote past its count (dropped)."""
    found = await ctx.ask("answer_relevance_parts", QuestionParts, question=question,
                          max_parts=MAX_PARTS)
    parts: list[str] = []
    seen: set[str] = set()
    for part in found.parts:  # type: ignore[attr-defined]
        key = normalize(part)
        if any(ch.isalnum() for ch in key) and key not in seen:
            seen.add(key)
            parts.append(part.strip())
    count = int(found.count)  # type: ignore[attr-defined]
    return parts[:count] or [question.strip()], count, parts[count:]


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
        description="share of the questions generated from the answer that it answers "
                    "clearly and that are closer to the real one than unrelated text (near 0 "
                    "when evasive; the judge's P(clear) breaks ties) × mean P(each part of the "
                    "question is answered)")
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
    clear = sum(bool(g["clear"] and g["rescaled"] > 0) for g in generated) / len(generated)
    expected = sum(g["p_clear"] * (g["rescaled"] > 0) for g in generated) / len(generated)
    related = (1 - DOUBT_WEIGHT) * clear + DOUBT_WEIGHT * expected
    details: dict[str, Any] = {"generated_questions": generated, "distinct": len(generated),
                               "baseline": base, "related": related, "clear_share": clear,
                               "expected_clear_share": expected, "similarity": sim,
                               "raw": raw}
    scores: dict[str, float | None] = {f"{NAME}.related": related, f"{NAME}.similarity": sim}
    score = related
    if options.completeness:
        listed, count, dropped = await listed_parts(ctx, question)
        parts = await coverage(ctx, question, answer, listed)
        details |= {"parts": parts, "parts_count": count, "parts_dropped": dropped}
        scores[f"{NAME}.completeness"] = details["completeness"] = share(parts, "answered")
        score *= share(parts, "p_answered")
    if options.focus:
        judged = await asked(ctx, question, sentences)
        details["sentences"] = judged
        scores[f"{NAME}.focus"] = details["focus"] = share(judged, "asked")
        score *= share(judged, "p_asked")
    scores[NAME] = score
    return MetricResult(scores=scores, details=details)
