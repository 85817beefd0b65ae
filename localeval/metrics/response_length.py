"""response_length(a): is the answer within the words it may take?

score = 1 while the answer has at most `max_words` words, then falls linearly to 0 at twice the
limit: 1 − (words − max_words) / max_words, at least 0. Words are counted as
localeval.text.word_count counts them: Latin words and numbers, plus Chinese (CJK) characters ×
2/3, since a Chinese word is about 1.5 characters (an answer of 90 汉字 is 60 words). No judge,
no embedder. Details: the words, the characters (spaces left out) and the limit.

Run only when named (`--metrics response_length`): a length limit is the user's to set.
Option (`[metric_options.response_length]` or `--metric-option response_length.max_words=N`):
`max_words`, default 100.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from localeval.data.dataset import Sample
from localeval.metrics.base import MetricContext, MetricResult, metric
from localeval.text import non_space_count, word_count

NAME = "response_length"


class ResponseLengthOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_words: int = Field(100, ge=1, description="words an answer may take for a score of 1 "
                                                  "(Chinese characters count 2/3 each)")


def length_score(words: float, max_words: int) -> float:
    """1 up to `max_words`, linearly down to 0 at twice as many."""
    return max(0.0, min(1.0, 2.0 - words / max_words))


@metric(NAME, requires=("answer",), options=ResponseLengthOptions, default=False, order=1010,
        description="1 while the answer is within max_words words (a Chinese character counts "
                    "2/3), falling linearly to 0 at twice the limit")
async def response_length(sample: Sample, ctx: MetricContext) -> MetricResult:
    options: ResponseLengthOptions = ctx.options
    answer = sample.answer or ""
    words = word_count(answer)
    return MetricResult(
        scores={NAME: length_score(words, options.max_words)},
        details={"words": round(words, 2), "characters": non_space_count(answer),
                 "max_words": options.max_words},
    )
