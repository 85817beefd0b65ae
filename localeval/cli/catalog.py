"""`metrics` and `models list|pull|verify`: what localeval can compute and which models it has."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from localeval.rubrics import Rubric


def cmd_metrics(args: argparse.Namespace) -> int:
    from localeval.metrics import GROUPS, REGISTRY
    from localeval.metrics.rubric import rubric_metrics
    from localeval.rubrics import load_files

    rubrics = {r.name: r for r in load_files(getattr(args, "metrics_files", None) or [])}
    extra = rubric_metrics(rubrics.values())
    width = max(len(n) for n in [*REGISTRY, *extra])
    pad = " " * width
    for m in [*REGISTRY.values(), *extra.values()]:
        needs = ", ".join(m.requires)
        uses = (
            "+".join(u for u, on in (("judge", m.uses_judge), ("embedder", m.uses_embedder)) if on)
            or "-"
        )
        print(
            f"{m.name.ljust(width)}  needs: {needs}  uses: {uses}\n{pad}  {m.description}"
        )
        if not m.default:
            print(f"{pad}  runs only when named (--metrics {m.name})")
        if m.options is not None:  # with their defaults
            options = ", ".join(f"{k}={f.default!r}" for k, f in m.options.model_fields.items())
            print(f"{pad}  options [metric_options.{m.name}]: {options}")
        if m.name in rubrics:
            for line in rubric_lines(rubrics[m.name]):
                print(f"{pad}  {line}")
    for group, members in GROUPS.items():
        print(f"{group.ljust(width)}  group: {', '.join(members)}")
    return 0


def rubric_lines(r: Rubric) -> list[str]:
    """What `metrics --metrics-file` says of a rubric besides its needs: its fields."""
    scale = "yes/no" if r.scale == "yes/no" else f"{r.scale[0]}..{r.scale[1]}"
    lines = [f"rubric from {r.source}: scale {scale}, "
             f"{'higher' if r.higher_is_better else 'lower'} is better; scores {r.name} "
             f"(probability-weighted level, also {r.name}.weighted) and {r.name}.greedy "
             "(greedy level)"]
    if r.criteria["zh"] != r.criteria["en"]:  # the English one is the description above
        lines.append(f"criteria (zh): {r.criteria['zh']}")
    lines += [f"level {v}: {t['en']}" + (f" / {t['zh']}" if t["zh"] != t["en"] else "")
              for v, t in r.levels.items()]
    if r.steps == "draft":
        lines.append("steps: drafted by the judge from the criteria (one request a language)")
    elif r.steps:
        lines.append(f"steps: {'; '.join(r.steps['en'])}")
    if r.template:
        lines.append("template: its own (variables checked)")
    return lines + [f"note: {n}" for n in r.notes]


def cmd_models_list(args: argparse.Namespace) -> int:
    from localeval import models

    manifest = models.load_manifest()
    for name, profile in manifest.profiles.items():
        print(
            f"profile {name}: judge {profile['judge']}, embedder {profile['embedder']}"
            f" — {profile.get('description', '')}"
        )
    for spec in manifest.models.values():
        present = "present" if spec.path().exists() else "absent"
        size = f"{spec.size / 1e6:.0f} MB" if spec.size else "size unknown"
        kinds = ", ".join(s["kind"] for s in spec.sources)
        print(f"{spec.name} ({spec.role}, {size}, {present}) sources: {kinds}")
    return 0


def cmd_models_pull(args: argparse.Namespace) -> int:
    from localeval import models
    from localeval.models.pull import pull

    manifest = models.load_manifest()
    names = args.names
    if not names:  # named models need no profile
        profile = manifest.profile(args.profile)
        names = [profile["judge"], profile["embedder"]]
    for name in names:
        pull(manifest.get(name), local=args.local)
    return 0


def cmd_models_verify(args: argparse.Namespace) -> int:
    """Re-hash the profile's judge and embedder (or the named models) and any other model
    present; exit 1 when one is missing or does not match the manifest."""
    from localeval import models

    manifest = models.load_manifest()
    if args.names:
        specs = [manifest.get(n) for n in args.names]
        scope = "named"
    else:
        profile = manifest.profile(args.profile)
        wanted = {profile["judge"], profile["embedder"]}
        specs = [s for s in manifest.models.values() if s.name in wanted or s.path().exists()]
        scope = f"profile {args.profile}"
    failed = 0
    for spec in specs:
        state = models.check(spec, full=True)
        if state.ok:
            print(f"{spec.name}: ok ({state.path})")
        else:
            print(f"{spec.name}: {state.state.upper()} {state.detail}")
        failed += state.state in ("corrupt", "missing")
    if failed:
        print(f"{failed} model(s) of the {scope} failed verification", file=sys.stderr)
        return 1
    return 0
