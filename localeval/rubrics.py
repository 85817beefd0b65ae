"""Rubric metrics: a criterion in words, graded by the judge on a scale (localeval/docs/rubrics.md).

A `Rubric` is the record a metrics file (TOML, `--metrics-file`) or `localeval.rubric(...)`
builds: its name, the row fields it shows the judge (`requires`, any column of the row), the
criteria per language, the scale (`lo..hi` single digits, or "yes/no"), optional level
descriptions and evaluation steps (written, or "draft": drafted by the judge from the criteria),
its direction and optionally the user's own Jinja template. metrics/rubric.py turns it into a
metric. Every bad value is one line naming the file and the key (RubricError).

A rubric file is data: a template runs in jinja2's sandbox with no loader (template_env), is
refused when it includes, imports or reads a name starting with `_` (check_template), and must
lie at or below its metrics file's folder.

This module is light (pydantic and tomllib; jinja2 only to check a template) so that the
settings can hold rubrics: `Settings.rubrics` carries them, content and all, to the Ray workers;
what a dump (run.json's fingerprint, summary.json, the reports) holds of a template is its
sha256, never its text.
"""

from __future__ import annotations

import hashlib
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_serializer

from localeval.errors import ConfigError
from localeval.names import did_you_mean

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

LANGUAGES = ("en", "zh")
YES_NO = "yes/no"
KEYS = ("requires", "criteria", "scale", "levels", "steps", "higher_is_better", "template")
"""The keys of a rubric's table in a metrics file (`criteria` is the only one required)."""
DEFAULT_REQUIRES = ("question", "answer")
DEFAULT_SCALE = (1, 5)
FRAME_VARIABLES = frozenset({"name", "criteria", "steps", "levels", "scale", "lo", "hi",
                             "explain", "reply", "yes_no"})
"""What a template may use besides the row fields the rubric requires (docs/rubrics.md)."""
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class RubricError(ConfigError):
    """A bad metrics file or rubric: one line naming the file (or `python`) and the key."""


