"""Material longer than the judge's window: split it into pieces that fit, judge against each.

A request names one template variable as its *material* (a list of texts: the contexts, or the
reference answer). When the rendered prompt does not fit (the judge raises PromptTooLong), the
material is cut at sentence boundaries, keeping each context's order and whole contexts together
where they fit, into the fewest pieces whose prompts fit. Pieces are sized by tokens when the
judge can count them (`prompt_tokens(messages)` and `n_ctx`, as LlamaJudge does), otherwise by
characters, estimated from the failed prompt's size. A sentence longer than a whole piece is cut
by characters. Nothing is dropped: every character of the material is in some piece.

`support_verdicts` judges numbered items (statements, sentences) against the material: an item
counts as supported if *any* piece supports it; later pieces are asked only about the items no
earlier piece supported. `ask_pieces` returns one answer per piece, for metrics that combine
them themselves (max of ratings, union of entities).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel

from localeval import prompts
from localeval.errors import PromptTooLong
from localeval.metrics.base import MetricContext
from localeval.schemas import verdict_list
from localeval.text import split_sentences

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


async def ask_pieces(ctx: MetricContext, step: str, schema: type[T], *, split: str,
                     **variables: Any) -> list[tuple[Piece, T]]:
    """Ask once with the whole material; if it does not fit, once per piece that fits."""
    material: list[str] = variables[split]
    try:
        return [(Piece(list(material), list(range(len(material)))),
                 await ctx.ask(step, schema, **variables))]
    except PromptTooLong as exc:
        pieces = _split(ctx, step, split, variables, exc)
    out: list[tuple[Piece, T]] = []
    for piece in pieces:
        out.extend(await _ask_piece(ctx, step, schema, split, variables, piece))
    return out


def _split(ctx: MetricContext, step: str, split: str, variables: dict[str, Any],
           exc: PromptTooLong) -> list[Piece]:
    fits = _fitter(ctx, step, split, variables, exc)
    try:
        return pack(_units(variables[split]), fits)
    except ValueError:
        raise exc from None  # the rest of the prompt alone is too long: nothing to split


async def _ask_piece(ctx: MetricContext, step: str, schema: type[T], split: str,
                     variables: dict[str, Any], piece: Piece) -> list[tuple[Piece, T]]:
    """Ask about one piece; if the size estimate was wrong and it does not fit, halve it."""
    try:
        return [(piece, await ctx.ask(step, schema, **{**variables, split: piece.texts}))]
    except PromptTooLong:
        units = [(src, s) for text, src in zip(piece.texts, piece.sources, strict=True)
                 for s in (split_sentences(text) or [text])]
        if len(units) < 2:
            if len(piece.texts) != 1 or len(piece.texts[0]) < 2:
                raise
            text, src = piece.texts[0], piece.sources[0]
            units = [(src, text[: len(text) // 2]), (src, text[len(text) // 2:])]
        half = len(units) // 2
        out: list[tuple[Piece, T]] = []
        for part in (units[:half], units[half:]):
            out.extend(await _ask_piece(ctx, step, schema, split, variables, _piece(part)))
        return out


@dataclass
class Support:
    """Per item: verdict (1 supported by some piece), reason, and the piece that decided."""

    verdicts: list[dict[str, Any]]
    pieces: int = 1

    @property
    def supported(self) -> int:
        return sum(v["verdict"] for v in self.verdicts)


async def support_verdicts(ctx: MetricContext, step: str, items: list[str], *, split: str,
                           items_var: str = "statements", **variables: Any) -> Support:
    """One verdict per item against the material `variables[split]`, split to fit the window;
    supported if any piece supports it. Items are asked in batches of ITEMS_PER_REQUEST."""
    explain = ctx.settings.explain
    result: list[dict[str, Any]] = []
    max_pieces = 1
    for start in range(0, len(items), ITEMS_PER_REQUEST):
        batch = items[start:start + ITEMS_PER_REQUEST]
        try:
            judged = await ctx.ask(step, verdict_list(len(batch), explain),
                                   **{**variables, items_var: batch})
            result.extend(v.model_dump() for v in judged.verdicts)  # type: ignore[attr-defined]
            continue
        except PromptTooLong as exc:
            pieces = _split(ctx, step, split, {**variables, items_var: batch}, exc)
        found: list[dict[str, Any] | None] = [None] * len(batch)
        n_pieces = 0
        for p_index, piece in enumerate(pieces, start=1):
            open_ix = [i for i, v in enumerate(found) if v is None or v["verdict"] == 0]
            if not open_ix:
                break
            sub = [batch[i] for i in open_ix]
            answers = await _ask_piece(ctx, step, verdict_list(len(sub), explain), split,
                                       {**variables, items_var: sub}, piece)
            n_pieces += len(answers)
            for _, judged in answers:
                for i, v in zip(open_ix, judged.verdicts, strict=True):  # type: ignore[attr-defined]
                    if found[i] is None or (found[i]["verdict"] == 0 and v.verdict == 1):
                        found[i] = {**v.model_dump(), "piece": p_index}
        result.extend(v if v is not None else {"verdict": 0, "piece": None} for v in found)
        max_pieces = max(max_pieces, n_pieces)
    return Support(result, max_pieces)
