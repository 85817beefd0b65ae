"""citation_recall and citation_precision(q, a, C): do the answer's citation markers hold?

An answer cites with markers `[n]`, `[n][m]`, `[n, m]` (also `，`, `、` between numbers) or
`【n】`, 1-based over the row's contexts as given (an empty context keeps its number). A
marker's numbers are passage indices of 1 to 3 digits: a bracket holding a longer number (a
year: "[2019]", "[1, 2019]") or anything but numbers ("[sic]", "[citation needed]") is prose,
left in its sentence, and no citation. The
answer is split into sentences (text.split_sentences, zh and en); a marker written after a
sentence's end punctuation ("… 1889. [2]", "…建成。【2】") belongs to that sentence, and a
sentence's markers are its citations. What is judged is the sentence without its markers
(claims/split.claim_texts: a fragment with its question, a leading "It" with its referent).

The judge is asked two things, grammar-constrained, 0/1 each:
- whether each sentence states a fact (`citations_fact`, one request per ≤16 sentences): a
  greeting, a transition or "I hope this helps." states none and counts in neither metric;
- whether a set of cited passages supports a sentence: faithfulness' own verdict request
  (`faithfulness_verdicts`, claims/verdicts.support_verdicts: τ on P(supported), the check of
  numbers and names the passages lack), one sentence against the cited passages as the
  contexts. The same (sentence, passages) pair is the same request: asked once per sample
  (MetricContext), and free in a later run (the answer cache).

Per ALCE (Gao et al. 2023, princeton-nlp/ALCE eval.py `compute_autoais`):
- citation_recall = fact sentences whose cited passages together support them / fact
  sentences. A fact sentence without a citation counts against it.
- citation_precision = citations that hold / citations of fact sentences. A citation holds when
  its sentence is supported by all its citations together and, if the sentence has several,
  it is needed: it supports the sentence alone, or the other citations without it do not.
  (ALCE: "condition A" / "condition B".)

Where this differs from ALCE, and why:
- a marker past the contexts ("[7]" with 5 contexts) is named in the details (`out_of_range`)
  and is a citation that does not hold; the sentence is judged on its other citations. ALCE
  scores such a sentence 0 and leaves its citations out of precision's denominator: a system
  that cites past the end would gain precision.
- an answer with no marker at all: citation_recall 0 (every fact sentence is uncited: ALCE's 0
  too), with `no_citations` in the details; citation_precision is unscored with the reason
  (ALCE writes 0: there is no citation to be precise or not).
- every citation of a sentence is judged (ALCE keeps the first 3 by default).
- sentences that state no fact (asked of the judge) count in neither score; ALCE counts all.

The requests do not depend on the judge's answers (every cited sentence's passages, and for
one with several citations each single one and each set without one, are asked whatever the
fact answer and the joint verdict), so `run --estimate` counts them exactly. Run only when
named: `--metrics citation_recall,citation_precision` (or `--metrics citations`).
"""

from __future__ import annotations

import asyncio
import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field

from localeval.data.dataset import Sample
from localeval.judge.interface import judge_p_yes
from localeval.judge.schemas import exactly
from localeval.metrics.base import GROUPS, MetricContext, MetricResult, metric
from localeval.metrics.claims.record import Verdict
from localeval.metrics.claims.split import claim_texts
from localeval.metrics.claims.verdicts import items_per_request, support_verdicts
from localeval.names import GREEDY, WEIGHTED
from localeval.text import json_safe, split_sentences

FACT_STEP = "citations_fact"
SUPPORT_STEP = "faithfulness_verdicts"

_NUMBERS = r"\d{1,3}(?:\s*[,，、]\s*\d{1,3})*"
MARKER = re.compile(rf"[\[［]\s*({_NUMBERS})\s*[\]］]|【\s*({_NUMBERS})\s*】")
"""One citation marker: [1], [1, 2], ［1］, 【1】, 【1，2】; each number 1 to 3 digits (a
passage index), so a bracketed year ("[2019]") is prose, not a marker."""
_MARKER_RUN = rf"(?:\s*(?:{MARKER.pattern}))+"
_END_THEN_MARKERS = re.compile(rf"([.!?。！？；…]+[\"'”’」』）)]*)({_MARKER_RUN})")
"""End punctuation followed by markers: the markers are moved before it, into their sentence."""
_STRIP = re.compile(rf"\s*(?:{MARKER.pattern})")


