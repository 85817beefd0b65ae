"""`metrics` and `models list|pull|verify`: what localeval can compute and which models it has."""

from __future__ import annotations

import argparse
import sys


def cmd_metrics(args: argparse.Namespace) -> int:
    from localeval.metrics import GROUPS, REGISTRY

    width = max(len(n) for n in REGISTRY)
    for m in REGISTRY.values():
        needs = ", ".join(m.requires)
        uses = (
            "+".join(u for u, on in (("judge", m.uses_judge), ("embedder", m.uses_embedder)) if on)
            or "-"
        )
        print(
            f"{m.name.ljust(width)}  needs: {needs}  uses: {uses}\n{' ' * width}  {m.description}"
        )
        if not m.default:
            print(f"{' ' * width}  runs only when named (--metrics {m.name})")
        if m.options is not None:  # with their defaults
            options = ", ".join(f"{k}={f.default!r}" for k, f in m.options.model_fields.items())
            print(f"{' ' * width}  options [metric_options.{m.name}]: {options}")
    for group, members in GROUPS.items():
        print(f"{group.ljust(width)}  group: {', '.join(members)}")
    return 0


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
