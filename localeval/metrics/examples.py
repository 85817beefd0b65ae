"""The fixed example sample of each language that every template's golden prompt is rendered on.

A metric maps each of its judge steps to that step's template variables for this sample
(`@metric(examples={step: lambda ex: {...}})`); tests/test_prompts_golden.py renders every
template with them, so a new metric's templates are checked without editing the test. A metric
whose templates need other material may write its own text instead of using the example's.
"""

from __future__ import annotations

from dataclasses import dataclass

from localeval.text import join_sentences


@dataclass(frozen=True)
class Example:
    language: str
    question: str
    statements: list[str]
    """Two claims; `answer` is them written as one text."""
    contexts: list[str]

    @property
    def answer(self) -> str:
        return join_sentences(self.statements)


EXAMPLES = {
    "zh": Example(
        language="zh",
        question="美国最高法院关于堕胎的裁决对全球有什么影响？",
        statements=["裁决产生了全球影响。", "三分之一的女性无法获得堕胎服务。"],
        contexts=["2022年，美国最高法院推翻了堕胎权。", "这一裁决在全球引发关注。"],
    ),
    "en": Example(
        language="en",
        question="What global impact did the US Supreme Court abortion ruling have?",
        statements=["The ruling had global effects.", "A third of women lost access to abortion."],
        contexts=["In 2022 the US Supreme Court overturned abortion rights.",
                  "The ruling drew global attention."],
    ),
}
