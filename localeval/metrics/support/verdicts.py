"""Material longer than the judge's window: split it into pieces that fit, judge against each.

A request names one template variable as its *material* (a list of texts: the contexts, or the
reference answer). When the rendered prompt does not fit (the judge raises PromptTooLong), the
material is cut at sentence boundaries, keeping each context's order and whole contexts together
where they fit, into the fewest pieces whose prompts fit. Pieces are sized by tokens when the
judge can count them (`prompt_tokens(messages)` and `n_ctx`, as LlamaJudge does), otherwise by
characters, estimated from the failed prompt's size. A sentence longer than a whole piece is cut
by characters. Nothing is dropped: every character of the material is in some piece.

`support_verdicts` judges numbered items (statements, sentences) against the material, the judge
copying its evidence before each verdict (checked by support/evidence.py). When the material is
split, each item is judged once, against the piece that shares the most character trigrams with
it (the piece most likely to hold its evidence), so the cost grows linearly with the material.
`ask_pieces` returns one answer per piece, for metrics that combine them themselves (max of
ratings, union of entities).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Generic, NamedTuple, TypeVar

from pydantic import BaseModel

from localeval import prompts
from localeval.errors import PromptTooLong
from localeval.judge.base import FieldProbs
from localeval.judge.schemas import VerdictStyle, checked_verdicts, item_tokens
from localeval.metrics.base import MetricContext
from localeval.metrics.support.contrast import ask_choice, choose
from localeval.metrics.support.contrast import check as check_contrast
from localeval.metrics.support.evidence import closest_sentence, decide, grams
from localeval.metrics.support.focus import Index, is_long
from localeval.metrics.support.statements import degenerate, retry_split
from localeval.metrics.support.threshold import p_yes, threshold
from localeval.text import json_safe, split_sentences

T = TypeVar("T", bound=BaseModel)

ITEMS_PER_REQUEST = 16
"""Numbered items per verdict request: bounds the answer's length (max_tokens)."""
_SAFETY = 0.9  # share of the character estimate used, since characters per token vary


@dataclass
class Piece:
    """A part of the material: texts (whole contexts or runs of their sentences) and which
    original text each came from (0-based)."""

    texts: list[str]
    sources: list[int]


def _units(material: list[str]) -> list[tuple[int, str]]:
    """(source index, sentence) for every sentence of every text, in order."""
    out: list[tuple[int, str]] = []
    for i, text in enumerate(material):
        sentences = split_sentences(text) or ([text] if text.strip() else [])
        out.extend((i, s) for s in sentences)
    return out


def _piece(units: list[tuple[int, str]]) -> Piece:
    texts: list[str] = []
    sources: list[int] = []
    for src, sentence in units:
        if sources and sources[-1] == src:
            joiner = "" if _ends_cjk(texts[-1]) else " "
            texts[-1] = texts[-1] + joiner + sentence
        else:
            texts.append(sentence)
            sources.append(src)
    return Piece(texts, sources)


def _ends_cjk(text: str) -> bool:
    return bool(text) and ord(text[-1]) > 0x2E80


def _fitter(ctx: MetricContext, step: str, split: str, variables: dict[str, Any],
            failure: PromptTooLong) -> Callable[[list[str]], bool]:
    """A test `texts → does the prompt with these texts as material fit the window?`."""
    backend = getattr(ctx.judge, "judge", None)
    count = getattr(backend, "prompt_tokens", None)
    n_ctx = getattr(backend, "n_ctx", None)
    reserve = ctx.settings.max_tokens

    def render(texts: list[str]) -> list[dict[str, str]]:
        return prompts.render(ctx.language, step, explain=ctx.settings.explain,
                              **{**variables, split: texts})

    if callable(count) and isinstance(n_ctx, int):
        return lambda texts: len(count(render(texts))) + reserve <= n_ctx
    # No token counter: estimate characters per token from the prompt that did not fit.
    failed_chars = sum(len(m["content"]) for m in render(variables[split]))
    per_token = failed_chars / max(1, failure.n_tokens)
    budget = (failure.n_ctx - failure.reserve) * per_token * _SAFETY
    return lambda texts: sum(len(m["content"]) for m in render(texts)) <= budget


