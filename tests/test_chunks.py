"""Prompt cuts: a function of the prompt's own tokens, shared by prompts that begin alike."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from localeval.judge.llamacpp.chunks import (
    cut_at_or_before,
    cuts,
    last_chunk,
    next_cut,
)

NL = 10


def piece(token: int) -> bytes:
    return b"\n" if token == NL else b"x"


def test_cut_at_max_and_after_a_paragraph_break_past_min() -> None:
    tokens = [1] * 5 + [NL, NL] + [1] * 20
    assert cuts(tokens, piece, max_chunk=10, min_chunk=3) == [7, 17, 27]
    assert cuts(tokens, piece, max_chunk=10, min_chunk=8) == [10, 20]  # break came too early
    assert cut_at_or_before([7, 17, 27], 16) == 7
    assert cut_at_or_before([7, 17, 27], 6) == 0
    assert next_cut([7, 17, 27], 7, 30) == 17
    assert next_cut([7, 17, 27], 27, 30) == 30


def test_the_last_chunk_is_what_follows_the_last_cut() -> None:
    assert last_chunk([7, 13], 16) == 3 and last_chunk([], 16) == 16


@given(st.lists(st.sampled_from([1, 2, NL]), max_size=300),
       st.lists(st.sampled_from([1, 2, NL]), max_size=300),
       st.lists(st.sampled_from([1, 2, NL]), max_size=60))
def test_prompts_that_begin_alike_are_cut_alike_over_the_common_part(
        shared: list[int], a: list[int], b: list[int]) -> None:
    one = cuts(shared + a, piece, max_chunk=64, min_chunk=16)
    two = cuts(shared + b, piece, max_chunk=64, min_chunk=16)
    assert [c for c in one if c <= len(shared)] == [c for c in two if c <= len(shared)]
    assert all(0 < y - x <= 64 for x, y in zip([0, *one], one, strict=False))
