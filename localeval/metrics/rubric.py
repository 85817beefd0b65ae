"""Rubric metrics: the level read from the judge's probabilities of the scale's digits at the
first answer position (nothing generated), the reason, with explanations on, asked after it in a
second request (G-Eval's weighting; the frame the dev sets pick: research/frame-bench.md). The
record and its file: localeval/rubrics.py; the user's guide: localeval/docs/rubrics.md.

The judge reads the row's fields the rubric requires (question, answer, reference, contexts,
then any other column, under its name), then the rubric's own text: criteria, evaluation steps,
levels, "reply with one digit". The row material comes first, in a fixed order, so the rubrics
of one row share their prompt's prefix and the engine reads it once
(judge/llamacpp/prefix_pool.py). The level request is prompt-only (JudgeRequest.continuations:
the scale's digits); with explanations on, a second request continues that conversation with
the greedy digit as the judge's answer and asks `{"reason": "…"}`: the reason is written after
the level and cannot move the score.

Scores: `<name>` = the probability-weighted level, Σ P(level)·level over the levels, normalised
to [0, 1] by (x − lo) / (hi − lo) (yes/no: P(yes)), also as `<name>.weighted`; `<name>.greedy` =
the greedy level normalised. A judge that gives no probabilities (the fake one) gets the greedy
level as `<name>` and no `.weighted`.

The same machinery runs a built-in single-judged-field metric with its own template, answer
model names and field (`Frame`, its answer a JSON field under a grammar): refusal
(metrics/refusal.py) renders its packaged template with its schema, so its requests and their
cache keys are what they were, and keeps its score headline (the greedy verdict as `refusal`;
`.greedy` and `.weighted` = P(refused) beside it).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, create_model

from localeval import prompts
from localeval.data.dataset import Sample
from localeval.errors import PromptTooLong
from localeval.judge.interface import FieldProbs
from localeval.judge.schemas import REASON_CHARS
from localeval.metrics import base
from localeval.metrics.base import (
    GROUPS,
    REGISTRY,
    ExampleFn,
    Metric,
    MetricContext,
    MetricResult,
    behind_shield,
    register_metric,
)
from localeval.metrics.examples import Example
from localeval.names import GREEDY, WEIGHTED
from localeval.rubrics import LANGUAGES, YES_NO, Rubric, RubricError, rubric, template_env

STEP = "rubric"
REASON_STEP = "rubric_reason"
"""The second request with explanations on: why the level (after it, so it cannot move it)."""
DRAFT_STEP = "rubric_steps"
ORDER = 1500
"""Where a file's rubrics stand in a report: after the built-in metrics, in the file's order."""
MAX_DRAFTED_STEPS = 6
STEP_CHARS = 200
NAMES = {"question": "question", "answer": "answer", "ground_truth": "reference",
         "contexts": "context"}
LABELS = {"en": NAMES, "zh": NAMES}
"""The judge's names for the built-in fields, in both frames (`name: value` lines); any other
column is shown under its own name."""
FIELD_ORDER = ("question", "answer", "ground_truth", "contexts")
"""The order of the material: the fields most rubrics share first, so that their prompts share
the longest prefix; other columns follow in the order `requires` names them."""
REPLY = {lang: {True: "Reply 1 for yes, 0 for no.",
                False: "Reply with one digit from {lo} to {hi}."} for lang in LANGUAGES}
"""yes/no scale → the reply's shape in words (a format string of `lo` and `hi`): `reply` in a
user's template (the packaged frame, en and zh, writes the same text itself)."""


@dataclass(frozen=True)
class Frame:
    """How a rubric is asked and scored. The default asks prompts/<lang>/rubric.j2 with the
    field `level` (`verdict` for yes/no) and scores the weighted level (`.weighted`), `.greedy`
    the greedy one.
    A built-in gives its own packaged template (`step`, whose variables `variables` makes from
    the row), answer model name, field and its description, and which score is the headline
    (`main="greedy"`: the greedy level; both are written as sub-keys)."""

    step: str = STEP
    field: str | None = None
    model: str | None = None
    description: str | None = None
    main: Literal["weighted", "greedy"] = "weighted"
    variables: Callable[[Sample], dict[str, Any]] | None = None
    answer: Literal["digit", "json"] = "json"
    """"digit": the level from the digits' probabilities at the first answer position (the
    rubrics'); "json": a JSON field under a grammar (refusal's). Either way the level is asked
    without a reason, and with explanations on the reason comes in a second request after it:
    a reason written first talks a small judge into its verdict (research/frame-bench.md)."""


