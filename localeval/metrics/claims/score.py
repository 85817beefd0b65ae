"""The claim metrics' body: claims → evidence → judge → verdict → score.

faithfulness and context_recall (`claims_supported`) take a text's sentences, let the rules of
claims/split.py settle the few that need no judge, turn the rest into claims (the sentences,
or with `claims = "statements"` the judge's statements, claims/split.py), judge each
against the whole material (an instruction in it is fenced and flagged, metrics/shield.py),
narrowed to the passages that bear on it, with their frame (claims/evidence.py,
claims/verdicts.py), and score the share supported. answer_correctness
takes the claims of its two texts from `claims_of` and judges each against the other
(`each_against_other`, shared with the claim matrix).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from localeval.data.dataset import Sample
from localeval.metrics.base import MetricContext, MetricResult
from localeval.metrics.claims.record import ClaimRecord, Verdict
from localeval.metrics.claims.split import (
    TextClaims,
    anchored_statements,
    rule_out,
    sentence_claims,
    sentence_items,
    true_to_sentence,
)
from localeval.metrics.claims.verdicts import Support, support_verdicts
from localeval.names import GREEDY, WEIGHTED
from localeval.text import sentences_of, sentences_of_all

ALL_SUPPORTED = "all_supported"
"""The sub-score (`faithfulness.all_supported`) a true restatement cannot raise: 1 when every
claim is supported, 0 when any is not. The mean share rewards padding (a false claim beside a
true restatement scores 0.5 where the false claim alone scores 0); this never does."""


def nonempty(texts: list[str] | None) -> list[str]:
    return [t for t in texts or [] if t.strip()]


def mean_p(verdicts: Sequence[Verdict]) -> float | None:
    """The mean P(verdict = 1) of the verdicts (`Verdict.p_yes`): a metric's `.weighted` score;
    None without verdicts, or when the judge gave no probability for one of them."""
    probs = [v.p_yes for v in verdicts]
    if not probs or any(p is None for p in probs):
        return None
    return sum(probs) / len(probs)  # type: ignore[arg-type]


async def claims_of(ctx: MetricContext, text: str, question: str | None) -> TextClaims:
    """The claims of every sentence of `text` (answer_correctness's both sides): the sentences
    themselves (a fragment with its question), or with `claims = "statements"` the anchored
    statements the judge writes."""
    cut = sentences_of(text)
    if ctx.settings.claims == "sentences":
        sentences = list(cut.items)
        return TextClaims(sentences, sentence_claims(sentences, question, ctx.language, set()))
    return await anchored_statements(ctx, cut, question)


@dataclass
class Claims:
    """Per claim (in sentence order) its record: text, sentence number and verdict; the
    sentences that claim nothing; pieces of the material, retried requests, rules fired."""

    sentences: list[str]
    statements: list[ClaimRecord] = field(default_factory=list)
    no_claim: list[int] = field(default_factory=list)
    pieces: int = 1
    retries: int = 0
    rules: Counter[str] = field(default_factory=Counter)

    @property
    def supported(self) -> int:
        return sum(s.support.verdict for s in self.statements)

    def details(self) -> dict[str, Any]:
        out: dict[str, Any] = {"sentences": self.sentences,
                               "statements": [s.as_json() for s in self.statements]}
        if self.no_claim:
            out["no_claim"] = self.no_claim
        if self.rules:
            out["rules"] = dict(sorted(self.rules.items()))
        if self.pieces > 1:
            out["context_pieces"] = self.pieces
        if self.retries:
            out["judge_retries"] = self.retries
        return out


async def judge_claims(ctx: MetricContext, step: str, text: str, question: str | None,
                       material: list[str], material_name: str = "context") -> Claims:
    """The claims of `text`, each with its verdict against `material` (the contexts). Each
    text is split into sentences here, once (text.sentences_of), and handed to every step."""
    cut, contexts = sentences_of(text), sentences_of_all(material)
    ruled = rule_out(cut, question, contexts, material_name)
    sentences = ruled.sentences
    claims = Claims(sentences, rules=ruled.rules)
    if ctx.settings.claims == "statements":
        # a quote and a question are not skipped: the judge reads them like any sentence
        skip = ruled.found.skip
        written = await anchored_statements(ctx, cut, question, skip=skip)
        items = true_to_sentence(written.items, sentences, question, claims.rules, skip)
        asks = {i + 1 for i in ruled.found.asks}
        for a in items:  # a question kept as its own statement is asked as in "sentences"
            a.asks = a.sentence in asks and a.statement == sentences[a.sentence - 1]
        claims.retries = written.retries
    else:
        items = sentence_items(ruled, question, ctx.language, material_name)
    entries = ruled.entries
    if items:
        support = await support_verdicts(ctx, step, [a.statement for a in items],
                                         split="contexts", cut=ruled.material,
                                         contexts=[m.text for m in ruled.material],
                                         question=question, material_name=material_name,
                                         asks={k for k, a in enumerate(items) if a.asks})
        quoted = {i + 1 for i in ruled.found.quoted}  # judged too: its frame may deny it
        for a, v in zip(items, support.verdicts, strict=True):
            # the rule and the judge agree it asserts nothing, and leaving it out cannot raise
            # the score: only a sentence the judge found supported leaves (an unsupported one,
            # "泰桥是罗马工程师设计的对吗？", stays a claim whatever its form)
            if a.asks and v.asserts_fact == 0 and v.verdict == 1:
                claims.no_claim.append(a.sentence)
                claims.rules["asserts nothing (judge agreed)"] += 1
                continue
            entries.append((a.sentence, ClaimRecord(a.statement, a.sentence, v, a.extracted,
                                                    a.sentence in quoted)))
        claims.pieces, claims.retries = support.pieces, claims.retries + support.retries
    claims.no_claim = sorted(set(claims.no_claim))
    claims.statements = [e for _, e in sorted(entries, key=lambda x: x[0])]
    claims.rules = Counter({k: v for k, v in claims.rules.items() if v})
    return claims


async def claims_supported(ctx: MetricContext, name: str, step: str, text: str,
                           question: str | None, contexts: list[str] | None,
                           *, whose: str, all_supported: bool = False) -> MetricResult:
    """Score `name` = the share of `text`'s claims the contexts support (`step`: the verdicts'
    template), also as `name.greedy`; `name.weighted` = the mean P(supported), the judge's own
    confidence, which breaks ties; with `all_supported`, `name.all_supported` (ALL_SUPPORTED).
    Unscored when every context is empty, or `whose` text ("the answer") has no sentence or makes
    no claim."""
    contexts = nonempty(contexts)
    if not contexts:
        return MetricResult.unscored(name, "every context is empty")
    claims = await judge_claims(ctx, step, text, question, contexts)
    if not claims.sentences:
        return MetricResult.unscored(name, f"{whose} has no sentence", statements=[])
    if not claims.statements:
        return MetricResult.unscored(name, f"{whose} makes no claim: every sentence is a "
                                     "question the judge found asserts nothing",
                                     **claims.details())
    greedy = claims.supported / len(claims.statements)
    scores = {name: greedy, name + GREEDY: greedy}
    weighted = mean_p([s.support for s in claims.statements])
    if weighted is not None:
        scores[name + WEIGHTED] = weighted
    if all_supported:
        scores[f"{name}.{ALL_SUPPORTED}"] = float(claims.supported == len(claims.statements))
    return MetricResult(scores=scores, details=claims.details())


async def each_against_other(ctx: MetricContext, sample: Sample, a_statements: list[str],
                             g_statements: list[str]) -> tuple[Support, Support]:
    """The answer's claims judged against the ground truth, and the ground truth's against the
    answer: answer_correctness's two requests (the claim matrix asks the very same ones,
    claims/matrix.py, so a run of both asks them once)."""
    answer, truth = sample.answer or "", sample.ground_truth or ""
    a_support = (await support_verdicts(ctx, "answer_correctness_answer", a_statements,
                                        split="reference", reference=[truth],
                                        question=sample.question,
                                        material_name="reference answer")
                 if a_statements else Support([]))
    g_support = (await support_verdicts(ctx, "answer_correctness_reference", g_statements,
                                        split="answer", answer=[answer],
                                        question=sample.question, material_name="answer",
                                        details=False)
                 if g_statements else Support([]))
    return a_support, g_support

