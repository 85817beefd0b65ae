"""Where a prompt is cut into the chunks that the engine decodes one at a time.

The cuts are a function of the prompt's own tokens, read left to right: a chunk ends after a
paragraph break ("\\n\\n") once it holds at least `min_chunk` tokens, and in any case at
`max_chunk` tokens. Whether a cut falls at a position depends only on the tokens before it, so
two prompts that begin alike are cut alike over their common part. The engine reuses a shared
prefix only up to such a cut: the reused KV is then exactly what the request would have computed
itself. Paragraph breaks are where templates change from fixed instructions to per-sample
material, so the instructions shared by every sample of a step end on a cut.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable

MIN_CHUNK = 64


def cuts(tokens: list[int], piece: Callable[[int], bytes], *, max_chunk: int,
         min_chunk: int = MIN_CHUNK) -> list[int]:
    """The positions (token counts) after which a new chunk starts, ascending."""
    out: list[int] = []
    last, tail = 0, b""
    for i, token in enumerate(tokens):
        tail = (tail + piece(token))[-2:]
        n = i + 1
        if n - last >= max_chunk or (n - last >= min_chunk and tail == b"\n\n"):
            out.append(n)
            last = n
    return out


def last_chunk(cut_points: list[int], n: int) -> int:
    """The length of the last chunk of a prompt of n tokens."""
    return n - (cut_points[-1] if cut_points else 0)


def cut_at_or_before(cut_points: list[int], n: int) -> int:
    """The last cut at or before position n (0 when none)."""
    i = bisect_right(cut_points, n)
    return cut_points[i - 1] if i else 0


def next_cut(cut_points: list[int], start: int, end: int) -> int:
    """Where the chunk that starts at `start` ends: the next cut, or the prompt's end."""
    i = bisect_right(cut_points, start)
    return min(cut_points[i], end) if i < len(cut_points) else end
