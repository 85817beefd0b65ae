"""Contrast: a claim is supported only if the judge prefers it to its nearest false twin.

A judge asked "does the context support X?" tends to say yes to anything built from the
context's own words: a comparison turned round ("longer" where the context says "shorter"), or
one year, number or name the context gives put in place of another. `twins` builds, for a claim
the judge supported, the claims that differ from it by one such swap — a comparative word
flipped, or a number or (in Latin script) a capitalised name of the claim that the material
mentions replaced by another of the same kind that the material mentions nearby. At most one of
a claim and its twin can be what the context says; the verdict stands only if the judge's
P(supported) for the claim is not below that of any twin (`contradicted`). A twin identical to
the claim or with no swap to make costs nothing; one request per group of claims judges all
their twins, against the same material.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from localeval.errors import PromptTooLong
from localeval.judge.schemas import choice
from localeval.metrics.support.evidence import STOP_NAMES
from localeval.text import json_safe, split_sentences

if TYPE_CHECKING:
    from localeval.metrics.base import MetricContext

MAX_TWINS = 3
"""Twins per claim: the first comparative flip, then swaps of its details, in claim order."""

_EN_PAIRS = [
    ("longer", "shorter"), ("larger", "smaller"), ("bigger", "smaller"), ("higher", "lower"),
    ("more", "fewer"), ("more", "less"), ("older", "younger"), ("earlier", "later"),
    ("before", "after"), ("taller", "shorter"), ("heavier", "lighter"), ("faster", "slower"),
    ("greater", "smaller"), ("wider", "narrower"), ("increased", "decreased"),
    ("increase", "decrease"), ("rose", "fell"), ("above", "below"), ("north", "south"),
    ("east", "west"), ("largest", "smallest"), ("highest", "lowest"), ("longest", "shortest"),
    ("oldest", "youngest"), ("first", "last"), ("most", "least"), ("won", "lost"),
]
_ZH_PAIRS = [
    ("更长", "更短"), ("更大", "更小"), ("更高", "更低"), ("更多", "更少"), ("更早", "更晚"),
    ("长于", "短于"), ("大于", "小于"), ("高于", "低于"), ("多于", "少于"), ("早于", "晚于"),
    ("之前", "之后"), ("以前", "以后"), ("增加", "减少"), ("上升", "下降"), ("增长", "下降"),
    ("最高", "最低"), ("最大", "最小"), ("最长", "最短"), ("最多", "最少"), ("最早", "最晚"),
    ("年长", "年轻"), ("以北", "以南"), ("以东", "以西"), ("获胜", "失败"), ("第一", "最后"),
]
_NAME_RUN = re.compile(r"\b[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*")
_ARTICLES = {"a", "an", "the"}
_WORD_BEFORE = re.compile(r"[A-Za-z]+")
_NUMBER = re.compile(r"(?<!\d)(?<!\d[.,])\d+(?:[.,]\d+)*(?!\d)")


def _flip_table(language: str) -> list[tuple[re.Pattern[str], str]]:
    pairs = _ZH_PAIRS if language == "zh" else _EN_PAIRS
    table = []
    for a, b in pairs:
        for x, y in ((a, b), (b, a)):
            # lower case only, or capitalised at the very start: "West" in a name is no direction
            pattern = re.escape(x) if language == "zh" else \
                rf"\b{re.escape(x)}\b|^{re.escape(x.capitalize())}\b"
            table.append((re.compile(pattern), y))
    return table


_TABLES = {"en": _flip_table("en"), "zh": _flip_table("zh")}


def _flips(claim: str, language: str) -> list[str]:
    """The claim with its first comparative word turned round (keeping its capitalisation)."""
    found = [(m.start(), m, other) for pattern, other in _TABLES["zh" if language == "zh" else "en"]
             for m in [pattern.search(claim)] if m]
    if not found:
        return []
    _, m, other = min(found, key=lambda f: f[0])
    word = other.capitalize() if m.group()[:1].isupper() else other
    return [claim[:m.start()] + word + claim[m.end():]]


def _details(text: str) -> list[str]:
    """Numbers and Latin-script names (runs of capitalised words, function words dropped from
    their ends: "The Empire State Building" → "Empire State Building"), in order."""
    flat = unicodedata.normalize("NFKC", text)
    found = [(m.start(), m.group()) for m in _NUMBER.finditer(flat)]
    for m in _NAME_RUN.finditer(flat):
        words = m.group().split()
        while words and words[0].casefold() in STOP_NAMES:
            words.pop(0)
        while words and words[-1].casefold() in STOP_NAMES:
            words.pop()
        if words:
            found.append((m.start(), " ".join(words)))
    return list(dict.fromkeys(d for _, d in sorted(found)))


def _kind(detail: str) -> str:
    if detail[:1].isdigit():
        return "year" if re.fullmatch(r"1\d{3}|20\d{2}", detail) else "number"
    return "name"


def _swaps(claim: str, material: list[str], *, exclude: Sequence[str] = (),
           anchored: bool = True) -> list[str]:
    """The claim with one of its details (that the material mentions) replaced by another detail
    of the same kind that the material gives — from a sentence that mentions the claim's detail
    first, then from the rest: a year by a year, another number by a number, a name by a name
    after the same word ("born in Paris" → "born in Warsaw" when the material says "born in
    Warsaw"; a subject is never swapped). `exclude`: details that may not stand in (the
    question's); `anchored=False` drops the same-word condition."""
    sentences = [unicodedata.normalize("NFKC", s)
                 for text in material for s in (split_sentences(text) or [text])]
    flat = unicodedata.normalize("NFKC", claim)
    mine = _details(flat)
    taken = mine + list(exclude)
    out: list[str] = []
    for detail in mine:
        holding = [s for s in sentences if detail in s]
        if not holding:
            continue  # a detail the material lacks is the novel-detail check's business
        ordered = holding + [s for s in sentences if s not in holding]
        anchor = _before(flat, detail)
        others = [d for sentence in ordered for d in _details(sentence)
                  if _fits(detail, d, taken) and (
                      _kind(d) != "name" or not anchored
                      or (anchor and _before(sentence, d) == anchor))]
        out += [_replace(claim if detail in claim else flat, detail, other)
                for other in dict.fromkeys(others)]
    return out


def _fits(detail: str, other: str, mine: Sequence[str]) -> bool:
    """`other` can stand in for `detail`: same kind, not in the claim, neither inside the other."""
    return other not in mine and detail not in other and other not in detail and \
        _kind(other) == _kind(detail)


def _before(text: str, detail: str) -> str:
    """The word just before the detail's first occurrence in the text, lower-cased ("" if none
    or an article: "the" says nothing about the detail's role)."""
    at = text.find(detail)
    words = _WORD_BEFORE.findall(text[:at]) if at > 0 else []
    word = words[-1].casefold() if words else ""
    return "" if word in _ARTICLES else word


def _replace(text: str, detail: str, other: str) -> str:
    escaped = re.escape(detail)
    pattern = rf"(?<!\d)(?<!\d[.,]){escaped}(?!\d)" if detail[:1].isdigit() else rf"\b{escaped}\b"
    return re.sub(pattern, other.replace("\\", r"\\"), text, count=1)


def twins(claim: str, material: list[str], language: str) -> list[str]:
    """Up to MAX_TWINS claims one swap away from `claim` (see the module doc). In a fragment
    judged with its question ("Q: … A: Paris."), only the answer is changed, and a name in it is
    swapped for any name of the material (a bare answer has no word before it to match)."""
    prefix, body = _answer_part(claim)
    found = _flips(body, language) + _swaps(body, material, exclude=_details(prefix),
                                             anchored=not prefix)
    out = [prefix + t for t in found if t != body]
    return list(dict.fromkeys(out))[:MAX_TWINS]


def _answer_part(claim: str) -> tuple[str, str]:
    """("Q: … A: ", answer) for a fragment judged with its question, else ("", claim)."""
    for start, mark in (("Q: ", " A: "), ("问：", " 答：")):
        if claim.startswith(start) and mark in claim:
            at = claim.rindex(mark) + len(mark)
            return claim[:at], claim[at:]
    return "", claim


def contradicted(p_claim: float, p_twins: list[float | None]) -> tuple[int, float] | None:
    """(index, P) of the first twin the judge supports more strongly than the claim, if any."""
    for i, p in enumerate(p_twins):
        if p is not None and p > p_claim:
            return i, p
    return None


Ask = Callable[[list[str], list[str]], Awaitable[list[dict[str, Any]]]]
"""(claims, material texts) → the judge's verdicts, each with "_p" = P(supported)."""
Choose = Callable[[list[str], list[str]], Awaitable[list[float] | None]]
"""(versions, material texts) → the judge's probability of each version being the one the
material states (None from a judge that gives no probabilities)."""


async def ask_choice(ctx: MetricContext, material_name: str, options: list[str],
                     texts: list[str]) -> list[float] | None:
    """The judge's probability of each numbered version being the one `texts` state (its
    choice's first token, renormalised over the version numbers)."""
    _, probs = await ctx.ask_probs(
        "support_choice", choice(len(options)), ["choice"], material_name=material_name,
        material=[json_safe(t) for t in texts], options=[json_safe(o) for o in options])
    found = probs[0].probs if probs else {}
    ps = [found.get(str(k + 1), 0.0) for k in range(len(options))]
    total = sum(ps)
    return [p / total for p in ps] if total > 0 else None


def versions(claim: str, found: list[str]) -> list[str]:
    """The claim and its twins in an order that does not depend on which of them is the claim
    (case-folded text), so that two answers that differ by the swap see the same list."""
    return sorted(dict.fromkeys([claim, *found]), key=lambda v: (v.casefold(), v))


async def choose(items: list[str], result: list[dict[str, Any] | None],
                 texts_of: dict[int, list[str]], ask: Choose, language: str) -> int:
    """Overrule each supported verdict of `result` (in place) whose claim is not the version
    the judge finds most likely when shown the claim and its twins together, in one request
    per claim. A judge that says yes to each of them alone must still pick one here. Returns
    the number of requests."""
    asked = 0
    for i, entry in enumerate(result):
        if entry is None or entry.get("verdict") != 1 or entry.get("p_supported") is None:
            continue
        found = twins(items[i], texts_of[i], language)
        if not found:
            continue
        listed = versions(items[i], found)
        try:
            probs = await ask(listed, texts_of[i])
        except PromptTooLong:
            continue
        asked += 1
        if probs is None:
            continue
        mine = probs[listed.index(items[i])]
        entry["choice"] = [{"version": v, "p": round(p, 4)} for v, p in zip(listed, probs,
                                                                           strict=True)]
        best = max(range(len(listed)), key=lambda k: (probs[k], k == listed.index(items[i])))
        if listed[best] != items[i]:
            p = float(entry["p_supported"])
            entry.update(verdict=0, rule="contrast", p_supported=0.0, p_claim=round(p, 4),
                         reason=f"shown with its twins, the judge chose “{listed[best]}” "
                                f"(P {probs[best]:.2f}) over the claim (P {mine:.2f})")
    return asked


async def check(items: list[str], result: list[dict[str, Any] | None],
                texts_of: dict[int, list[str]], ask: Ask, language: str, size: int) -> int:
    """Overrule each supported verdict of `result` whose claim a twin beats (in place); the
    twins of claims judged against the same texts share requests of up to `size` items.
    Returns the number of twins judged."""
    groups: dict[tuple[str, ...], list[tuple[int, str]]] = {}
    for i, entry in enumerate(result):
        if entry is None or entry.get("verdict") != 1 or entry.get("p_supported") is None:
            continue
        texts = texts_of[i]
        for twin in twins(items[i], texts, language):
            groups.setdefault(tuple(texts), []).append((i, twin))
    judged: dict[int, list[tuple[str, float | None]]] = {}
    for texts, pairs in groups.items():
        for start in range(0, len(pairs), size):
            chunk = pairs[start:start + size]
            try:
                answer = await ask([t for _, t in chunk], list(texts))
            except PromptTooLong:
                continue  # the twins are as long as their claims: only a window at its edge
            for (i, twin), verdict in zip(chunk, answer, strict=True):
                judged.setdefault(i, []).append((twin, verdict.get("_p")))
    for i, found in judged.items():
        entry = result[i]
        assert entry is not None
        p = float(entry["p_supported"])
        beaten = contradicted(p, [q for _, q in found])
        entry["contrast"] = [{"twin": t, "p_supported": None if q is None else round(q, 4)}
                             for t, q in found]
        if beaten is not None:
            twin, q = found[beaten[0]][0], beaten[1]
            entry.update(verdict=0, rule="contrast", p_supported=0.0, p_claim=round(p, 4),
                         reason=f"P(supported) {p:.2f} < {q:.2f} for “{twin}”: the judge "
                                "prefers a claim one swap away")
    return sum(len(f) for f in judged.values())