def pack(units: list[tuple[int, str]], fits: Callable[[list[str]], bool]) -> list[Piece]:
    """Greedy: add sentences to the current piece while its prompt fits; cut a sentence that
    does not fit on its own by characters. Raises ValueError if even an empty piece won't fit."""
    if not fits([]):
        raise ValueError("the prompt does not fit even without material")
    pieces: list[Piece] = []
    current: list[tuple[int, str]] = []
    queue = list(units)
    while queue:
        src, sentence = queue.pop(0)
        trial = [*current, (src, sentence)]
        if fits(_piece(trial).texts):
            current = trial
            continue
        if current:
            pieces.append(_piece(current))
            current = []
            queue.insert(0, (src, sentence))
            continue
        # a single sentence too long for a piece: cut it in two and try the halves
        if len(sentence) < 2:
            raise ValueError("a single character does not fit")
        half = len(sentence) // 2
        queue[0:0] = [(src, sentence[:half]), (src, sentence[half:])]
    if current:
        pieces.append(_piece(current))
    return pieces


class Asked(NamedTuple, Generic[T]):
    """One answer of `ask_pieces`: the piece asked about, the answer, the probed fields'
    probabilities (empty unless `probe` named fields)."""

    piece: Piece
    answer: T
    probs: list[FieldProbs]


async def ask_pieces(ctx: MetricContext, step: str, schema: type[T], *, split: str,
                     probe: Sequence[str] = (), **variables: Any) -> list[Asked[T]]:
    """Ask once with the whole material; if it does not fit, once per piece that fits."""
    material: list[str] = variables[split]
    try:
        whole = Piece(list(material), list(range(len(material))))
        return [Asked(whole, *await ctx.ask_probs(step, schema, list(probe), **variables))]
    except PromptTooLong as exc:
        pieces = _split(ctx, step, split, variables, exc)
    out: list[Asked[T]] = []
    for piece in pieces:
        out.extend(await _ask_piece(ctx, step, schema, split, variables, piece, probe))
    return out


def _split(ctx: MetricContext, step: str, split: str, variables: dict[str, Any],
           exc: PromptTooLong) -> list[Piece]:
    fits = _fitter(ctx, step, split, variables, exc)
    try:
        return pack(_units(variables[split]), fits)
    except ValueError:
        raise exc from None  # the rest of the prompt alone is too long: nothing to split


