"""Issue 29.4: a huge answer through response_length takes about its own size in memory, not
17 times it (the list of every word), and the piecewise counts equal the one-pass ones."""

from __future__ import annotations

import asyncio
import re
import tracemalloc

from hypothesis import given, settings
from hypothesis import strategies as st

from localeval.config import Settings
from localeval.data.dataset import Sample
from localeval.metrics import REGISTRY
from localeval.metrics.base import MetricContext
from localeval.metrics.response_length import ResponseLengthOptions
from localeval.text import non_space_count, word_count


def _one_pass_words(text: str) -> float:
    latin = len(re.findall(r"[A-Za-z0-9]+(?:[.'’-][A-Za-z0-9]+)*", text))
    return latin + len(re.findall(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]", text)) * 2 / 3


def test_a_huge_answer_takes_about_its_size() -> None:
    size = 8_000_000
    answer = ("ab cd, e.f g'h-i 中文 x\u3000" * (size // 22 + 1))[:size]
    sample = Sample(id="a", line=1, answer=answer)
    ctx = MetricContext(sample=sample, language="en", settings=Settings(), judge=None,
                        embeddings=None, options=ResponseLengthOptions())
    fn = REGISTRY["response_length"].fn
    tracemalloc.start()
    try:
        result = asyncio.run(fn(sample, ctx))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    text_bytes = len(answer.encode("utf-16-le"))  # the str holds CJK: 2 bytes a character
    assert peak < 1.5 * text_bytes, f"peak {peak / 1e6:.0f} MB, answer {text_bytes / 1e6:.0f} MB"
    assert result.details["words"] == round(_one_pass_words(answer), 2)
    assert result.details["characters"] == len("".join(answer.split()))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab1 .'’-\n\t\u3000中文,", max_size=400),
       st.integers(min_value=1, max_value=7))
def test_piecewise_counts_equal_one_pass(text: str, span: int) -> None:
    import localeval.text as t

    old, t.SPAN = t.SPAN, span  # tiny pieces: every cut position is tried
    try:
        assert word_count(text) == _one_pass_words(text)
        assert non_space_count(text) == len("".join(text.split()))
    finally:
        t.SPAN = old