class Rubric(BaseModel):
    """One rubric metric, normalised: every per-language value holds both languages (one
    language given serves both), levels are keyed by their integer value."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    requires: tuple[str, ...] = DEFAULT_REQUIRES
    criteria: dict[str, str]
    scale: tuple[int, int] | Literal["yes/no"] = DEFAULT_SCALE
    levels: dict[int, dict[str, str]] = Field(default_factory=dict)
    steps: dict[str, tuple[str, ...]] | Literal["draft"] = Field(default_factory=dict)
    higher_is_better: bool = True
    template: dict[str, str] = Field(
        default_factory=dict, description="language → the user's Jinja template text (what a "
                                          "dump holds of it is its sha256: template_sha256)")
    source: str = Field("python", exclude=True, description="where it was defined")
    notes: tuple[str, ...] = Field((), exclude=True,
                                   description="what a run says once about it (a language "
                                               "given for both)")

    @field_serializer("template")
    def _template_sha256(self, template: dict[str, str]) -> dict[str, str]:
        return template_sha256(template)

    @property
    def values(self) -> tuple[int, ...]:
        """The levels the judge chooses from, worst first (yes/no: 0 = no, 1 = yes)."""
        lo, hi = self.bounds
        return tuple(range(lo, hi + 1))

    @property
    def bounds(self) -> tuple[int, int]:
        return (0, 1) if self.scale == YES_NO else self.scale  # type: ignore[return-value]

    def normalised(self, level: float) -> float:
        """A level (or a probability-weighted one) on [0, 1]."""
        lo, hi = self.bounds
        return (level - lo) / (hi - lo)

    def where(self, key: str | None = None) -> str:
        return f"{self.source} [{self.name}]" + (f" {key}" if key else "")


def template_sha256(template: Mapping[str, str]) -> dict[str, str]:
    """Language → "sha256:<hex>" of the template's text (UTF-8): what run.json, summary.json
    and the reports hold of a rubric's template, so that a run's fingerprint changes with the
    text while no file copies it."""
    return {lang: "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
            for lang, text in template.items()}


def rubric(name: str, *, criteria: str | Mapping[str, str],
           requires: Iterable[str] = DEFAULT_REQUIRES,
           scale: Iterable[int] | str = DEFAULT_SCALE,
           levels: Mapping[Any, str | Mapping[str, str]] | None = None,
           steps: Iterable[str] | Mapping[str, Iterable[str]] | str | None = None,
           higher_is_better: bool = True,
           template: str | Mapping[str, str] | None = None,
           source: str = "python") -> Rubric:
    """A rubric as a metrics file's table builds it (`template` is the template's text here; a
    file names a template file). Raises RubricError naming `source` and the key."""
    where = f"{source} [{name}]"
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise RubricError(f"{source} [{name}]: a rubric's name is letters, digits and _ "
                          "(it names its scores: name, name.weighted, name.greedy)")
    notes: list[str] = []
    req = _requires(requires, where)
    crit = _localised(criteria, f"{where} criteria", notes, "criteria")
    lo_hi = _scale(scale, where)
    values = (0, 1) if lo_hi == YES_NO else tuple(range(lo_hi[0], lo_hi[1] + 1))
    lev = _levels(levels or {}, values, lo_hi == YES_NO, where, notes)
    stp = _steps(steps, where, notes)
    if not isinstance(higher_is_better, bool):
        raise RubricError(f"{where} higher_is_better: true or false, got {higher_is_better!r}")
    tpl = {} if template is None else _localised(template, f"{where} template", notes,
                                                 "template", strip=False)
    for lang, text in tpl.items():
        check_template(text, req, f"{where} template" + (f" ({lang})" if len(set(tpl.values()))
                                                         > 1 else ""))
    if lo_hi == YES_NO and lev and not tpl:
        notes.append("levels: the packaged frame does not show a yes/no rubric's level "
                     "descriptions to the judge (on the dev sets they lowered its agreement); "
                     "say what yes means in criteria")
    return Rubric(name=name, requires=req, criteria=crit, scale=lo_hi, levels=lev, steps=stp,
                  higher_is_better=higher_is_better, template=tpl, source=source,
                  notes=tuple(f"{where}: {n}" for n in notes))


def _requires(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise RubricError(f"{where} requires: a list of row fields, e.g. "
                          f'["question", "answer"]; got {value!r}')
    fields = tuple(value)
    if not fields:
        raise RubricError(f"{where} requires: name at least one row field")
    for f in fields:
        if not isinstance(f, str) or not _NAME.fullmatch(f) or f in ("id", "line"):
            raise RubricError(f"{where} requires: {f!r} is not a row field's name (letters, "
                              "digits and _; not id or line)")
    if len(set(fields)) != len(fields):
        raise RubricError(f"{where} requires: a field is named twice")
    return fields


def _localised(value: Any, where: str, notes: list[str], what: str,
               strip: bool = True) -> dict[str, str]:
    """A text, or a table {en = "…", zh = "…"}: both languages (one serves both, noted); each
    text stripped (a template's kept as it is: its sha256 is the file's)."""
    def kept(text: str) -> str:
        return text.strip() if strip else text

    if isinstance(value, str):
        if not value.strip():
            raise RubricError(f"{where}: empty")
        return {lang: kept(value) for lang in LANGUAGES}
    if not isinstance(value, Mapping) or not value:
        raise RubricError(f'{where}: a text or a table {{ en = "…", zh = "…" }}, got {value!r}')
    unknown = [k for k in value if k not in LANGUAGES]
    if unknown:
        raise RubricError(f"{where}: unknown language {unknown[0]!r} (en or zh)")
    texts: dict[str, str] = {}
    for lang, text in value.items():
        if not isinstance(text, str) or not text.strip():
            raise RubricError(f"{where}.{lang}: a non-empty text, got {text!r}")
        texts[lang] = kept(text)
    return _both_languages(texts, what, "text", notes)


def _scale(value: Any, where: str) -> tuple[int, int] | Literal["yes/no"]:
    if value == YES_NO:
        return YES_NO
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise RubricError(f'{where} scale: [lo, hi] (integers) or "yes/no", got {value!r}')
    bounds = list(value)
    if len(bounds) != 2 or not all(isinstance(b, int) and not isinstance(b, bool)
                                   for b in bounds):
        raise RubricError(f'{where} scale: [lo, hi] (two integers) or "yes/no", got {value!r}')
    lo, hi = bounds
    if lo >= hi:
        raise RubricError(f"{where} scale: a scale needs at least two levels (lo < hi), got "
                          f"[{lo}, {hi}]")
    if lo < 0 or hi > 9:
        raise RubricError(f"{where} scale: levels are single digits 0..9 (each level one token, "
                          f"whose probability the judge gives), got [{lo}, {hi}]; e.g. [0, 9]")
    return lo, hi


def _levels(value: Any, values: tuple[int, ...], yes_no: bool, where: str,
            notes: list[str]) -> dict[int, dict[str, str]]:
    if not isinstance(value, Mapping):
        raise RubricError(f'{where} levels: a table {{ 1 = "…", 5 = "…" }}, got {value!r}')
    out: dict[int, dict[str, str]] = {}
    words = {"yes": 1, "no": 0}
    for key, text in value.items():
        raw = str(key).strip().lower()
        level = words.get(raw) if yes_no and raw in words else (
            int(raw) if re.fullmatch(r"-?\d+", raw) else None)
        if level not in values:
            allowed = "yes, no" if yes_no else ", ".join(map(str, values))
            raise RubricError(f"{where} levels: {key!r} is not a level of the scale ({allowed})")
        out[level] = _localised(text, f"{where} levels.{key}", notes, f"levels.{key}")
    return dict(sorted(out.items()))


def _steps(value: Any, where: str, notes: list[str]) -> dict[str, tuple[str, ...]] | Literal[
        "draft"]:
    if value is None:
        return {}
    if value == "draft":
        return "draft"
    if isinstance(value, Mapping):
        unknown = [k for k in value if k not in LANGUAGES]
        if unknown or not value:
            raise RubricError(f"{where} steps: unknown language {unknown[0]!r} (en or zh)"
                              if unknown else f"{where} steps: empty")
        per = {lang: _step_list(v, f"{where} steps.{lang}") for lang, v in value.items()}
        return _both_languages(per, "steps", "steps", notes)
    listed = _step_list(value, f"{where} steps")
    return {lang: listed for lang in LANGUAGES}


def _step_list(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise RubricError(f'{where}: a list of steps, or "draft" (the judge drafts them), got '
                          f"{value!r}")
    steps = tuple(value)
    if not steps or not all(isinstance(s, str) and s.strip() for s in steps):
        raise RubricError(f"{where}: a non-empty list of non-empty texts")
    return tuple(s.strip() for s in steps)


def check_template(text: str, requires: tuple[str, ...], where: str) -> None:
    """A template must parse, be one file (no include, import, extends or from), read no
    attribute or item whose name starts with `_`, and use only the rubric's row fields and the
    frame's variables. What this cannot see (a name built at render time) the sandbox refuses
    when the template is rendered (template_env)."""
    import jinja2
    from jinja2 import meta, nodes

    try:
        tree = template_env().parse(text)
    except jinja2.TemplateSyntaxError as exc:
        raise RubricError(f"{where}: not a Jinja template (line {exc.lineno}: {exc.message})"
                          ) from None
    tags = {nodes.Include: "include", nodes.Import: "import", nodes.FromImport: "from",
            nodes.Extends: "extends"}
    for node in tree.find_all(tuple(tags)):
        tag = tags[type(node)]
        raise RubricError(f"{where}: {{% {tag} %}} (line {node.lineno}) is not allowed: a "
                          "template is one file, with no include, import, extends or from; "
                          "write its text in the file")
    for node, name in _private_names(tree):
        raise RubricError(f"{where}: reads {name!r} (line {node.lineno}), a name starting with "
                          "_; a template reads only the row's fields and the rubric's variables "
                          "(it runs in a sandbox)")
    names = meta.find_undeclared_variables(tree)
    unknown = sorted(names - set(requires) - FRAME_VARIABLES)
    if unknown:
        raise RubricError(
            f"{where}: uses {{{{ {unknown[0]} }}}}, which the row lacks: add it to requires, or "
            f"use one of {', '.join(sorted(set(requires) | FRAME_VARIABLES))}")


def _private_names(tree: Any) -> Iterable[tuple[Any, str]]:
    """The attributes and items a template reads by a constant name starting with `_`:
    `x.__class__`, `x["__class__"]`, `x|attr("__class__")`, `xs|map(attribute="_y")`."""
    from jinja2 import nodes

    def private(value: Any) -> bool:
        return isinstance(value, nodes.Const) and isinstance(value.value, str) and (
            value.value.startswith("_"))

    for node in tree.find_all((nodes.Getattr, nodes.Getitem, nodes.Filter, nodes.Test)):
        if isinstance(node, nodes.Getattr) and node.attr.startswith("_"):
            yield node, node.attr
        elif isinstance(node, nodes.Getitem) and private(node.arg):
            yield node, node.arg.value
        elif isinstance(node, (nodes.Filter, nodes.Test)):
            if node.name == "attr" and node.args and private(node.args[0]):
                yield node, node.args[0].value
            for kw in node.kwargs:
                if kw.key == "attribute" and private(kw.value):
                    yield node, kw.value.value


def template_env() -> Any:
    """The Jinja environment of user templates: a sandbox (jinja2's
    ImmutableSandboxedEnvironment: no attribute starting with _, no call that changes a value)
    with no loader (nothing to include or import), strict and with trimmed blocks as prompts/
    (whose own environment is prompts.py's)."""
    from jinja2 import StrictUndefined
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    env = ImmutableSandboxedEnvironment(undefined=StrictUndefined, trim_blocks=True,
                                        lstrip_blocks=True, keep_trailing_newline=False,
                                        autoescape=False)
    env.filters["numbered"] = lambda items: "\n".join(f"{i}. {s}" for i, s in enumerate(items, 1))
    return env


def _both_languages(per: dict[str, Any], what: str, noun: str,
                    notes: list[str]) -> dict[str, Any]:
    """`per` (language → value) for every language: one language given serves both, said once."""
    if len(per) == 1:
        (given, value), = per.items()
        other = next(lang for lang in LANGUAGES if lang != given)
        notes.append(f"{what} given in {given} only: {other} rows get the {given} {noun}")
        per = {**per, other: value}
    return {lang: per[lang] for lang in LANGUAGES}


def load_file(path: Path) -> list[Rubric]:
    """The rubrics of one metrics file (one TOML table per rubric), in file order."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RubricError(f"metrics file {path} not found") from None
    except IsADirectoryError:
        raise RubricError(f"metrics file {path} is a folder; give a TOML file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise RubricError(f"metrics file {path}: not valid TOML: {exc}") from None
    except OSError as exc:
        raise RubricError(f"metrics file {path}: {exc.strerror or exc}") from None
    if not data:
        raise RubricError(f"metrics file {path}: holds no rubric (one [name] table each)")
    out = []
    for name, table in data.items():
        where = f"{path} [{name}]"
        if not isinstance(table, dict):
            raise RubricError(f"{path} {name}: a rubric is a table ([{name}] with criteria = "
                              "…), not a value")
        for key in table:
            if key not in KEYS:
                raise RubricError(f"{where} {key}: unknown key{did_you_mean(key, KEYS)} "
                                  f"(known: {', '.join(KEYS)})")
        if "criteria" not in table:
            raise RubricError(f"{where} criteria: missing (the criterion in words)")
        options = dict(table)
        if "template" in options:
            options["template"] = _template_files(options["template"], path, where)
        out.append(rubric(name, source=str(path), **options))
    return out


def _template_files(value: Any, path: Path, where: str) -> str | dict[str, str]:
    """A template file's text (a path relative to the metrics file), or one per language."""
    if isinstance(value, Mapping):
        return {lang: _template_file(v, path, f"{where} template.{lang}")  # type: ignore[misc]
                for lang, v in value.items()}
    return _template_file(value, path, f"{where} template")


def _template_file(value: Any, path: Path, where: str) -> str:
    """The text of a template file named relative to the metrics file: at or below the metrics
    file's folder once links are resolved (no absolute path, no ~, no way out by ..)."""
    if not isinstance(value, str) or not value.strip():
        raise RubricError(f"{where}: a template file (a path relative to the metrics file)")
    folder = path.parent.resolve()
    inside = "put the template at or below the metrics file's folder and name it relative to it"
    if value.startswith("~") or Path(value).is_absolute():
        raise RubricError(f"{where}: {value!r} is not a path relative to the metrics file; "
                          f"{inside}")
    file = (folder / value).resolve()
    if not file.is_relative_to(folder):
        raise RubricError(f"{where}: {value!r} lies outside the metrics file's folder {folder}"
                          f"{' (through a link)' if '..' not in Path(value).parts else ''}; "
                          f"{inside}")
    if file.exists() and not file.is_file():
        raise RubricError(f"{where}: {file} is not a regular file; give a template file")
    try:
        return file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = getattr(exc, "strerror", None) or type(exc).__name__
        raise RubricError(f"{where}: cannot read {file} ({why})") from None


def load_files(paths: Iterable[Path | str]) -> list[Rubric]:
    """The rubrics of every metrics file, in order; a name defined twice is an error naming the
    file and the key (a name that is a built-in metric's: metrics/rubric.py, check_name)."""
    out: list[Rubric] = []
    for path in paths:
        for r in load_file(Path(path)):
            for other in out:
                if other.name == r.name:
                    raise RubricError(f"{r.where()}: {r.name!r} is defined twice (first in "
                                      f"{other.source}); rename one")
            out.append(r)
    return out
