"""`claims = "statements"`: the judge writes the statements of each sentence, kept true to it.

The text (an answer or a ground truth) comes split into sentences (text.sentences_of); the
prompt shows every sentence numbered, and each request asks for the statements of a group of
consecutive sentences with an exact-length schema: one list per sentence (1..3 statements, each
at most a few characters longer than its sentence). So no sentence is dropped, no statement is
invented beside the sentences, and the longest possible answer of a request fits max_tokens:
groups are formed so that n · per_sentence · (chars + 4) + 16 ≤ max_tokens (a token holds at
least one character). A request that still fails (max_tokens, an invalid answer) or
degenerates (the same n-gram over and over) is retried once split smaller (support/retry.py).

Each statement is then checked against its own sentence (`true_to_sentence`): a statement that
adds a number, a name or content words its sentence and the question lack, or that leaves out
a content word, a number or a negation of its sentence (a statement that drops "never", part of
the sentence, or swaps one word), is replaced by the sentence; one that matches another sentence
better is moved there (dropped if that sentence has it already); duplicates are dropped; a
sentence left without a statement is its own statement. How often each rule fired is in
`details.rules`.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Collection, Sequence

from localeval.judge.schemas import sentence_statements
from localeval.metrics.base import MetricContext
from localeval.metrics.support.claims import Claim, TextClaims
from localeval.metrics.support.retry import degenerate, retry_split
from localeval.text import CJK, Sentences, content, json_safe, match_key, repeat_key, word_count

STEP = "faithfulness_statements"
PER_SENTENCE_MAX = 3
WORDS_PER_STATEMENT = 6
MIN_CHARS, MAX_CHARS, EXTRA_CHARS = 60, 240, 30
OVERHEAD_TOKENS = 16
_WORDY = re.compile(r"[^\W_]")


def per_sentence(sentence: str) -> int:
    """Statements allowed for one sentence: one per ~6 words, 1..3."""
    return max(1, min(PER_SENTENCE_MAX, math.ceil(word_count(sentence) / WORDS_PER_STATEMENT)))


def chars_for(sentence: str, question: str = "") -> int:
    """Longest statement allowed: the sentence plus room for the names that replace its
    pronouns and, for a short answer, the question's words that make it a full sentence."""
    return max(MIN_CHARS, min(MAX_CHARS, len(sentence) + len(question) + EXTRA_CHARS))


def _shape(group: Sequence[str], max_tokens: int, question: str = "") -> tuple[int, int]:
    k = max(per_sentence(s) for s in group)
    chars = max(chars_for(s, question) for s in group)
    room = (max_tokens - OVERHEAD_TOKENS) // (len(group) * k) - 4
    return k, max(8, min(chars, room))


def worst_tokens(group: Sequence[str], k: int, chars: int) -> int:
    return len(group) * k * (chars + 4) + OVERHEAD_TOKENS


def groups(sentences: list[str], max_tokens: int,
           question: str = "") -> list[tuple[int, int]]:
    """Consecutive [start, end) runs of sentences whose worst-case answer fits max_tokens."""
    out: list[tuple[int, int]] = []
    start = 0
    for end in range(1, len(sentences) + 1):
        run = sentences[start:end]
        k = max(per_sentence(s) for s in run)
        chars = max(chars_for(s, question) for s in run)
        if end - start > 1 and worst_tokens(run, k, chars) > max_tokens:
            out.append((start, end - 1))
            start = end - 1
    if sentences:
        out.append((start, len(sentences)))
    return out


def _numbers(indices: list[int]) -> list[int] | None:
    """The 1-based numbers of a group that skips some, else None (the prompt says "i to j")."""
    consecutive = indices == list(range(indices[0], indices[-1] + 1))
    return None if consecutive else [i + 1 for i in indices]


