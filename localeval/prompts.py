"""Render the Jinja templates under prompts/<lang>/ into chat messages.

The templates are found in $LOCALEVAL_PROMPTS, else a checkout's top-level prompts/, else the
installed package's data (localeval/_prompts).

One environment with StrictUndefined: a missing variable is an error, never an empty string.
Each template's sha256 goes into the run's metadata and, through the rendered text, the cache key.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterable, Iterator, Mapping
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from localeval import paths


def prompts_dir() -> Path:
    """$LOCALEVAL_PROMPTS, else the checkout's prompts/, else the package's _prompts/."""
    if explicit := os.environ.get("LOCALEVAL_PROMPTS"):
        return Path(explicit)
    root = paths.checkout_root()
    return root / "prompts" if root is not None else paths.package_data("_prompts")


PROMPTS_DIR = prompts_dir()
LANGUAGES = ("zh", "en")


@lru_cache(maxsize=1)
def _env():  # type: ignore[no-untyped-def]
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(PROMPTS_DIR)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=False,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters["numbered"] = lambda items: "\n".join(f"{i}. {s}" for i, s in enumerate(items, 1))
    return env


def template_name(lang: str, step: str) -> str:
    return f"{lang}/{step}.j2"


_OVERRIDDEN: dict[str, str] = {}
"""Template name → text read in place of the file, while `overridden` is in effect."""

SYSTEM_SUFFIX = "_system"
"""`<step>_system.j2` beside a step's template is that step's own system prompt (e.g. the
rubrics' "answer with a single digit"); the other steps get `system.j2`."""


@contextlib.contextmanager
def overridden(texts: Mapping[str, str]) -> Iterator[None]:
    """While inside, `render` reads these texts (name → text, "en/faithfulness_verdicts.j2")
    in place of the template files: a template's variants measured through the product's own
    code (scripts/bench/bench_builtin_frame.py)."""
    saved = dict(_OVERRIDDEN)
    _OVERRIDDEN.update(texts)
    try:
        yield
    finally:
        _OVERRIDDEN.clear()
        _OVERRIDDEN.update(saved)


def _template(name: str):  # type: ignore[no-untyped-def]
    text = _OVERRIDDEN.get(name)
    return _env().get_template(name) if text is None else _env().from_string(text)


def render(lang: str, step: str, **variables: object) -> list[dict[str, str]]:
    """Chat messages for one judge step: its system prompt, then the step's text."""
    user = _template(template_name(lang, step)).render(**variables).strip()
    return with_system(lang, user, system_of(step))


def system_of(step: str) -> str:
    """The system prompt's template of a step: its own when it has one, else `system`."""
    own = step + SYSTEM_SUFFIX
    return own if (PROMPTS_DIR / template_name("en", own)).is_file() else "system"


def with_system(lang: str, user: str, system: str = "system") -> list[dict[str, str]]:
    """Chat messages: the system prompt (template `system`), then `user` (a rendered step)."""
    text = _template(template_name(lang, system)).render().strip()
    return [{"role": "system", "content": text}, {"role": "user", "content": user}]


@cache
def template_sha256(lang: str, step: str) -> str:
    return hashlib.sha256((PROMPTS_DIR / template_name(lang, step)).read_bytes()).hexdigest()


REWRITE_STEP = "conversation_rewrite"
"""A conversation turn's standalone question (localeval/conversation.py)."""
CONVERSATION_STEPS = frozenset({REWRITE_STEP})
"""The steps a run of conversations asks besides its metrics' (localeval/conversation.py)."""


def run_steps(metrics: Iterable[Any], *, conversations: bool) -> set[str]:
    """The judge steps a run of these metrics renders: every metric's declared steps (the
    rendered ones: tests/test_metric_declarations.py), and with `conversations` the
    conversations' own; none when no metric asks the judge."""
    steps = {s for m in metrics for s in m.steps}
    return steps | CONVERSATION_STEPS if steps and conversations else steps


def metric_prompt_hashes(metrics: Iterable[Any], *, conversations: bool = False) -> dict[str, str]:
    """`prompt_hashes` of the steps a run of these metrics renders (run_steps; {} when none asks
    the judge), with the conversations' own when the rows hold `conversations`: what a run
    records in run.json and summary.json."""
    steps = run_steps(metrics, conversations=conversations)
    return prompt_hashes(steps) if steps else {}


def worker_prompt_hashes(metrics: Iterable[Any]) -> dict[str, str]:
    """What every Ray worker must hold the same of: every template a run of these metrics can
    render, conversations' included (a worker is not told whether the rows hold any), with
    their system prompts."""
    return metric_prompt_hashes(metrics, conversations=True)


def prompt_hashes(steps: set[str]) -> dict[str, str]:
    """sha256 of every template used (both languages) plus the system prompts: the shared
    `system` and each step's own `<step>_system` where the folder has one (system_of)."""
    out: dict[str, str] = {}
    for lang in LANGUAGES:
        for step in sorted(steps | {"system"} | {s + SYSTEM_SUFFIX for s in steps}):
            path = PROMPTS_DIR / template_name(lang, step)
            if path.is_file():
                out[template_name(lang, step)] = template_sha256(lang, step)
    return out
