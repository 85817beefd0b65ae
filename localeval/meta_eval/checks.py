"""Which judge metrics have been checked against people, with which judge: the record behind
advisory gates.

Every complete `localeval meta-eval` run adds, per metric it judged, an entry keyed by the judge
model's sha256 to `meta_eval_checks.json` beside the answer cache ($LOCALEVAL_CACHE_DIR, else
the user's cache folder): the score key, the agreement it reached, the data and the folder. A gate
run with `--advisory-until-checked` only warns for a judge metric that has no entry for the
run's judge — a gate on an unchecked judge should not block a merge, nor be trusted to pass one.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from localeval.config import default_cache_path

FILE = "meta_eval_checks.json"
MIN_CHECKED = 30
"""The pairs or rows a meta-eval must have judged to be recorded: agreement on four rows says
nothing, and a record turns advisory gates into enforced ones."""


def judged(result: Any) -> int:
    """The pairs (or labelled rows) a meta-eval result judged in all."""
    overall = result.groups.get("all")
    return int(getattr(overall, "pairs", None) or getattr(overall, "rows", None) or 0)


def checks_path() -> Path:
    return default_cache_path().parent / FILE


def load() -> dict[str, dict[str, Any]]:
    """{metric: {judge sha256: entry}}; {} when nothing was recorded or the file is unreadable."""
    try:
        data = json.loads(checks_path().read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def record(result: Any, out_dir: Path) -> list[str]:
    """Add a complete meta-eval result (run.MetaEvalResult) for each of its metrics; returns the
    metrics recorded (none for an incomplete run, the fake judge, or fewer than MIN_CHECKED
    pairs or rows judged)."""
    from localeval.results.runfiles import write_json

    judge = (result.models or {}).get("judge") or {}
    sha = judge.get("sha256")
    if not result.status.complete or not sha or sha == "fake" or judged(result) < MIN_CHECKED:
        return []
    overall = result.groups.get("all")
    agreement = getattr(overall, "pairwise_accuracy", None) or getattr(overall, "auroc", None)
    data = load()
    for metric in result.metrics:
        data.setdefault(metric, {})[sha] = {
            "judge": judge.get("name"), "score": result.score, "agreement": agreement,
            "kind": result.kind, "data": result.data, "out": str(Path(out_dir).resolve()),
            "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
    checks_path().parent.mkdir(parents=True, exist_ok=True)
    write_json(checks_path(), data)
    return list(result.metrics)


def checked(metric: str, judge_sha: str | None) -> bool:
    return bool(judge_sha) and judge_sha in load().get(metric, {})
