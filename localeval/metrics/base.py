"""What a metric is: a small async function over one sample, declared with its needs.

A metric asks the judge through `ctx.ask(step, Schema, **vars)` (step = template name) and the
embedder through `ctx.cosine(a, b)`, and returns a MetricResult: scores (None when undefined,
with a reason) and details that explain the score.

Every metric that asks the judge runs behind the shield (metrics/shield.py): an instruction to
the evaluator in its material flags the sample and can only lower its scores.

A metric is one module of this package (imported by the registry when first named, see
`Registry`) plus, when it asks the judge, `prompts/en/<step>.j2` and `prompts/zh/<step>.j2` for
each step. Its `@metric(...)` declares everything else, and nothing else lists it: its judge
steps (every template it renders, checked as it renders; they give the run fingerprint's
template hashes and `run --estimate`'s step kinds), its place in the report (`order`), whether a
higher score is better (`compare`), its options (a pydantic model, set under
`[metric_options.<name>]` in the config or with `--metric-option name.key=value`, read as
`ctx.options`), the template variables of each step's golden prompt (`examples`) and the 0/1
detail keys the report shows as ✓ / ✗ (`verdict_keys`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import importlib
import itertools
import json
import pkgutil
from collections.abc import (
    Awaitable,
    Callable,
    Iterable,
    Iterator,
    Mapping,
    MutableMapping,
    Sequence,
)
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, Field

from localeval import prompts
from localeval.config import Settings
from localeval.data.dataset import Sample
from localeval.errors import ConfigError, UsageError
from localeval.judge.client import JudgeClient
from localeval.judge.interface import FieldProbs, JudgeRequest
from localeval.judge.schemas import schema_json
from localeval.metrics.shield import shielded
from localeval.names import GREEDY, WEIGHTED, did_you_mean

if TYPE_CHECKING:
    from localeval.metrics.examples import Example
    from localeval.models.embed import EmbeddingStore
    from localeval.rubrics import Rubric

T = TypeVar("T", bound=BaseModel)


class MetricResult(BaseModel):
    scores: dict[str, float | None] = Field(default_factory=dict)
    details: dict[str, Any] = Field(default_factory=dict)
    reason: str | None = Field(None, description="why the main score is undefined, if it is")

    @classmethod
    def unscored(cls, name: str, reason: str, **details: Any) -> MetricResult:
        return cls(scores={name: None}, reason=reason, details=details)


def share_scores(name: str, verdicts: Sequence[int],
                 probs: Sequence[float | None]) -> dict[str, float | None]:
    """`name` and `name.greedy`: the share of the (non-empty) 0/1 verdicts that are 1;
    `name.weighted`: the mean P(verdict = 1), when the judge gave one for every verdict."""
    greedy = sum(verdicts) / len(verdicts)
    scores: dict[str, float | None] = {name: greedy, name + GREEDY: greedy}
    if all(p is not None for p in probs):
        scores[name + WEIGHTED] = sum(probs) / len(probs)  # type: ignore[arg-type]
    return scores


@dataclass
class MetricContext:
    sample: Sample
    language: str
    settings: Settings
    judge: JudgeClient | None
    embeddings: EmbeddingStore | None
    steps: tuple[str, ...] | None = None
    """The running metric's declared steps (None: any, for a context no metric runs in): a step
    it renders without declaring it is a bug, raised here rather than missed by the run's
    fingerprint."""
    options: Any = None
    """The running metric's options: an instance of its `@metric(options=...)` model (None for
    a metric without options). Annotate it in the metric: `opts: MyOptions = ctx.options`."""
    # identical requests of one sample (e.g. two metrics extracting the answer's statements with
    # the same step) share one judge call, even while the first is still running, and after it
    # (with --no-cache too). JudgeClient merges only requests in flight, across samples: the two
    # merges differ in scope, and neither can serve for the other without more judge calls.
    _pending: dict[str, asyncio.Future[Any]] = field(default_factory=dict, repr=False)

    def messages(self, step: str, **variables: Any) -> list[dict[str, str]]:
        """The chat messages of one step in the sample's language, rendered with `explain` from
        the settings unless the metric passes its own: what the judge is asked, and what a
        material too long for the window is measured by (claims/evidence.py)."""
        if self.steps is not None and step not in self.steps:
            raise UndeclaredStep(f"step {step!r} is rendered by a metric that does not declare it "
                                 f"(declared: {', '.join(self.steps) or 'none'}): add it to the "
                                 "metric's @metric(steps=...)")
        return prompts.render(self.language, step,
                              **{"explain": self.settings.explain, **variables})

    def request(self, step: str, schema: type[BaseModel], *,
                rendered: list[dict[str, str]] | None = None, **variables: Any) -> JudgeRequest:
        """The judge request for one step: its `messages` (or the `rendered` ones: a user's
        own template, metrics/rubric.py) and the answer's schema."""
        if rendered is not None and self.steps is not None and step not in self.steps:
            raise UndeclaredStep(f"step {step!r} is asked by a metric that does not declare it")
        messages = rendered if rendered is not None else self.messages(step, **variables)
        return JudgeRequest(step=step, sample_id=self.sample.id, answer_schema=schema_json(schema),
                            messages=messages, max_tokens=self.settings.max_tokens)

    async def ask(self, step: str, schema: type[T], **variables: Any) -> T:
        return (await self.ask_probs(step, schema, [], **variables))[0]

    async def ask_probs(self, step: str, schema: type[T], probe: list[str], *,
                        rendered: list[dict[str, str]] | None = None,
                        **variables: Any) -> tuple[T, list[FieldProbs]]:
        """The parsed answer, and the probabilities of the `probe` fields' values (in the
        order they were written; empty from a judge that gives none)."""
        if self.judge is None:
            raise ConfigError(f"step {step} needs a judge, but none is configured")
        request = self.request(step, schema, rendered=rendered, **variables)
        request.probe_fields = probe
        key = request.model_dump_json()
        if key not in self._pending:
            self._pending[key] = asyncio.ensure_future(self.judge.ask_reply(request, schema))
        answer, reply = await asyncio.shield(self._pending[key])
        return answer, reply.field_probs

    async def ask_choices(self, step: str, schema: type[BaseModel], continuations: list[str], *,
                          rendered: list[dict[str, str]] | None = None,
                          **variables: Any) -> dict[str, float]:
        """The probability of each continuation at the first answer position of the step's
        prompt (a prompt-only request: nothing generated; `schema` names the answer in the
        cache key)."""
        if self.judge is None:
            raise ConfigError(f"step {step} needs a judge, but none is configured")
        request = self.request(step, schema, rendered=rendered, **variables)
        request.continuations = list(continuations)
        request.max_tokens = 1  # nothing is generated: --max-tokens does not move its key
        key = request.model_dump_json()
        if key not in self._pending:
            self._pending[key] = asyncio.ensure_future(self.judge.ask_choices(request))
        return dict(await asyncio.shield(self._pending[key]))

    async def cosine(self, a: str, b: str) -> float:
        """Cosine of two texts' embeddings, by an embedder of the sample's language when the
        run's embedder is of another one and that embedder is present (embed.store_for)."""
        return await (await self.embedder()).cosine(a, b)

    async def embedder(self) -> EmbeddingStore:
        if self.embeddings is None:
            raise ConfigError("this metric needs an embedder, but none is configured")
        from localeval.models.embed import store_for

        return await store_for(self.embeddings, self.language)