FRAME = Frame(answer="digit")
"""The rubrics' frame (prompts/<lang>/rubric.j2, its own system prompt rubric_system.j2)."""


def field_of(r: Rubric, frame: Frame = FRAME) -> str:
    return frame.field or ("verdict" if r.scale == YES_NO else "level")


@lru_cache(maxsize=256)
def _answer_model(name: str, field_name: str, values: tuple[int, ...], description: str,
                  explain: bool) -> type[BaseModel]:
    choice = (Literal[values], Field(description=description))  # type: ignore[valid-type]
    fields: dict[str, Any] = {field_name: choice}
    if explain:  # the reason first: the judge reasons, then decides
        fields = {"reason": (str, Field(max_length=REASON_CHARS,
                                        description="one short sentence")), **fields}
    return create_model(name, **fields)


def answer_model(r: Rubric, frame: Frame, explain: bool) -> type[BaseModel]:
    """The answer's model: its name and the field's description enter the schema, hence the
    cache key."""
    lo, hi = r.bounds
    if frame.model is not None:
        name = frame.model + ("WithReason" if explain else "")
    else:
        name = ("RubricVerdict" if r.scale == YES_NO else f"RubricLevel{lo}to{hi}") + (
            "R" if explain else "")
    description = frame.description or (
        "1 = the material meets the criterion, 0 = it does not" if r.scale == YES_NO
        else f"{lo} = does not meet the criterion at all … {hi} = meets it fully")
    return _answer_model(name, field_of(r, frame), r.values, description, explain)


class Reason(BaseModel):
    reason: str = Field(max_length=REASON_CHARS, description="one short sentence")


class DraftedSteps(BaseModel):
    steps: list[Annotated[str, Field(max_length=STEP_CHARS)]] = Field(
        min_length=1, max_length=MAX_DRAFTED_STEPS, description="one short, concrete step each")


def show(value: Any) -> str:
    """A field's value as the judge reads it: text as is, a list of texts numbered, anything
    else as JSON."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value[0].strip() if len(value) == 1 else "\n".join(
            f"[{i}] {v.strip()}" for i, v in enumerate(value, 1))
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def material(r: Rubric, sample: Sample, lang: str,
             labels: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """The row fields the rubric requires as (label, text), in FIELD_ORDER then as named; the
    labels of the built-in fields are LABELS[lang] unless given."""
    names = [f for f in FIELD_ORDER if f in r.requires] + [
        f for f in r.requires if f not in FIELD_ORDER]
    named = LABELS[lang] if labels is None else labels
    return [(named.get(f, f), show(sample.value(f))) for f in names]


def frame_variables(r: Rubric, lang: str, steps: Iterable[str]) -> dict[str, Any]:
    """The rubric's own variables of a prompt in language `lang` (docs/rubrics.md)."""
    lo, hi = r.bounds
    return {"name": r.name, "criteria": r.criteria[lang], "steps": list(steps),
            "levels": [(v, t[lang]) for v, t in r.levels.items()], "scale": r.scale,
            "yes_no": r.scale == YES_NO, "lo": lo, "hi": hi}


def user_template(r: Rubric, lang: str, sample: Sample, steps: list[str],
                  explain: bool) -> list[dict[str, str]]:
    """The messages of a rubric with the user's own template: the system prompt, then the
    template rendered with the row's required fields (as the row holds them) and the frame's
    variables."""
    lo, hi = r.bounds
    variables = {**frame_variables(r, lang, steps), "explain": explain,
                 "reply": REPLY[lang][r.scale == YES_NO].format(lo=lo, hi=hi),
                 **{f: sample.value(f) for f in r.requires}}
    try:
        text = _compiled(r.template[lang]).render(**variables).strip()
    except Exception as exc:  # the template is the user's: its failure is theirs, in one line
        why = " ".join(str(exc).split()) or type(exc).__name__
        raise RubricError(f"{r.where('template')}: cannot be rendered for this row "
                          f"({type(exc).__name__}: {why[:300]})") from None
    return prompts.with_system(lang, text, prompts.system_of(STEP))