@dataclass(frozen=True)
class CitedSentence:
    """One sentence of the answer: as written (markers in), without its markers, the claim
    judged (claim_texts), its citations within the contexts (1-based, first-seen order, each
    once) and its markers past them (or 0)."""

    text: str
    bare: str
    claim: str
    cites: tuple[int, ...]
    out_of_range: tuple[int, ...]

    @property
    def cited(self) -> bool:
        return bool(self.cites or self.out_of_range)


def marker_numbers(text: str) -> list[int]:
    """The numbers of every marker in `text`, in order ("[1][2]", "[1, 2]" → [1, 2])."""
    out: list[int] = []
    for m in MARKER.finditer(text):
        out += [int(n) for n in re.findall(r"\d+", m.group(1) or m.group(2))]
    return out


def cited_sentences(answer: str, n_contexts: int, question: str | None,
                    language: str) -> list[CitedSentence]:
    """The answer's sentences with their citations (module doc). A piece that is markers only
    (a line "[1][2]") gives its markers to the sentence before it."""
    moved = _END_THEN_MARKERS.sub(lambda m: m.group(2) + m.group(1), answer)
    pieces: list[tuple[str, str, list[int]]] = []
    for sentence in split_sentences(moved):
        bare = _STRIP.sub("", sentence).strip()
        numbers = marker_numbers(sentence)
        if not bare.strip(" ,，、;；.。") and pieces:
            text, prev_bare, prev = pieces[-1]
            pieces[-1] = (f"{text} {sentence}", prev_bare, prev + numbers)
        elif bare.strip(" ,，、;；.。"):
            pieces.append((sentence, bare, numbers))
    claims = claim_texts([bare for _, bare, _ in pieces], question, language)
    out = []
    for (text, bare, numbers), claim in zip(pieces, claims, strict=True):
        seen = list(dict.fromkeys(numbers))
        out.append(CitedSentence(text, bare, claim,
                                 tuple(n for n in seen if 1 <= n <= n_contexts),
                                 tuple(n for n in seen if not 1 <= n <= n_contexts)))
    return out


class SentenceFact(BaseModel):
    fact: Literal[0, 1] = Field(description="1 = the sentence states a fact, 0 = it states none")


@functools.lru_cache(maxsize=64)
def sentence_facts(n: int) -> type[BaseModel]:
    """Exactly `n` fact answers, one per numbered sentence (the name is part of the cache key)."""
    return exactly(f"SentenceFacts{n}", "facts", SentenceFact, n)


@dataclass(frozen=True)
class Fact:
    """Whether a sentence states a fact: 1/0, the judge's P(fact = 1) when it gives one."""

    fact: int
    p: float | None


async def facts_of(ctx: MetricContext, sentences: Sequence[str], question: str | None
                   ) -> list[Fact]:
    """Per sentence, whether it states a fact (P(fact = 1) ≥ 0.5, else the written digit)."""
    size = items_per_request(ctx)
    out: list[Fact] = []
    for start in range(0, len(sentences), size):
        group = [json_safe(s) for s in sentences[start:start + size]]
        answer, probs = await ctx.ask_probs(FACT_STEP, sentence_facts(len(group)), ["fact"],
                                            question=question or "", sentences=group)
        found = probs if len(probs) == len(group) else [None] * len(group)
        for item, entry in zip(answer.facts, found, strict=True):  # type: ignore[attr-defined]
            p = judge_p_yes(entry) if entry is not None else None
            out.append(Fact(int(p >= 0.5) if p is not None else int(item.fact),
                            round(p, 4) if p is not None else None))
    return out