class UndeclaredStep(RuntimeError):
    """A metric rendered a judge step missing from its `@metric(steps=...)` (a bug)."""


MetricFn = Callable[[Sample, MetricContext], Awaitable[MetricResult]]
ExampleFn = Callable[["Example"], dict[str, Any]]
"""A step's template variables for the fixed example sample of one language (metrics/examples.py):
what tests/test_prompts_golden.py renders the step's golden prompts with."""


@dataclass(frozen=True)
class Metric:
    name: str
    requires: tuple[str, ...]
    fn: MetricFn
    description: str
    steps: tuple[str, ...] = ()
    uses_judge: bool = False
    uses_embedder: bool = False
    """Whether the metric may use the embedder (`needs_embedder` says whether a run does)."""
    embedder_when: Callable[[Settings], bool] | None = None
    options: type[BaseModel] | None = None
    examples: Mapping[str, ExampleFn] = field(default_factory=dict)
    verdict_keys: tuple[str, ...] = ()
    default: bool = True
    order: int = 1000
    higher_is_better: bool = True
    direction_fixed: bool = True
    """Whether `higher_is_better` holds on every dataset; false for a refusal rate (too high on
    answerable questions, right on unanswerable ones): the shield then scores a flagged sample
    by the copy without the flagged text rather than the worse of the two."""

    def needs_embedder(self, settings: Settings) -> bool:
        """Whether a run with these settings uses the embedder: what it is loaded for, and what
        the texts known up front are embedded for."""
        return self.uses_embedder and (self.embedder_when is None or self.embedder_when(settings))