async def anchored_statements(ctx: MetricContext, text: Sentences, question: str | None,
                              skip: Collection[int] = ()) -> TextClaims:
    """The statements of every sentence of `text` but those (0-based) in `skip`, in order. The
    prompt still shows every sentence, for the names that pronouns stand for; a group of the
    others may skip numbers ("sentences 2, 4 and 6"), so skipped sentences cost no extra request.
    Shared by faithfulness, context_recall and answer_correctness (identical requests are asked
    once)."""
    sentences = list(text.items)
    result = TextClaims(sentences)
    max_tokens = ctx.settings.max_tokens

    async def ask(indices: list[int]) -> list[list[str]]:
        group = [sentences[i] for i in indices]
        k, chars = _shape(group, max_tokens, question or "")
        found = await ctx.ask(STEP, sentence_statements(len(group), k, chars),
                              question=question or "",
                              sentences=[json_safe(s) for s in sentences],
                              first=indices[0] + 1, last=indices[-1] + 1, count=len(indices),
                              numbers=_numbers(indices))
        return [list(s) for s in found.statements]  # type: ignore[attr-defined]

    def bad(answer: list[list[str]]) -> bool:
        return degenerate([s for per in answer for s in per])

    seen: set[str] = set()
    asked = [i for i in range(len(sentences)) if i not in skip]
    for start, end in groups([sentences[i] for i in asked], max_tokens, question or ""):
        answer, retried = await retry_split(asked[start:end], ask, bad)
        result.retries += retried
        for index, per in zip(asked[start:end], answer, strict=True):
            number = index + 1
            # a statement already written for an earlier sentence is that sentence's, not this
            kept = [s for s in dict.fromkeys(s.strip() for s in per if _WORDY.search(s))
                    if repeat_key(s) not in seen]
            if not kept:  # the sentence itself stands for its claim: no sentence is dropped
                kept = [sentences[number - 1]]
            seen.update(repeat_key(s) for s in kept)
            result.items.extend(Claim(s, number) for s in kept)
    return result


def true_to_sentence(items: list[Claim], sentences: list[str], question: str | None,
                     rules: Counter[str], skip: set[int] | frozenset[int] = frozenset()
                     ) -> list[Claim]:
    """Each statement kept under the sentence it belongs to, with nothing its sentence (and the
    question) lacks; see the module doc. Sentences in `skip` (0-based: settled mechanically)
    take no statement. `rules` counts what fired."""
    sets = [content(s) for s in sentences]
    q = content(question or "")
    names = content(" ".join(sentences))  # pronouns may be replaced by the answer's own names
    out: dict[int, list[Claim]] = {i + 1: [] for i in range(len(sentences)) if i not in skip}
    seen: set[str] = set()
    copied: set[int] = set()
    for item in items:
        if item.sentence in out and match_key(item.statement) == match_key(
                sentences[item.sentence - 1]):
            copied.add(item.sentence)  # the sentence as its own statement: added below,
            continue  # only if nothing else is
        own = item.sentence if item.sentence in out else min(out)
        words = content(item.statement)
        missing = {n: len(words - sets[n - 1] - q) for n in out}
        best = min(out, key=lambda n: (missing[n], n != own))
        if missing[best] < missing[own]:  # another sentence says it: it belongs there
            rules["moved"] += 1
            own = best
        added = words - sets[own - 1] - q
        numbers = {w for w in added if w[0].isdigit()}
        foreign = added - names
        text, extracted = item.statement, None
        if numbers or len(foreign) > 1 or len(added) > max(2, len(sets[own - 1]) // 3):
            rules["replaced"] += 1
            text, extracted = sentences[own - 1], item.statement
        key = repeat_key(text)  # the same bytes only: "2.5 mg" and "25 mg" are two claims
        if key in seen:
            rules["duplicate"] += 1
            continue
        seen.add(key)
        out[own].append(Claim(text, own, extracted))
    for n, kept in out.items():
        own = [c for c in kept if c.statement != sentences[n - 1]]
        if own and drops_or_changes(sentences[n - 1], [c.statement for c in kept]):
            rules["dropped or changed"] += 1
            out[n] = [Claim(sentences[n - 1], n, " | ".join(c.extracted or c.statement
                                                            for c in kept))]
        elif not kept:
            rules["sentence itself"] += n not in copied
            kept.append(Claim(sentences[n - 1], n))
    return [a for n in sorted(out) for a in out[n]]


_NEGATION = re.compile(r"\b(?:not|no|never|none|nobody|nothing|neither|nor|without|cannot)\b"
                       r"|n['’]t\b|[不没未非无别勿莫]", re.IGNORECASE)
CJK_MISSING = 0.2
"""Share of a Chinese sentence's character bigrams its statements may leave out (a pronoun
replaced by its name drops one or two); Latin words and numbers may not be left out at all."""


def _negations(text: str) -> set[str]:
    found = {m.group().casefold() for m in _NEGATION.finditer(text)}
    return {"not" if w in {"n't", "n’t", "cannot"} else w for w in found}


def drops_or_changes(sentence: str, statements: list[str]) -> bool:
    """The statements of a sentence leave out one of its numbers or content words (a part of
    the sentence, or a word swapped for another), more than `CJK_MISSING` of its Chinese
    bigrams, or do not negate what it negates ("never" dropped, "not" added)."""
    union = set().union(*(content(s) for s in statements))
    missing = content(sentence) - union
    han = {w for w in content(sentence) if CJK.match(w)}
    dropped_han = {w for w in missing if CJK.match(w)}
    if missing - dropped_han or len(dropped_han) > max(2, int(len(han) * CJK_MISSING)):
        return True
    return _negations(sentence) != _negations(" ".join(statements))
