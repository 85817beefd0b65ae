"""What a claim is judged against: a long material narrowed to the passages that bear on it.

The material reaches this step whole: nothing is deleted from a context (an instruction in it
is fenced and flagged, metrics/shield.py). A 1.5B judge reading a 1,700-token context says "no" to
sentences that stand in it, so material longer than `LONG_WORDS` is narrowed per claim, as
MiniCheck and AlignScore do with chunks (`Index.passages`): its sentences are scored against the
claim with BM25 over content terms (text.ranking_terms), the `TOP` best are kept with
`NEIGHBOURS` on each side (a pronoun's antecedent, the sentence a number belongs to), and
overlapping windows merge into passages in document order, up to `MAX_WORDS`. A passage
carries its **frame**: the first sentence of its text and the nearest heading or lead-in before
it ("Myths", "The following claims are false:"; `is_heading`), written before it with " … "
when the window does not hold them — a denial, a heading or a list's lead-in travels with every
window cut from its section. The index is
built once per material, so a claim costs one pass over the sentences. Material still too long
for the judge's window is split into pieces (claims/evidence.py).

Material longer than the judge's window: split it into pieces that fit, ask against each.

A request names one template variable as its *material* (a list of texts: the contexts, or the
reference answer). When the rendered prompt does not fit (the judge raises PromptTooLong), the
material is cut at sentence boundaries, keeping each context's order and whole contexts together
where they fit, into the fewest pieces whose prompts fit (`pack`). Pieces are sized by tokens
when the judge can count them (`prompt_tokens(messages)` and `n_ctx`, as LlamaJudge does),
otherwise by characters, estimated from the failed prompt's size. A sentence longer than a whole
piece is cut by characters. Nothing is dropped: every character of the material is in some
piece. `ask_pieces` returns one answer per piece, for metrics that combine them themselves (max
of ratings, union of entities); support verdicts judge each claim once, against the piece that
shares the most character trigrams with it (`route`), so the cost grows linearly with the
material.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, TypeVar

from pydantic import BaseModel

from localeval.errors import PromptTooLong
from localeval.judge.interface import FieldProbs
from localeval.metrics.base import MetricContext
from localeval.metrics.claims.checks import grams
from localeval.text import (
    Sentences,
    no_space_after,
    ranking_terms,
    sentences_of,
    sentences_of_all,
    word_count,
)

if TYPE_CHECKING:
    from localeval.bm25 import BM25

LONG_WORDS = 350.0
TOP = 3
NEIGHBOURS = 1
MAX_WORDS = 260.0
_K1, _B = 1.2, 0.75
HEADING_WORDS = 12.0
"""Longest sentence without end punctuation read as a heading (`is_heading`)."""
FRAME_GAP = " … "
"""What stands between a passage's frame and the passage."""
_LEAD_IN = re.compile(r"[:：]\s*$")
_ENDED = re.compile(r"[.!?。！？;；…\"'”’」』)）\]]\s*$")


def is_heading(sentence: str) -> bool:
    """A heading ("Popular myths", "## History") or a lead-in ending in a colon ("The
    following claims are false:"): the frame of the sentences after it."""
    s = sentence.strip()
    return bool(_LEAD_IN.search(s)) or (bool(s) and not _ENDED.search(s)
                                        and word_count(s) <= HEADING_WORDS)


@dataclass
class Index:
    """The sentences of the material (with the text each came from) and their BM25 ranking."""

    sentences: list[tuple[int, str]]
    bm25: BM25
    frames: list[list[int]] = field(default_factory=list)
    """Per sentence, its frame (indices into `sentences`, in order): its text's first sentence
    and the nearest heading or lead-in before it."""

    @classmethod
    def build(cls, material: Sequence[Sentences]) -> Index:
        sentences = [(i, s) for i, text in enumerate(material) for s in text.or_whole]
        frames: list[list[int]] = []
        first, heading, src = 0, None, -1
        for j, (i, sentence) in enumerate(sentences):
            if i != src:
                first, heading, src = j, None, i
            frames.append(sorted({first} | ({heading} if heading is not None else set())))
            if j != first and is_heading(sentence):
                heading = j
        from localeval.bm25 import BM25  # long material only: a short run never loads it

        bags = [t for text in material for t in text.ranking_terms]
        return cls(sentences, BM25(bags, k1=_K1, b=_B), frames)

    def passages(self, claim: str) -> list[str]:
        """The passages (runs of consecutive sentences of one text) that bear on the claim."""
        ranked = self.bm25.ranked(set(ranking_terms(claim)))[:TOP]
        keep: set[int] = set()
        words = 0.0
        for i in ranked:
            window = [j for j in range(i - NEIGHBOURS, i + NEIGHBOURS + 1)
                      if 0 <= j < len(self.sentences)
                      and self.sentences[j][0] == self.sentences[i][0] and j not in keep]
            add = sum(word_count(self.sentences[j][1]) for j in window)
            if keep and words + add > MAX_WORDS:
                window = [i] if i not in keep else []
                add = sum(word_count(self.sentences[j][1]) for j in window)
                if not window or words + add > MAX_WORDS:
                    continue
            keep.update(window)
            words += add
        runs: list[list[int]] = []
        for j in sorted(keep):
            if runs and j == runs[-1][-1] + 1 and self.sentences[j - 1][0] == self.sentences[j][0]:
                runs[-1].append(j)
            else:
                runs.append([j])
        return [self._framed(run) for run in runs]

    def _join(self, indices: list[int]) -> str:
        out = ""
        for j in indices:
            sentence = self.sentences[j][1]
            out = sentence if not out else out + ("" if no_space_after(out) else " ") + sentence
        return out

    def _framed(self, run: list[int]) -> str:
        """A run of consecutive sentences, after its frame when the run does not hold it."""
        frame = [f for f in self.frames[run[0]] if f < run[0]] if self.frames else []
        while frame and frame[-1] == run[0] - 1:  # right before the run: one text with it
            run = [frame.pop(), *run]
        if not frame:
            return self._join(run)
        return self._join(frame) + FRAME_GAP + self._join(run)