@dataclass
class Judged:
    """One answer's citations judged: its sentences, their facts, and the verdict of each
    (sentence index, cited passages) pair that was asked."""

    sentences: list[CitedSentence]
    facts: list[Fact]
    verdicts: dict[tuple[int, tuple[int, ...]], Verdict]
    n_contexts: int

    def support(self, i: int, passages: Sequence[int]) -> Verdict:
        return self.verdicts[(i, tuple(sorted(passages)))]

    def joint(self, i: int) -> Verdict | None:
        """The verdict of sentence i against all its citations (None: none in range)."""
        cites = self.sentences[i].cites
        return self.support(i, cites) if cites else None

    def fact_sentences(self) -> list[int]:
        return [i for i, f in enumerate(self.facts) if f.fact == 1]

    def sentence_rows(self) -> list[dict[str, Any]]:
        """Per sentence: its text, citations, fact, and whether its citations support it."""
        rows = []
        for i, (s, f) in enumerate(zip(self.sentences, self.facts, strict=True)):
            row: dict[str, Any] = {"sentence": s.text, "cites": list(s.cites)}
            if s.out_of_range:
                row["out_of_range"] = list(s.out_of_range)
            row["fact"] = f.fact
            if f.p is not None:
                row["p_fact"] = f.p
            joint = self.joint(i)
            if f.fact != 1:
                row["reason"] = "states no fact (the judge): counted in neither score"
            elif joint is None:
                row["supported"] = 0
                row["reason"] = ("no citation" if not s.cited else
                                 "every marker is past the contexts")
            else:
                row["supported"] = joint.verdict
                if joint.p_yes is not None:
                    row["p_supported"] = joint.p_yes
                row["reason"] = joint.reason
            rows.append(row)
        return rows

    def out_of_range(self) -> list[dict[str, int]]:
        return [{"sentence": i + 1, "marker": n} for i, s in enumerate(self.sentences)
                for n in s.out_of_range]


def wanted_pairs(sentences: Sequence[CitedSentence]) -> list[tuple[int, tuple[int, ...]]]:
    """Every (sentence index, passages) pair to judge, in order: each cited sentence against
    all its citations; with several, against each one alone and against the others without
    each (ALCE's conditions A and B), whatever the answers (so the estimate is exact)."""
    pairs: dict[tuple[int, tuple[int, ...]], None] = {}
    for i, s in enumerate(sentences):
        if not s.cites:
            continue
        pairs[(i, tuple(sorted(s.cites)))] = None
        if len(s.cites) > 1:
            for c in s.cites:
                pairs[(i, (c,))] = None
                pairs[(i, tuple(sorted(set(s.cites) - {c})))] = None
    return list(pairs)


async def judge_citations(ctx: MetricContext, sample: Sample) -> Judged:
    """The answer's sentences, their facts, and every pair's support verdict (wanted_pairs)."""
    contexts = list(sample.contexts or [])
    sentences = cited_sentences(sample.answer or "", len(contexts), sample.question,
                                ctx.language)
    pairs = wanted_pairs(sentences)

    async def one(i: int, passages: tuple[int, ...]) -> Verdict:
        texts = [contexts[n - 1] for n in passages]
        if not any(t.strip() for t in texts):
            return Verdict(0, "the cited passage is empty", p_yes=0.0)
        support = await support_verdicts(ctx, SUPPORT_STEP, [sentences[i].claim],
                                         split="contexts", contexts=texts,
                                         question=sample.question,
                                         material_name="cited passages")
        return support.verdicts[0]

    # the fact question and the support requests at once: the engine batches them
    facts, *verdicts = await asyncio.gather(
        facts_of(ctx, [s.bare for s in sentences], sample.question),
        *(one(i, p) for i, p in pairs))
    return Judged(sentences, facts, dict(zip(pairs, verdicts, strict=True)), len(contexts))