class _Modules:
    """The metric modules of this package, each imported on first need: a name's own module
    (metrics/<name>.py) when there is one, every module (in name order) when the name is not
    found there."""

    def __init__(self) -> None:
        self.names = sorted(m.name for m in pkgutil.iter_modules([str(Path(__file__).parent)])
                            if m.name not in ("base", "__init__"))
        self.complete = False

    def load(self, module: str) -> None:
        importlib.import_module(f"{__package__}.{module}")

    def find(self, name: str) -> None:
        """Import what registers the metric or group `name`."""
        if name in self.names:
            self.load(name)
        if name not in REGISTRY.held and name not in GROUPS.held:
            self.load_all()

    def load_all(self) -> None:
        if not self.complete:
            self.complete = True
            for module in self.names:
                self.load(module)


class _Lazy(MutableMapping[str, Any]):
    """A name → value table whose entries register themselves when their module is imported:
    looking a name up imports its module (`_Modules.find`); iterating or counting imports every
    module."""

    def __init__(self) -> None:
        self.held: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in self.held and not MODULES.complete:
            MODULES.find(name)
        return self.held[name]

    def __setitem__(self, name: str, value: Any) -> None:
        self.held[name] = value

    def __delitem__(self, name: str) -> None:
        del self.held[name]

    def __iter__(self) -> Iterator[str]:
        MODULES.load_all()
        return iter(list(self.held))

    def __len__(self) -> int:
        MODULES.load_all()
        return len(self.held)

    def clear(self) -> None:
        MODULES.load_all()
        self.held.clear()


class Registry(_Lazy):
    """The built-in metrics by name, in report order: `order`, lower first; equal ones by the
    module that defines the function, then in registration order. A metric module is imported
    when its metric is first looked up (`--metrics faithfulness` imports metrics/faithfulness.py
    alone), every one when the registry is read whole (`resolve(None)`, `localeval metrics`)."""

    def __init__(self) -> None:
        super().__init__()
        self._seq = itertools.count()
        self._rank: dict[str, tuple[int, str, int]] = {}

    def __setitem__(self, name: str, m: Metric) -> None:
        if name not in self._rank:
            module = getattr(m.fn, "__module__", None) or ""
            self._rank[name] = (m.order, module, next(self._seq))
        self.held[name] = m

    def __delitem__(self, name: str) -> None:
        del self.held[name]
        self._rank.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        MODULES.load_all()
        return iter(sorted(self.held, key=self._rank.__getitem__))

    def clear(self) -> None:
        super().clear()
        self._rank.clear()

    def ordered(self, names: Iterable[str]) -> list[Metric]:
        """The metrics of these names, in registry order, importing only their modules."""
        found = {n: self[n] for n in names}
        return [found[n] for n in sorted(found, key=self._rank.__getitem__)]


MODULES = _Modules()
REGISTRY = Registry()
GROUPS = _Lazy()
"""Group name → its metrics' names (`--metrics retrieval`), registered by the group's module."""
RUBRIC_METRICS: Callable[[Iterable[Rubric]], dict[str, Metric]] | None = None
"""A run's rubrics → their metrics by name: metrics/rubric.py's rubric_metrics, set when that
module is imported (`resolve` imports it for a run with rubrics)."""


def metric(name: str, *, requires: Iterable[str], description: str, steps: Iterable[str] = (),
           embedder: bool | Callable[[Settings], bool] = False,
           options: type[BaseModel] | None = None,
           examples: Mapping[str, ExampleFn] | None = None,
           verdict_keys: Iterable[str] = (),
           default: bool = True, order: int = 1000,
           higher_is_better: bool = True,
           direction_fixed: bool = True) -> Callable[[MetricFn], MetricFn]:
    """Register a metric function (a name registered twice is an error). `steps` are the judge
    templates it renders, its own and shared ones (so it uses the judge); `embedder` whether it
    uses the embedder (True, or a test of the run's settings: answer_correctness only with a
    similarity weight);
    `options` its options model (every field with a default; the run's values reach the
    function as `ctx.options`); `examples` step → the step's golden-prompt variables (a step
    shared with another metric needs them from one of the two); `verdict_keys` the keys of
    its details that hold a 0/1 verdict; `default=False`: run only when named (--metrics), not
    among "every metric the rows can feed"; `order` its place in the registry (= the report):
    lower first, equal ones in registration order; `higher_is_better=False` for a score that is
    better lower (a refusal rate): what `compare` calls better or worse; `direction_fixed=False`
    for a score neither better high nor low on every dataset (Metric.direction_fixed)."""

    def register(fn: MetricFn) -> MetricFn:
        steps_t = tuple(steps)
        run = fn if options is None else _with_options(name, options, fn)
        register_metric(Metric(
            name=name, requires=tuple(requires), fn=run, description=description, steps=steps_t,
            uses_judge=bool(steps_t), uses_embedder=bool(embedder),
            embedder_when=embedder if callable(embedder) else None, options=options,
            examples=dict(examples or {}), verdict_keys=tuple(verdict_keys), default=default,
            order=order, higher_is_better=higher_is_better, direction_fixed=direction_fixed))
        return fn

    return register


