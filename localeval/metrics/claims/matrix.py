"""The claim matrix of one sample, and RAGChecker's diagnosis read off it.

Rows are claims: the answer's and the ground truth's, split as answer_correctness splits them
(claims/score.claims_of). Columns are verdicts, each decided as every support verdict is
(claims/verdicts.py: P(supported) against τ, the checks):

- an answer claim × the ground truth: is it correct? (answer_correctness's own request);
- a ground-truth claim × the answer: does the answer state it? (answer_correctness's own);
- each claim × each context, one context at a time: does this chunk entail it? The answer's
  claims are asked with faithfulness's template, the ground truth's with context_recall's; with
  one context the request is the very request faithfulness (resp. context_recall) makes.

Identical requests of a sample are asked once (metrics/base.MetricContext, and the answer cache
across runs), so a run with faithfulness, context_recall and answer_correctness pays only for
the per-chunk requests of samples with two or more contexts; those are asked together, and
share their template's prefix in the engine (judge/llamacpp/prefix_pool.py). Which requests are
made never depends on a verdict, so `run --estimate` counts them exactly.

A chunk is relevant when it entails at least one ground-truth claim. Each answer claim falls in
one class (`ANSWER_CLASSES`), each ground-truth claim in one of `TRUTH_CLASSES`; the scores
(`diagnose`) are shares of those classes, with RAGChecker's (Ru et al. 2024) denominators.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from localeval.data.dataset import Sample
from localeval.metrics.base import MetricContext
from localeval.metrics.claims.record import Verdict
from localeval.metrics.claims.score import claims_of, each_against_other, nonempty
from localeval.metrics.claims.split import Claim, TextClaims, asserts_nothing
from localeval.metrics.claims.verdicts import Support, support_verdicts
from localeval.names import GREEDY, WEIGHTED
from localeval.text import sentences_of_all

ANSWER_STEP, TRUTH_STEP = "faithfulness_verdicts", "context_recall_verdicts"
"""The templates that judge one claim of the answer, resp. of the ground truth, against one
context: faithfulness's and context_recall's."""

ANSWER_CLASSES = {
    "supported": "correct and entailed by a context",
    "self_knowledge": "correct, entailed by no context",
    "noise_relevant": "wrong, entailed by a relevant context",
    "noise_irrelevant": "wrong, entailed by an irrelevant context only",
    "hallucination": "wrong, entailed by no context",
}
"""The class of an answer claim (its `class` in the results), and what it means."""
TRUTH_CLASSES = {
    "used": "retrieved and stated by the answer",
    "unused": "retrieved, but the answer does not state it (generator)",
    "not_retrieved": "in no context (retriever)",
    "retrieved": "in a context (the answer not read: claim_recall alone)",
}
"""The class of a ground-truth claim."""
NO_CONTEXT = "every context is empty"
"""Why a sample without a non-empty context has no diagnosis: there is no retrieval to
diagnose (metrics/diagnosis.py asks nothing for it)."""
NO_TRUTH = "the ground truth makes no claim"
"""Why a sample whose ground truth makes no claim has no diagnosis: its answer claims are
right or wrong against nothing (the report leaves them out)."""


@dataclass(frozen=True)
class Row:
    """One claim: its text and sentence, its verdict against the other text (the ground truth
    for an answer claim, the answer for a ground-truth claim; None when not asked), and its
    verdict against each context, in context order."""

    statement: str
    sentence: int
    other: Verdict | None
    chunks: tuple[Verdict, ...]

    @property
    def entailed_by(self) -> tuple[int, ...]:
        """The 0-based contexts whose verdict is supported."""
        return tuple(k for k, v in enumerate(self.chunks) if v.verdict)


@dataclass(frozen=True)
class ClaimMatrix:
    """A sample's matrix: the answer's rows, the ground truth's rows, how many contexts, the
    judge requests retried split smaller, whether the answer side was asked (claim_recall
    alone asks only the ground truth's claims against the contexts), and each chunk's 1-based
    number among the sample's contexts (None: 1..n_chunks; an empty context is no chunk)."""

    answer: tuple[Row, ...]
    truth: tuple[Row, ...]
    n_chunks: int
    retries: int = 0
    answer_side: bool = True
    numbers: tuple[int, ...] | None = None

    def number(self, k: int) -> int:
        """The 1-based number, among the sample's contexts, of chunk `k` (0-based)."""
        return self.numbers[k] if self.numbers is not None else k + 1

    @property
    def relevant_numbers(self) -> list[int]:
        """The sample's numbers of the relevant contexts."""
        return [self.number(k) for k, r in enumerate(self.relevant) if r]

    @property
    def relevant(self) -> tuple[bool, ...]:
        """Per context: does it entail at least one ground-truth claim?"""
        return tuple(any(k in r.entailed_by for r in self.truth) for k in range(self.n_chunks))

    def answer_class(self, row: Row) -> str:
        """The class of an answer row (`ANSWER_CLASSES`); RAGChecker's irrelevant noise is
        exclusive: a claim a relevant context entails is relevant noise."""
        relevant = self.relevant
        correct = bool(row.other and row.other.verdict)
        if not row.entailed_by:
            return "self_knowledge" if correct else "hallucination"
        if correct:
            return "supported"
        return ("noise_relevant" if any(relevant[k] for k in row.entailed_by)
                else "noise_irrelevant")

    def truth_class(self, row: Row) -> str:
        """The class of a ground-truth row (`TRUTH_CLASSES`)."""
        if not row.entailed_by:
            return "not_retrieved"
        if row.other is None:
            return "retrieved"
        return "used" if row.other.verdict else "unused"

    def answer_json(self) -> list[dict[str, Any]]:
        """The answer's claims as results.jsonl holds them: class, correct (0/1), the 1-based
        contexts that entail it (numbered as the sample numbers them)."""
        return [{"statement": r.statement, "sentence": r.sentence, "class": self.answer_class(r),
                 "correct": r.other.verdict if r.other else None,
                 "contexts": [self.number(k) for k in r.entailed_by]} for r in self.answer]

    def truth_json(self) -> list[dict[str, Any]]:
        """The ground truth's claims: class, stated (0/1: the answer states it), contexts."""
        return [{"statement": r.statement, "sentence": r.sentence, "class": self.truth_class(r),
                 "stated": r.other.verdict if r.other else None,
                 "contexts": [self.number(k) for k in r.entailed_by]} for r in self.truth]


def _asks(found: TextClaims, statements_mode: bool) -> set[int]:
    """The claims asked beside their verdict whether they assert a fact, as faithfulness and
    context_recall ask them (claims/score.judge_claims): a sentence that may assert nothing,
    judged as written."""
    return {k for k, a in enumerate(found.items)
            if asserts_nothing(found.sentences[a.sentence - 1])
            and (not statements_mode or a.statement == found.sentences[a.sentence - 1])}


async def _by_chunk(ctx: MetricContext, step: str, found: TextClaims, question: str | None,
                    contexts: list[str]) -> list[Support]:
    """Each claim of `found` against each context alone, the requests asked together."""
    if not found.items:
        return [Support([]) for _ in contexts]
    asks = _asks(found, ctx.settings.claims == "statements")
    return list(await asyncio.gather(*(
        support_verdicts(ctx, step, found.texts, split="contexts", cut=sentences_of_all([c]),
                         contexts=[c], question=question, material_name="context", asks=asks)
        for c in contexts)))


def _rows(items: list[Claim], other: Support | None, chunks: list[Support]) -> tuple[Row, ...]:
    rows = []
    for i, a in enumerate(items):
        verdicts = tuple(s.verdicts[i] for s in chunks)
        if verdicts and all(v.asserts_fact == 0 for v in verdicts):
            continue  # the judge found, against every context, that it asserts nothing
        rows.append(Row(a.statement, a.sentence, other.verdicts[i] if other else None, verdicts))
    return tuple(rows)


async def claim_matrix(ctx: MetricContext, sample: Sample, *,
                       answer_side: bool = True) -> ClaimMatrix:
    """The sample's matrix (module doc). `answer_side=False`: the ground truth's claims
    against the contexts only (what claim_recall needs: no answer is read)."""
    contexts = nonempty(sample.contexts)
    numbers = tuple(i for i, c in enumerate(sample.contexts or [], start=1) if c.strip())
    question = sample.question
    g_found = await claims_of(ctx, sample.ground_truth or "", question)
    if not answer_side:
        g_chunks = await _by_chunk(ctx, TRUTH_STEP, g_found, question, contexts)
        return ClaimMatrix((), _rows(g_found.items, None, g_chunks), len(contexts),
                           g_found.retries + sum(s.retries for s in g_chunks), answer_side=False,
                           numbers=numbers)
    a_found = await claims_of(ctx, sample.answer or "", question)
    (a_other, g_other), a_chunks, g_chunks = await asyncio.gather(
        each_against_other(ctx, sample, a_found.texts, g_found.texts),
        _by_chunk(ctx, ANSWER_STEP, a_found, question, contexts),
        _by_chunk(ctx, TRUTH_STEP, g_found, question, contexts))
    retries = (a_found.retries + g_found.retries + a_other.retries + g_other.retries
               + sum(s.retries for s in [*a_chunks, *g_chunks]))
    return ClaimMatrix(_rows(a_found.items, a_other, a_chunks),
                       _rows(g_found.items, g_other, g_chunks), len(contexts), retries,
                       numbers=numbers)


@dataclass(frozen=True)
class Diagnosis:
    """The diagnosis scores of one sample (None where undefined) and, for each undefined one,
    why."""

    scores: dict[str, float | None]
    reasons: dict[str, str]


def _share(part: int, whole: int) -> float:
    return part / whole


TRUTH_KEYS = ("claim_recall", "context_utilization")
ANSWER_KEYS = ("noise_sensitivity", "noise_sensitivity.relevant", "noise_sensitivity.irrelevant",
               "hallucination", "self_knowledge")
"""The diagnosis scores of the ground truth's claims, resp. of the answer's."""


def _probs(verdicts: tuple[Verdict | None, ...]) -> list[float] | None:
    """The verdicts' P(verdict = 1), or None when one has none (or is not asked)."""
    out = [v.p_yes if v is not None else None for v in verdicts]
    return None if any(p is None for p in out) else [p for p in out if p is not None]


def _any(ps: list[float]) -> float:
    """P(at least one of independent events of probabilities `ps`)."""
    none = 1.0
    for p in ps:
        none *= 1.0 - p
    return 1.0 - none


def _weighted(m: ClaimMatrix) -> dict[str, float]:
    """The probability-weighted form of each score `diagnose` defines: each verdict's 0/1
    replaced by its P(verdict = 1) (`Verdict.p_yes`, 0 where a check overruled it), the
    verdicts taken as independent, so that each class's count is its expected count:

    - a ground-truth claim is retrieved with e = 1 − Π_k (1 − p_k) over the contexts; a
      context k is relevant with r_k = 1 − Π_t (1 − p_tk) over the ground-truth claims;
    - an answer claim, correct with c and entailed by context k with p_k, is in a context
      with E = 1 − Π_k (1 − p_k), in a relevant one with R = 1 − Π_k (1 − p_k·r_k): noise
      (1 − c)·E, of which relevant (1 − c)·R and irrelevant (1 − c)·(E − R), hallucination
      (1 − c)·(1 − E), self_knowledge c·(1 − E), supported c·E (the five sum to 1);
    - claim_recall = mean e; context_utilization = Σ e·s / Σ e (s: P(the answer states it)),
      the ratio of the expected counts; each answer score the mean of its class's P.

    A score is left out when a verdict it reads has no probability (a judge without them)."""
    out: dict[str, float] = {}
    t_chunks = [_probs(r.chunks) for r in m.truth]
    t_in = [ps for ps in t_chunks if ps is not None]
    if not t_in or len(t_in) < len(t_chunks):
        return out
    e = [_any(ps) for ps in t_in]
    out["claim_recall"] = sum(e) / len(e)
    if not m.answer_side:
        return out
    stated = _probs(tuple(r.other for r in m.truth))
    if stated is not None and sum(e) > 0:
        out["context_utilization"] = sum(x * y for x, y in zip(e, stated, strict=True)) / sum(e)
    relevant = [_any([ps[k] for ps in t_in]) for k in range(m.n_chunks)]
    correct = _probs(tuple(r.other for r in m.answer))
    a_chunks = [_probs(r.chunks) for r in m.answer]
    a_in = [ps for ps in a_chunks if ps is not None]
    if not m.answer or correct is None or len(a_in) < len(a_chunks):
        return out
    shares = dict.fromkeys(ANSWER_KEYS, 0.0)
    for c, ps in zip(correct, a_in, strict=True):
        in_any = _any(ps)
        in_relevant = _any([p * r for p, r in zip(ps, relevant, strict=True)])
        shares["noise_sensitivity"] += (1.0 - c) * in_any
        shares["noise_sensitivity.relevant"] += (1.0 - c) * in_relevant
        shares["noise_sensitivity.irrelevant"] += (1.0 - c) * (in_any - in_relevant)
        shares["hallucination"] += (1.0 - c) * (1.0 - in_any)
        shares["self_knowledge"] += c * (1.0 - in_any)
    out.update({k: v / len(m.answer) for k, v in shares.items()})
    return out


def diagnose(m: ClaimMatrix) -> Diagnosis:
    """RAGChecker's scores of one matrix (docs/metrics.md, *Diagnosis*):

    - claim_recall = ground-truth claims some context entails / ground-truth claims;
    - context_utilization = of those, the share the answer states;
    - noise_sensitivity.relevant / .irrelevant = answer claims in that noise class / answer
      claims (undefined without a relevant, resp. an irrelevant, context);
      noise_sensitivity = their sum (wrong answer claims some context entails);
    - hallucination, self_knowledge = answer claims in that class / answer claims.

    Each defined score is also written as `KEY.greedy` (the same figure) and, where every
    verdict it reads has a probability, as `KEY.weighted` (`_weighted`). Undefined (a reason,
    never 0; no `.greedy` or `.weighted` either): no context, a side without claims, no
    retrieved ground-truth claim (context_utilization)."""
    d = _greedy(m)
    weighted = _weighted(m)
    scores: dict[str, float | None] = {}
    for key, value in d.scores.items():
        scores[key] = value
        if value is not None:
            scores[key + GREEDY] = value
            if key in weighted:
                scores[key + WEIGHTED] = weighted[key]
    return Diagnosis(scores, d.reasons)


def _greedy(m: ClaimMatrix) -> Diagnosis:
    """The scores of the verdicts (0/1), each undefined one with its reason (`diagnose`)."""
    scores: dict[str, float | None] = {}
    reasons: dict[str, str] = {}

    def undefined(key: str, why: str) -> None:
        scores[key], reasons[key] = None, why

    truth_keys, answer_keys = TRUTH_KEYS, ANSWER_KEYS
    if not m.n_chunks:
        for key in (*truth_keys, *answer_keys):
            undefined(key, NO_CONTEXT)
        return Diagnosis(scores, reasons)
    t_classes = [m.truth_class(r) for r in m.truth]
    if not t_classes:
        for key in (*truth_keys, *answer_keys):
            undefined(key, NO_TRUTH)
        return Diagnosis(scores, reasons)
    retrieved = [c for c in t_classes if c != "not_retrieved"]
    scores["claim_recall"] = _share(len(retrieved), len(t_classes))
    if not m.answer_side:
        return Diagnosis(scores, reasons)
    if retrieved:
        scores["context_utilization"] = _share(retrieved.count("used"), len(retrieved))
    else:
        undefined("context_utilization", "no context entails a ground-truth claim")
    if not m.answer:
        for key in answer_keys:
            undefined(key, "the answer makes no claim")
        return Diagnosis(scores, reasons)
    a_classes = [m.answer_class(r) for r in m.answer]
    n = len(a_classes)
    relevant = m.relevant
    rel, irr = a_classes.count("noise_relevant"), a_classes.count("noise_irrelevant")
    scores["noise_sensitivity"] = _share(rel + irr, n)
    if any(relevant):
        scores["noise_sensitivity.relevant"] = _share(rel, n)
    else:
        undefined("noise_sensitivity.relevant", "no context entails a ground-truth claim")
    if not all(relevant):
        scores["noise_sensitivity.irrelevant"] = _share(irr, n)
    else:
        undefined("noise_sensitivity.irrelevant",
                  "every context entails a ground-truth claim (no irrelevant one)")
    scores["hallucination"] = _share(a_classes.count("hallucination"), n)
    scores["self_knowledge"] = _share(a_classes.count("self_knowledge"), n)
    return Diagnosis(scores, reasons)