def citation_holds(judged: Judged, i: int) -> list[dict[str, Any]]:
    """Per citation of fact sentence i: whether it holds, and why (module doc)."""
    s = judged.sentences[i]
    joint = judged.joint(i)
    rows = []
    for c in s.cites:
        if joint is None or joint.verdict != 1:
            holds, why = 0, "the sentence's citations together do not support it"
        elif len(s.cites) == 1:
            holds, why = 1, "supports the sentence"
        elif judged.support(i, (c,)).verdict == 1:
            holds, why = 1, "supports the sentence on its own"
        elif judged.support(i, set(s.cites) - {c}).verdict == 1:
            holds, why = 0, "not needed: the other citations support the sentence without it"
        else:
            holds, why = 1, "needed: the other citations without it do not support the sentence"
        rows.append({"sentence": i + 1, "passage": c, "holds": holds, "why": why})
    for n in s.out_of_range:
        rows.append({"sentence": i + 1, "passage": n, "holds": 0,
                     "why": f"past the contexts (1 to {judged.n_contexts})"})
    return rows


def _common(judged: Judged) -> dict[str, Any]:
    out: dict[str, Any] = {"sentences": judged.sentence_rows()}
    if judged.out_of_range():
        out["out_of_range"] = judged.out_of_range()
    if not any(s.cited for s in judged.sentences):
        out["no_citations"] = "the answer cites no passage ([n] or 【n】 markers)"
    return out


Score = Callable[[str, Judged], MetricResult]


def citation_metric(name: str, *, steps: tuple[str, ...], description: str,
                    examples: dict[str, Any] | None = None) -> Callable[[Score], Score]:
    """Register `score(name, judged)` as the citation metric `name`: the answer's citations
    judged (judge_citations, the same requests for both metrics, asked once per sample), an
    answer without a sentence unscored with its reason, the rest scored by `score`."""

    def register(score: Score) -> Score:
        async def run(sample: Sample, ctx: MetricContext) -> MetricResult:
            judged = await judge_citations(ctx, sample)
            if not judged.sentences:
                return MetricResult.unscored(name, "the answer has no sentence")
            return score(name, judged)

        metric(name, requires=("answer", "contexts"), order=110, default=False, steps=steps,
               examples=examples, verdict_keys=("fact", "supported", "holds"),
               description=description)(run)
        return score

    return register


@citation_metric(
    "citation_recall", steps=(FACT_STEP, SUPPORT_STEP),
    examples={FACT_STEP: lambda ex: {"question": ex.question, "sentences": ex.statements}},
    description="share of the answer's fact sentences that their cited passages support "
                "(an uncited one counts against it)")
def citation_recall(name: str, judged: Judged) -> MetricResult:
    facts = judged.fact_sentences()
    if not facts:
        return MetricResult.unscored(name, "no sentence of the answer states a fact (the "
                                     "judge)", **_common(judged))
    joints = [judged.joint(i) for i in facts]
    greedy = sum(1 for v in joints if v is not None and v.verdict == 1) / len(facts)
    scores: dict[str, float | None] = {name: greedy, name + GREEDY: greedy}
    probs = [0.0 if v is None else v.p_yes for v in joints]
    if all(p is not None for p in probs):
        scores[name + WEIGHTED] = sum(probs) / len(probs)  # type: ignore[arg-type]
    return MetricResult(scores=scores, details=_common(judged))


# the same steps as citation_recall, declared in the other order: every metric's step tuple is
# its own (tests/test_metric_declarations.py tells the metrics apart by it)
@citation_metric(
    "citation_precision", steps=(SUPPORT_STEP, FACT_STEP),
    description="share of the citations of fact sentences that hold: they support their "
                "sentence and, among several, are needed (ALCE)")
def citation_precision(name: str, judged: Judged) -> MetricResult:
    details = _common(judged)
    if "no_citations" in details:
        return MetricResult.unscored(name, "the answer cites no passage: no citation to be "
                                     "precise about (citation_recall counts it)", **details)
    rows = [row for i in judged.fact_sentences() for row in citation_holds(judged, i)]
    details["citations"] = rows
    if not rows:
        return MetricResult.unscored(name, "no sentence that states a fact cites a passage",
                                     **details)
    return MetricResult(scores={name: sum(r["holds"] for r in rows) / len(rows)},
                        details=details)


GROUPS["citations"] = ("citation_recall", "citation_precision")
