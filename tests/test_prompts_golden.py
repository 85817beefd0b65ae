"""A golden rendered prompt per template and language: a template change shows up as a diff.

After an intended change, regenerate with:
    LOCALEVAL_UPDATE_GOLDEN=1 pytest tests/test_prompts_golden.py
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from localeval.conversation import EXAMPLES as CONVERSATION_EXAMPLES
from localeval.generate.drafting import EXAMPLES as GENERATE_EXAMPLES
from localeval.metrics import REGISTRY
from localeval.metrics.examples import EXAMPLES
from localeval.metrics.rubric import EXAMPLES as RUBRIC_EXAMPLES
from localeval.prompts import CONVERSATION_STEPS, PROMPTS_DIR, SYSTEM_SUFFIX, render

GOLDEN = Path(__file__).parent / "golden"


def variables(lang: str, step: str) -> dict[str, object]:
    """The fixed sample each template is rendered on: the variables the step's metric declares
    (`@metric(examples=...)`) for the language's example sample (metrics/examples.py)."""
    for m in REGISTRY.values():
        if step in m.examples:
            return m.examples[step](EXAMPLES[lang])
    if step in GENERATE_EXAMPLES:  # `localeval generate`'s steps (generate/drafting.py)
        return GENERATE_EXAMPLES[step][lang]
    if step in CONVERSATION_STEPS:  # a conversation's standalone question (conversation.py)
        return CONVERSATION_EXAMPLES[lang]
    if step in RUBRIC_EXAMPLES:  # every rubric's steps, on an example rubric (metrics/rubric.py)
        return RUBRIC_EXAMPLES[step](EXAMPLES[lang])
    raise AssertionError(f"no metric declares examples for step {step!r}: give them with "
                         "@metric(examples={step: lambda ex: {...}})")


TEMPLATES = sorted(
    (lang, p.stem)
    for lang in ("zh", "en")
    for p in (PROMPTS_DIR / lang).glob("*.j2")
    if p.stem != "system" and not p.stem.endswith(SYSTEM_SUFFIX)  # a step's own: in its golden
)


def test_both_languages_have_the_same_templates() -> None:
    zh = {s for lang, s in TEMPLATES if lang == "zh"}
    en = {s for lang, s in TEMPLATES if lang == "en"}
    assert zh == en and len(zh) >= 11


@pytest.mark.parametrize(("lang", "step"), TEMPLATES)
@pytest.mark.parametrize("explain", [True, False])
def test_golden_prompt(lang: str, step: str, explain: bool) -> None:
    messages = render(lang, step, explain=explain, **variables(lang, step))
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


def test_every_judge_step_has_an_en_and_a_zh_template_and_examples() -> None:
    for m in REGISTRY.values():
        for step in m.steps:
            for lang in ("en", "zh"):
                assert (PROMPTS_DIR / lang / f"{step}.j2").is_file(), (m.name, lang, step)
            assert any(step in other.examples for other in REGISTRY.values()), (m.name, step)
        assert set(m.examples) <= set(m.steps), (m.name, "examples for a step it does not use")


def test_every_template_is_a_step_of_a_metric() -> None:
    steps = {s for m in REGISTRY.values() for s in m.steps} | set(GENERATE_EXAMPLES) | set(
        RUBRIC_EXAMPLES) | CONVERSATION_STEPS
    assert {step for _, step in TEMPLATES} <= steps


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
        head = user.split("\n\n")[0]
        if step == "rubric":  # the rubric's own text (criteria, levels) is its fixed head, no
            # task line (the bare frame the dev sets pick, research/frame-bench.md)
            rows = [text for _, text in variables(lang, step)["material"]]  # type: ignore[union-attr]
            assert rows and not any(text in head for text in rows), head
            continue
        assert user.startswith("Task:" if lang == "en" else "任务："), (style, user[:40])
        for value in variables(lang, step).values():
            for text in value if isinstance(value, list) else [value]:
                assert not isinstance(text, str) or text not in head