def is_long(material: list[str]) -> bool:
    return sum(word_count(t) for t in material) > LONG_WORDS


T = TypeVar("T", bound=BaseModel)

_SAFETY = 0.9  # share of the character estimate used, since characters per token vary


@dataclass
class Piece:
    """A part of the material: texts (whole contexts or runs of their sentences) and which
    original text each came from (0-based)."""

    texts: list[str]
    sources: list[int]


def _units(material: Sequence[Sentences]) -> list[tuple[int, str]]:
    """(source index, sentence) for every sentence of every text, in order."""
    out: list[tuple[int, str]] = []
    for i, text in enumerate(material):
        sentences = text.items or ((text.text,) if text.text.strip() else ())
        out.extend((i, s) for s in sentences)
    return out


def _piece(units: list[tuple[int, str]]) -> Piece:
    texts: list[str] = []
    sources: list[int] = []
    for src, sentence in units:
        if sources and sources[-1] == src:
            joiner = "" if no_space_after(texts[-1]) else " "
            texts[-1] = texts[-1] + joiner + sentence
        else:
            texts.append(sentence)
            sources.append(src)
    return Piece(texts, sources)


def _fitter(ctx: MetricContext, step: str, split: str, variables: dict[str, Any],
            failure: PromptTooLong) -> Callable[[list[str]], bool]:
    """A test `texts → does the prompt with these texts as material fit the window?`."""
    backend = getattr(ctx.judge, "judge", None)
    count = getattr(backend, "prompt_tokens", None)
    n_ctx = getattr(backend, "n_ctx", None)
    reserve = ctx.settings.max_tokens

    def render(texts: list[str]) -> list[dict[str, str]]:
        return ctx.messages(step, **{**variables, split: texts})

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
        pieces = split_material(ctx, step, split, variables, exc)
    out: list[Asked[T]] = []
    for piece in pieces:
        out.extend(await _ask_piece(ctx, step, schema, split, variables, piece, probe))
    return out


def split_material(ctx: MetricContext, step: str, split: str, variables: dict[str, Any],
                   exc: PromptTooLong, cut: Sequence[Sentences] | None = None) -> list[Piece]:
    """The pieces of `variables[split]` (`cut`: already split) whose prompts fit (raises `exc`
    when none can)."""
    fits = _fitter(ctx, step, split, variables, exc)
    try:
        return pack(_units(cut if cut is not None else sentences_of_all(variables[split])), fits)
    except ValueError:
        raise exc from None  # the rest of the prompt alone is too long: nothing to split


async def _ask_piece(ctx: MetricContext, step: str, schema: type[T], split: str,
                     variables: dict[str, Any], piece: Piece,
                     probe: Sequence[str] = ()) -> list[Asked[T]]:
    """Ask about one piece; if the size estimate was wrong and it does not fit, halve it."""
    try:
        return [Asked(piece, *await ctx.ask_probs(step, schema, list(probe),
                                                  **{**variables, split: piece.texts}))]
    except PromptTooLong as exc:
        try:
            units = _halvable(piece)
        except ValueError:
            raise exc from None
        half = len(units) // 2
        out: list[Asked[T]] = []
        for part in (units[:half], units[half:]):
            out.extend(await _ask_piece(ctx, step, schema, split, variables, _piece(part),
                                        probe))
        return out


def _halvable(piece: Piece) -> list[tuple[int, str]]:
    """A piece as units to cut in halves: its sentences, or its one sentence cut in two by
    characters. Raises ValueError for a single character."""
    units = [(src, s) for text, src in zip(piece.texts, piece.sources, strict=True)
             for s in sentences_of(text).or_whole]
    if len(units) >= 2:
        return units
    if len(piece.texts) != 1 or len(piece.texts[0]) < 2:
        raise ValueError("a single character does not fit")
    text, src = piece.texts[0], piece.sources[0]
    return [(src, text[: len(text) // 2]), (src, text[len(text) // 2:])]


def route(items: list[str], pieces: list[Piece]) -> list[int]:
    """For each item, the piece (index) most likely to hold its evidence: the one sharing the
    most character trigrams with it (ties: the earlier piece)."""
    piece_grams = [grams(" ".join(p.texts)) for p in pieces]
    out = []
    for item in items:
        g = grams(item)
        out.append(max(range(len(pieces)), key=lambda i: (len(g & piece_grams[i]), -i)))
    return out


def narrow(piece: Piece, items: list[str]) -> Piece:
    """The half of a piece (by sentences, or by characters for one long sentence) that shares
    the most with the items: used when a piece with these items does not fit after all."""
    units = _halvable(piece)
    halves = [_piece(units[: len(units) // 2]), _piece(units[len(units) // 2:])]
    return halves[route([" ".join(items)], halves)[0]]