@lru_cache(maxsize=64)
def _compiled(text: str) -> Any:
    return template_env().from_string(text)


def level_probs(entry: FieldProbs | None, values: tuple[int, ...]) -> dict[int, float] | None:
    """P(level) renormalised over the scale's levels, from the probed field's probabilities."""
    if entry is None:
        return None
    raw = {v: float(entry.probs.get(str(v), 0.0)) for v in values}
    total = sum(raw.values())
    return {v: p / total for v, p in raw.items()} if total > 0 else None


def rubric_metric(r: Rubric, frame: Frame = FRAME, *, default: bool = True, order: int = ORDER,
                  description: str | None = None,
                  examples: Mapping[str, ExampleFn] | None = None,
                  verdict_keys: Iterable[str] = (), direction_fixed: bool = True) -> Metric:
    """The metric of one rubric (see the module doc), not yet behind the shield (a run's
    rubrics: `rubric_metrics`; a built-in: `register_builtin`)."""
    name, key = r.name, field_of(r, frame)
    if frame.answer == "json" and frame.variables is None:
        raise ValueError(f"{name}: a JSON frame is a built-in's own template; give its variables")
    draft = r.steps == "draft"
    drafted: dict[str, asyncio.Future[list[str]]] = {}  # language → steps, once per run

    async def steps_for(ctx: MetricContext, lang: str) -> list[str]:
        if not draft:
            return list(r.steps.get(lang, ())) if isinstance(r.steps, dict) else []
        if lang not in drafted:
            drafted[lang] = asyncio.ensure_future(
                ctx.ask(DRAFT_STEP, DraftedSteps, criteria=r.criteria[lang]))
        found = await asyncio.shield(drafted[lang])
        return [s.strip() for s in found.steps if s.strip()]  # type: ignore[attr-defined]

    async def run(sample: Sample, ctx: MetricContext) -> MetricResult:
        lang = ctx.language if ctx.language in LANGUAGES else "en"
        explain = ctx.settings.explain
        if frame.answer == "digit":
            return await by_digit(sample, ctx, lang, explain)
        return await by_field(sample, ctx, lang, explain)

    async def by_field(sample: Sample, ctx: MetricContext, lang: str,
                       explain: bool) -> MetricResult:
        """A built-in's own template (`frame.variables`), asked as with --no-explain."""
        assert frame.variables is not None  # rubric_metric checks it
        messages = ctx.messages(frame.step, **frame.variables(sample))
        answer, probs = await ctx.ask_probs(frame.step, answer_model(r, frame, False), [key],
                                            rendered=messages)
        reason = None
        if explain:
            asked = reason_messages(messages, int(getattr(answer, key)), lang,
                                    said=answer.model_dump_json())
            reason = (await ctx.ask(REASON_STEP, Reason, rendered=asked)).reason
        return score(r, frame, answer, probs[0] if probs else None, None, reason)

    async def by_digit(sample: Sample, ctx: MetricContext, lang: str,
                       explain: bool) -> MetricResult:
        steps = await steps_for(ctx, lang)
        try:
            if r.template:
                messages = user_template(r, lang, sample, steps, explain)
            else:
                messages = ctx.messages(frame.step, material=material(r, sample, lang),
                                        **frame_variables(r, lang, steps))
            probs = await ctx.ask_choices(frame.step, answer_model(r, frame, False),
                                          [str(v) for v in r.values], rendered=messages)
            level = greedy_level(r, probs)
            reason = None
            if explain:
                asked = reason_messages(messages, level, lang)
                reason = (await ctx.ask(REASON_STEP, Reason, rendered=asked)).reason
        except PromptTooLong as exc:
            raise too_long(r, lang, sample, steps, exc) from None
        return digit_score(r, probs, reason, steps if draft else None)

    lo, hi = r.bounds
    asks = (frame.step, REASON_STEP)
    return Metric(
        name=name, requires=r.requires, fn=run,
        description=description or f"rubric ({'yes/no' if r.scale == YES_NO else f'{lo}–{hi}'}"
                                   f"): {r.criteria['en']}",
        steps=(*asks, DRAFT_STEP) if draft else asks, uses_judge=True,
        examples=dict(examples or {}), verdict_keys=tuple(verdict_keys), default=default,
        order=order, higher_is_better=r.higher_is_better, direction_fixed=direction_fixed)


