"""A golden rendered prompt per template and language: a template change shows up as a diff.

After an intended change, regenerate with:
    LOCALEVAL_UPDATE_GOLDEN=1 pytest tests/test_prompts_golden.py
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from localeval.prompts import PROMPTS_DIR, render

GOLDEN = Path(__file__).parent / "golden"
LISTS = {
    "zh": ["裁决产生了全球影响。", "三分之一的女性无法获得堕胎服务。"],
    "en": ["The ruling had global effects.", "A third of women lost access to abortion."],
}
CONTEXTS = {
    "zh": ["2022年，美国最高法院推翻了堕胎权。", "这一裁决在全球引发关注。"],
    "en": [
        "In 2022 the US Supreme Court overturned abortion rights.",
        "The ruling drew global attention.",
    ],
}
QUESTION = {
    "zh": "美国最高法院关于堕胎的裁决对全球有什么影响？",
    "en": "What global impact did the US Supreme Court abortion ruling have?",
}


def variables(lang: str, step: str) -> dict[str, object]:
    """The fixed sample each template is rendered on."""
    q, items, contexts = QUESTION[lang], LISTS[lang], CONTEXTS[lang]
    answer = "".join(items) if lang == "zh" else " ".join(items)
    return {
        "faithfulness_statements": {"question": q, "sentences": items, "first": 1, "last": 2,
                                    "count": 2, "numbers": None},
        "faithfulness_verdicts": {"contexts": contexts, "statements": items},
        "context_recall_verdicts": {"contexts": contexts, "statements": items},
        "context_relevance_answer": {"contexts": contexts, "sentences": items},
        "context_relevance_context": {"answer": [answer], "sentences": contexts},
        "answer_relevance_questions": {"answer": answer, "n": 3},
        "context_precision_useful": {
            "question": q,
            "ground_truth": answer,
            "context": contexts[:1],
        },
        "rerank_relevancy_rating": {"question": q, "context": contexts[:1]},
        "context_entities_recall_entities": {"text": contexts[:1]},
        "answer_correctness_answer": {"question": q, "reference": [answer], "statements": items},
        "answer_correctness_reference": {"question": q, "answer": [answer], "statements": items},
        "support_choice": {"material_name": "context", "material": contexts,
                           "options": items},
    }[step]


TEMPLATES = sorted(
    (lang, p.stem)
    for lang in ("zh", "en")
    for p in (PROMPTS_DIR / lang).glob("*.j2")
    if p.stem != "system"
)


def test_both_languages_have_the_same_templates() -> None:
    zh = {s for lang, s in TEMPLATES if lang == "zh"}
    en = {s for lang, s in TEMPLATES if lang == "en"}
    assert zh == en and len(zh) >= 11


@pytest.mark.parametrize(("lang", "step"), TEMPLATES)
@pytest.mark.parametrize("explain", [True, False])
def test_golden_prompt(lang: str, step: str, explain: bool) -> None:
    style = "evidence" if explain else "bare"  # what metrics/chunking.verdict_style picks
    messages = render(lang, step, explain=explain, style=style, **variables(lang, step))
    text = "\n\n".join(f"[{m['role']}]\n{m['content']}" for m in messages) + "\n"
    path = GOLDEN / lang / f"{step}{'' if explain else '.noexplain'}.txt"
    if os.environ.get("LOCALEVAL_UPDATE_GOLDEN"):  # rewrite, review the diff, commit: no verdict
        if os.environ.get("CI"):
            pytest.fail("LOCALEVAL_UPDATE_GOLDEN rewrites the golden files: never in CI")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        pytest.skip(f"rewrote {path.relative_to(GOLDEN)}; review the diff")
    assert path.is_file(), f"no golden file {path}; run with LOCALEVAL_UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8")


def test_every_golden_file_belongs_to_a_template() -> None:
    """A golden file left over from a removed or renamed template would never be compared."""
    expected = {
        f"{lang}/{step}{suffix}.txt" for lang, step in TEMPLATES for suffix in ("", ".noexplain")
    }
    found = {p.relative_to(GOLDEN).as_posix() for p in GOLDEN.rglob("*.txt")}
    assert found == expected


@pytest.mark.parametrize(("lang", "step"), TEMPLATES)
def test_fixed_instructions_come_before_the_per_sample_material(lang: str, step: str) -> None:
    """So that every sample's prompt of one step shares its instructions as a prefix."""
    for style in ("evidence", "reason", "bare"):
        user = render(lang, step, explain=style != "bare", style=style,
                      **variables(lang, step))[1]["content"]
        assert user.startswith("Task:" if lang == "en" else "任务："), (style, user[:40])
        head = user.split("\n\n")[0]
        for value in variables(lang, step).values():
            for text in value if isinstance(value, list) else [value]:
                assert not isinstance(text, str) or text not in head