def group_of(name: str) -> str | None:
    """The group of the built-in metric `name` (None: in none, or no built-in), importing only
    the module that registers it (and with it its group)."""
    if REGISTRY.get(name) is None:
        return None
    return next((g for g, members in GROUPS.held.items() if name in members), None)


def register_metric(m: Metric) -> None:
    """Add a built-in metric to the registry (a name registered twice is an error). A metric
    that asks the judge is registered behind the one shield (`behind_shield`)."""
    if m.name in REGISTRY.held:
        raise ValueError(f"metric {m.name!r} is registered twice ({m.fn.__module__} and "
                         f"{REGISTRY[m.name].fn.__module__}): rename one")
    REGISTRY[m.name] = behind_shield(m)


def behind_shield(m: Metric) -> Metric:
    """The metric behind the one shield (metrics/shield.py) when it asks the judge, scanning
    the shield's fields and every other column it requires (a rubric's)."""
    if not m.uses_judge:
        return m
    columns = [f for f in m.requires if "|" not in f]
    own = m.needs_embedder

    def embedder_when(settings: Settings) -> bool:
        """The metric's own need, or the shield's meaning head (not with the fake judge,
        whose embedder is not the head's)."""
        return own(settings) or (settings.shield == "meaning" and settings.judge != "fake")

    return dataclasses.replace(m, fn=shielded(
        m.fn, m.higher_is_better if m.direction_fixed else None, m.name, columns, m.requires),
        uses_embedder=True, embedder_when=embedder_when)


def _with_options(name: str, model: type[BaseModel], fn: MetricFn) -> MetricFn:
    validated: dict[str, BaseModel] = {}  # per settings' raw options: validated once per run

    @functools.wraps(fn)
    async def run(sample: Sample, ctx: MetricContext) -> MetricResult:
        raw = ctx.settings.metric_options.get(name, {})
        key = json.dumps(raw, sort_keys=True, default=str)
        if key not in validated:
            validated[key] = model.model_validate(raw)
        # the context is shared by the sample's metrics: each gets a copy with its own options
        # (the copy shares the pending requests, so identical requests are still asked once)
        return await fn(sample, dataclasses.replace(ctx, options=validated[key]))

    return run


def resolve(names: Iterable[str] | None, rubrics: Iterable[Rubric] = ()) -> list[Metric]:
    """Metric names (or group names) → metrics, in registry order, then the run's `rubrics`
    (metrics files, `localeval.rubric(...)`: metrics/rubric.py) in their order; unknown →
    'did you mean'. None → every metric but those registered with default=False, and every
    rubric."""
    rubrics = list(rubrics)
    if rubrics:
        MODULES.load("rubric")  # sets RUBRIC_METRICS
    extra = RUBRIC_METRICS(rubrics) if rubrics and RUBRIC_METRICS else {}
    if names is None:
        return [m for m in REGISTRY.values() if m.default] + list(extra.values())
    chosen: list[str] = []
    for raw in names:
        name = raw.strip()
        if not name:
            continue
        expanded = (name,) if name in extra or name in REGISTRY else GROUPS.get(name, (name,))
        for n in expanded:
            if n not in REGISTRY and n not in extra:
                known = sorted(REGISTRY) + sorted(extra) + sorted(GROUPS)
                raise UsageError(
                    f"unknown metric {n!r}{did_you_mean(n, known)} (known: {', '.join(known)})"
                )
            if n not in chosen:
                chosen.append(n)
    return REGISTRY.ordered(n for n in chosen if n not in extra) + [
        m for n, m in extra.items() if n in chosen]


def ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else 0.0