def too_long(r: Rubric, lang: str, sample: Sample, steps: list[str],
             exc: PromptTooLong) -> PromptTooLong:
    """A rubric's prompt too long for the window, saying which part is long: the rubric's own
    text (criteria, levels, steps, its template) or the row's material (its longest field
    named), by characters."""
    sizes = {"criteria": len(r.criteria[lang]),
             "levels": sum(len(t[lang]) for t in r.levels.values()),
             "steps": sum(len(s) for s in steps), "template": len(r.template.get(lang, ""))}
    own = sum(sizes.values())
    fields = {f: len(show(sample.value(f))) for f in r.requires}
    rows = sum(fields.values())
    parts = "criteria, levels, steps" + (" and template" if r.template else "")
    if own >= rows:
        longest = max(sizes, key=lambda k: sizes[k])
        advice = (f"the long part is the rubric's own text, its {parts} ({own:,} characters, "
                  f"{sizes[longest]:,} of them in its {longest}; the row's material {rows:,}): "
                  f"shorten its {longest} in {r.where()}, or raise --n-ctx")
    else:
        longest = max(fields, key=lambda f: fields[f])
        advice = (f"the long part is the row's material ({rows:,} characters, "
                  f"{fields[longest]:,} of them in {longest!r}; the rubric's {parts} "
                  f"{own:,}): shorten the row's {longest}, or raise --n-ctx")
    return PromptTooLong(exc.n_tokens, exc.n_ctx, exc.reserve, advice=advice)


def score(r: Rubric, frame: Frame, answer: BaseModel, entry: FieldProbs | None,
          drafted: list[str] | None, reason: str | None = None) -> MetricResult:
    """The scores and details of one answer (module doc), with the reason asked after it."""
    key = field_of(r, frame)
    greedy = int(getattr(answer, key))
    probs = level_probs(entry, r.values)
    weighted: float | None = None
    details = answer.model_dump()
    if r.scale == YES_NO:
        p_yes = entry.score if entry is not None and entry.score is not None else (
            probs[1] if probs else None)
        if p_yes is not None:
            weighted = p_yes
            details[f"p_{key}"] = round(p_yes, 4)
    elif probs is not None:
        weighted = r.normalised(sum(v * p for v, p in probs.items()))
        details["p_levels"] = {str(v): round(p, 4) for v, p in probs.items()}
    if reason is not None:
        details["reason"] = reason
    if drafted is not None:
        details["steps"] = drafted
    return MetricResult(scores=level_scores(r, greedy, weighted, frame.main == "greedy"),
                        details=details)


def level_scores(r: Rubric, greedy: int, weighted: float | None,
                 greedy_headline: bool) -> dict[str, float | None]:
    """`<name>` (the headline: the weighted level, or the greedy one where `greedy_headline` or
    no probabilities), `<name>.greedy` and, with probabilities, `<name>.weighted`."""
    level = float(r.normalised(greedy))
    main = level if greedy_headline or weighted is None else weighted
    scores: dict[str, float | None] = {r.name: main, r.name + GREEDY: level}
    if weighted is not None:
        scores[r.name + WEIGHTED] = weighted
    return scores


def reason_messages(messages: list[dict[str, str]], level: int, lang: str,
                    said: str | None = None) -> list[dict[str, str]]:
    """The reason's request: the level request's conversation, the judge's answer (`said`, or
    the level), then prompts/<lang>/rubric_reason.j2 (the engine reads the shared prefix
    once)."""
    return [*messages, {"role": "assistant", "content": str(level) if said is None else said},
            prompts.render(lang, REASON_STEP, level=level)[-1]]


def greedy_level(r: Rubric, probs: Mapping[str, float]) -> int:
    """The most probable level (the lower of two equally probable ones)."""
    return max(r.values, key=lambda v: (probs.get(str(v), 0.0), -v))


