"""context_entities_recall(C, g): the judge lists the entities of g and of each context;
score = |E(C) ∩ E(g)| / |E(g)|.

Entities are compared after `entity_key`: NFKC (full-width → half-width), case folded, all
whitespace and surrounding punctuation removed ("ＩＢＭ" = "ibm", "New  York" = "new york"). A
ground-truth entity also matches a context entity that contains it or that it contains, when
the shorter one has at least 2 CJK characters or 4 other characters ("最高法院" ~ "美国最高法院"),
since Chinese has no word boundaries for the judge to agree on. No entities in g → unscored.
"""

from __future__ import annotations

import unicodedata

from localeval.data.dataset import Sample
from localeval.judge.schemas import Entities
from localeval.metrics.base import MetricContext, MetricResult, metric
from localeval.metrics.claims.evidence import ask_pieces
from localeval.metrics.claims.score import nonempty
from localeval.text import CJK

NAME = "context_entities_recall"


def entity_key(entity: str) -> str:
    """Normal form for matching: NFKC, casefold, no whitespace, no surrounding punctuation."""
    text = "".join(unicodedata.normalize("NFKC", entity).casefold().split())
    return text.strip("\"'“”‘’「」『』《》()（）[]【】.,;:!?，。；：！？、-—·")


def _long_enough(key: str) -> bool:
    return len(CJK.findall(key)) >= 2 or len(key) >= 4


def matches(g_key: str, c_keys: set[str]) -> str | None:
    """The context entity that `g_key` matches (equal, or containment of a long-enough key)."""
    if g_key in c_keys:
        return g_key
    for c in sorted(c_keys):
        shorter = min(g_key, c, key=len)
        if _long_enough(shorter) and (g_key in c or c in g_key):
            return c
    return None


async def entities_of(ctx: MetricContext, text: str) -> list[str]:
    answers = await ask_pieces(ctx, "context_entities_recall_entities", Entities, split="text",
                               text=[text])
    out: list[str] = []
    for _, found, _ in answers:
        out.extend(e.strip() for e in found.entities if e.strip())
    return list(dict.fromkeys(out))


@metric(NAME, requires=("contexts", "ground_truth"), steps=("context_entities_recall_entities",),
        order=60,
        examples={"context_entities_recall_entities": lambda ex: {"text": ex.contexts[:1]}},
        description="share of the ground truth's entities that the contexts' entities cover")
async def context_entities_recall(sample: Sample, ctx: MetricContext) -> MetricResult:
    contexts = nonempty(sample.contexts)
    if not contexts:
        return MetricResult.unscored(NAME, "every context is empty")
    truth = await entities_of(ctx, sample.ground_truth or "")
    truth_keys = list(dict.fromkeys(k for k in map(entity_key, truth) if k))
    if not truth_keys:
        return MetricResult.unscored(NAME, "the judge found no entities in the ground truth",
                                     ground_truth_entities=truth)
    context_entities: list[str] = []
    for c in contexts:
        context_entities.extend(await entities_of(ctx, c))
    c_keys = {k for k in map(entity_key, context_entities) if k}
    found = {g: matches(g, c_keys) for g in truth_keys}
    recalled = [g for g, m in found.items() if m is not None]
    return MetricResult(
        scores={NAME: len(recalled) / len(truth_keys)},
        details={"ground_truth_entities": truth_keys,
                 "context_entities": sorted(c_keys),
                 "recalled": {g: found[g] for g in recalled},
                 "missing": [g for g in truth_keys if found[g] is None]},
    )