async def _ask_piece(ctx: MetricContext, step: str, schema: type[T], split: str,
                     variables: dict[str, Any], piece: Piece,
                     probe: Sequence[str] = ()) -> list[Asked[T]]:
    """Ask about one piece; if the size estimate was wrong and it does not fit, halve it."""
    try:
        return [Asked(piece, *await ctx.ask_probs(step, schema, list(probe),
                                                  **{**variables, split: piece.texts}))]
    except PromptTooLong:
        units = [(src, s) for text, src in zip(piece.texts, piece.sources, strict=True)
                 for s in (split_sentences(text) or [text])]
        if len(units) < 2:
            if len(piece.texts) != 1 or len(piece.texts[0]) < 2:
                raise
            text, src = piece.texts[0], piece.sources[0]
            units = [(src, text[: len(text) // 2]), (src, text[len(text) // 2:])]
        half = len(units) // 2
        out: list[Asked[T]] = []
        for part in (units[:half], units[half:]):
            out.extend(await _ask_piece(ctx, step, schema, split, variables, _piece(part),
                                        probe))
        return out


def verdict_style(ctx: MetricContext) -> VerdictStyle:
    """The bare verdict: measured on the dev pairs with the 1.5B judge, a copied evidence
    sentence before it (the judge copied the statement itself instead in 17 of 82 cases) or a
    reason before it bought no agreement and cost 5x the tokens (docs/metrics.md, *Measured*).
    The explanation a reader sees is mechanical: the closest context sentence and `reason`.
    The setting `verdict_style` (--verdict-style) picks another, to compare them."""
    return ctx.settings.verdict_style
EVIDENCE_CHARS = {"en": 160, "zh": 80}
"""Longest evidence copy: about one sentence (a Chinese character is about one token)."""


def evidence_chars(ctx: MetricContext) -> int:
    return EVIDENCE_CHARS.get(ctx.language, 160)


def items_per_request(ctx: MetricContext, style: VerdictStyle) -> int:
    """Numbered items per verdict request, so that the longest possible answer fits
    max_tokens (bounded by the schema, see schemas.item_tokens)."""
    per_item = item_tokens(style, evidence_chars(ctx))
    return max(1, min(ITEMS_PER_REQUEST, (ctx.settings.max_tokens - 16) // per_item))


def route(items: list[str], pieces: list[Piece]) -> list[int]:
    """For each item, the piece (index) most likely to hold its evidence: the one sharing the
    most character trigrams with it (ties: the earlier piece)."""
    piece_grams = [grams(" ".join(p.texts)) for p in pieces]
    out = []
    for item in items:
        g = grams(item)
        out.append(max(range(len(pieces)), key=lambda i: (len(g & piece_grams[i]), -i)))
    return out


@dataclass
class Support:
    """Per item: the final verdict (1 supported), the judge's own verdict, its evidence or
    reason, the mechanical checks, and in words why (`reason`); the piece that judged it when
    the material was split; and how many requests were retried split smaller."""

    verdicts: list[dict[str, Any]]
    pieces: int = 1
    retries: int = 0

    @property
    def supported(self) -> int:
        return sum(v["verdict"] for v in self.verdicts)

    @property
    def soft(self) -> float | None:
        """The mean P(supported), None when the judge gave no probability for some item."""
        probs = [v.get("p_supported") for v in self.verdicts]
        if not probs or any(p is None for p in probs):
            return None
        return sum(probs) / len(probs)  # type: ignore[arg-type]


async def support_verdicts(ctx: MetricContext, step: str, items: list[str], *, split: str,
                           items_var: str = "statements", question: str | None = None,
                           material_name: str = "context", details: bool = True,
                           focus: bool = True, **variables: Any) -> Support:
    """One verdict per item against the material `variables[split]`, each checked by
    support/evidence.py. Items go in groups that bound the answer's length; a material too long
    for the window is split into pieces and each item is judged against the piece that most
    likely holds its evidence (`route`), so the work grows linearly with the material.
    `details=False` skips the novel-detail check (when the material is an answer that may
    say "it" where the item names the subject). With `focus`, material longer than
    focus.LONG_WORDS is narrowed per item to the passages that bear on it (support/focus.py);
    items with the same passages share a request. Each verdict is the judge's P(supported)
    against τ (metrics/support/threshold.py), then the mechanical checks."""
    style = verdict_style(ctx)
    chars = evidence_chars(ctx)
    size = items_per_request(ctx, style)
    material: list[str] = variables[split]
    result: list[dict[str, Any] | None] = [None] * len(items)
    retries = 0

    async def ask(sub: list[str], texts: list[str]) -> list[dict[str, Any]]:
        closest = ({"closest": [json_safe(closest_sentence(x, texts) or "") for x in sub]}
                   if style == "focused" else {})
        answer, probs = await ctx.ask_probs(
            step, checked_verdicts(len(sub), style, chars), ["verdict"], style=style,
            question=question or "", **closest,
            **{**variables, split: [json_safe(t) for t in texts],
               items_var: [json_safe(t) for t in sub]})
        verdicts = [v.model_dump() for v in answer.verdicts]  # type: ignore[attr-defined]
        found = probs if len(probs) == len(verdicts) else [None] * len(verdicts)
        return [{**v, "_p": p_yes(f)} for v, f in zip(verdicts, found, strict=True)]

    async def judge(indices: list[int], texts: list[str]) -> list[dict[str, Any]]:
        return await ask([items[i] for i in indices], texts)

    def bad(answer: list[dict[str, Any]]) -> bool:
        # several items may rightly quote the same sentence: only looping within one counts
        return degenerate([str(v.get("evidence") or v.get("reason") or "") for v in answer],
                          same_texts=False)

    tau = threshold(ctx, step)
    texts_of: dict[int, list[str]] = {}

    def settle(indices: list[int], answer: list[dict[str, Any]], texts: list[str],
               piece: int | None, focused: bool = False) -> None:
        for i, judged in zip(indices, answer, strict=True):
            judged = dict(judged)
            p = judged.pop("_p", None)
            greedy = int(judged["verdict"])
            if p is not None:  # the judge's probability decides, not its greedy digit
                judged["verdict"] = int(p >= tau)
            entry = decide(items[i], judged, texts, question,
                           check_evidence=style == "evidence", material_name=material_name,
                           details=details, known=material if focused else None)
            entry["rule"] = "judge" if entry["verdict"] == entry["judge_verdict"] else "check"
            if p is not None:  # overruled by a mechanical check: no support, whatever the judge
                overruled = entry["judge_verdict"] == 1 and entry["verdict"] == 0
                entry["p_supported"] = 0.0 if overruled else round(p, 4)
                entry["greedy_verdict"] = greedy
                sign = "≥" if p >= tau else "<"
                entry["reason"] = f"P(supported) {p:.2f} {sign} τ {tau:g}: {entry['reason']}"
            if focused:
                entry["evidence_passages"] = texts
            if piece is not None:
                entry["piece"] = piece
            result[i] = entry
            texts_of[i] = texts

    async def finish(n_pieces: int) -> Support:
        if ctx.settings.contrast and ctx.settings.contrast_style == "choice":
            await choose(items, result, texts_of, partial(ask_choice, ctx, material_name),
                         ctx.language)
        elif ctx.settings.contrast:
            await check_contrast(items, result, texts_of, ask, ctx.language, size)
        verdicts = [v or {"verdict": 0, "reason": "not judged"} for v in result]
        return Support(verdicts, n_pieces, retries)

    # each item against the passages that bear on it
    remaining = list(range(len(items)))
    if focus and ctx.settings.evidence_passages and is_long(material):
        index = Index.build(material)
        by_passages: dict[tuple[str, ...], list[int]] = {}
        for i, item in enumerate(items):
            by_passages.setdefault(tuple(index.passages(item)), []).append(i)
        remaining = []
        for passages, members in by_passages.items():
            texts = list(passages)
            for start in range(0, len(members), size):
                batch = members[start:start + size]
                try:
                    answer, retried = await retry_split(
                        batch, lambda ix, texts=texts: judge(ix, texts), bad)
                except PromptTooLong:  # one sentence longer than the window: split below
                    remaining += batch
                    continue
                retries += retried
                settle(batch, answer, texts, None, focused=True)
        if not remaining:
            return await finish(1)

    pieces: list[Piece] | None = None
    batches = [remaining[s:s + size] for s in range(0, len(remaining), size)]
    for batch in batches:
        if pieces is None:
            try:
                answer, retried = await retry_split(batch, lambda ix: judge(ix, material), bad)
                retries += retried
                settle(batch, answer, material, None)
                continue
            except PromptTooLong as exc:
                sub = [items[i] for i in batch]
                pieces = _split(ctx, step, split, {**variables, "style": style,
                                                   "question": question or "", items_var: sub,
                                                   "closest": sub}, exc)  # (sizes alike)
        routed = route([items[i] for i in batch], pieces)
        for p_index, piece in enumerate(pieces):
            mine = [i for i, r in zip(batch, routed, strict=True) if r == p_index]
            if not mine:
                continue
            used: dict[tuple[int, ...], list[str]] = {}

            async def in_piece(ix: list[int], piece: Piece = piece,
                               used: dict[tuple[int, ...], list[str]] = used
                               ) -> list[dict[str, Any]]:
                while True:
                    try:
                        answer = await judge(ix, piece.texts)
                        used[tuple(ix)] = piece.texts
                        return answer
                    except PromptTooLong:
                        piece = _narrow(piece, [items[i] for i in ix])

            answer, retried = await retry_split(mine, in_piece, bad)
            retries += retried
            if retried:
                used.pop(tuple(mine), None)  # the answer that was asked again in halves
            at = 0
            for ix, texts in used.items():
                settle(list(ix), answer[at:at + len(ix)], texts, p_index + 1)
                at += len(ix)
    return await finish(len(pieces) if pieces else 1)


def _narrow(piece: Piece, items: list[str]) -> Piece:
    """The half of a piece (by sentences, or by characters for one long sentence) that shares
    the most with the items: used when a piece with these items does not fit after all."""
    units = [(src, s) for text, src in zip(piece.texts, piece.sources, strict=True)
             for s in (split_sentences(text) or [text])]
    if len(units) < 2:
        text, src = piece.texts[0], piece.sources[0]
        if len(text) < 2:
            raise ValueError("a single character does not fit")
        units = [(src, text[: len(text) // 2]), (src, text[len(text) // 2:])]
    halves = [_piece(units[: len(units) // 2]), _piece(units[len(units) // 2:])]
    return halves[route([" ".join(items)], halves)[0]]