def digit_score(r: Rubric, choices: Mapping[str, float], reason: str | None,
                drafted: list[str] | None) -> MetricResult:
    """The scores and details of one level request's digit probabilities (module doc)."""
    key = field_of(r)
    level = greedy_level(r, choices)
    probs = level_probs(FieldProbs(field=key, probs=dict(choices)), r.values)
    details: dict[str, Any] = {key: level}
    weighted: float | None = None
    if probs is not None:
        weighted = probs[1] if r.scale == YES_NO else r.normalised(
            sum(v * p for v, p in probs.items()))
        if r.scale == YES_NO:
            details[f"p_{key}"] = round(probs[1], 4)
        else:
            details["p_levels"] = {str(v): round(p, 4) for v, p in probs.items()}
    if reason is not None:
        details["reason"] = reason
    if drafted is not None:
        details["steps"] = drafted
    return MetricResult(scores=level_scores(r, level, weighted, False), details=details)


def rubric_metrics(rubrics: Iterable[Rubric]) -> dict[str, Metric]:
    """A run's rubrics as metrics behind the shield, by name (a name that clashes is an error
    naming its file)."""
    out: dict[str, Metric] = {}
    seen: list[Rubric] = []
    for r in rubrics:
        check_name(r, seen)
        seen.append(r)
        out[r.name] = behind_shield(rubric_metric(r))
    return out


def check_name(r: Rubric, earlier: Iterable[Rubric] = ()) -> None:
    """A rubric's name must not clash with a built-in metric, a group or an earlier rubric."""
    if r.name in REGISTRY or r.name in GROUPS:
        raise RubricError(f"{r.where()}: {r.name!r} is a built-in metric"
                          f"{' group' if r.name in GROUPS else ''}; give the rubric another name")
    for other in earlier:
        if other.name == r.name:
            raise RubricError(f"{r.where()}: {r.name!r} is defined twice (first in "
                              f"{other.source}); rename one")


base.RUBRIC_METRICS = rubric_metrics  # what base.resolve builds a run's rubrics with


def register_builtin(r: Rubric, frame: Frame, **options: Any) -> Metric:
    """Register a built-in metric that is one judged field (e.g. refusal) as a rubric."""
    m = rubric_metric(r, frame, **options)
    register_metric(m)
    return m


EXAMPLE_RUBRIC = rubric(
    "covers_question", requires=("question", "answer"),
    criteria={"en": "The answer directly and completely answers every part of the question.",
              "zh": "回答直接、完整地回答了问题的每一部分。"},
    scale=(1, 5), levels={1: {"en": "does not answer it", "zh": "没有回答"},
                          5: {"en": "answers every part", "zh": "回答了每一部分"}},
    steps={"en": ["List the parts of the question.", "Check which parts the answer answers."],
           "zh": ["列出问题的各个部分。", "逐一检查回答回答了哪些部分。"]},
    source="localeval/metrics/rubric.py")
"""The rubric the golden prompts of the rubric templates are rendered with."""


def _example_sample(ex: Example) -> Sample:
    return Sample(id="example", question=ex.question, answer=ex.answer, contexts=ex.contexts)


EXAMPLES: dict[str, ExampleFn] = {
    STEP: lambda ex: {"material": material(EXAMPLE_RUBRIC, _example_sample(ex), ex.language),
                      **frame_variables(EXAMPLE_RUBRIC, ex.language,
                                        EXAMPLE_RUBRIC.steps[ex.language])},  # type: ignore[index]
    REASON_STEP: lambda ex: {"level": 4},
    DRAFT_STEP: lambda ex: {"criteria": EXAMPLE_RUBRIC.criteria[ex.language]},
}
"""The golden-prompt variables of the rubric templates (tests/test_prompts_golden.py): no
registered metric renders them, every rubric does."""


def said_once(rubrics: Iterable[Rubric], metrics: Iterable[Metric],
              samples: Iterable[Sample]) -> list[str]:
    """What a run says once about the rubrics it runs: their notes (a language given for both),
    and each required field that no row has (the rubric's rows are then skipped, each saying
    so in its record)."""
    running = {m.name for m in metrics}
    chosen = [r for r in rubrics if r.name in running]
    if not chosen:
        return []
    wanted = {f for r in chosen for f in r.requires}
    present: set[str] = set()
    for s in samples:
        present |= {f for f in wanted - present if s.has(f)}
        if present == wanted:
            break
    out = [note for r in chosen for note in r.notes]
    for r in chosen:
        out += [f"{r.where('requires')}: no row has {f!r}; every row skips {r.name}"
                for f in r.requires if f not in present]
    return out
