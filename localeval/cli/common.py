"""What every subcommand prints: one terminal-safe line on stderr, gate verdicts, the summary
table, JSON."""

from __future__ import annotations

import json
import sys
from typing import Any

from localeval.safe import terminal_safe


def say(message: str) -> None:
    """One line on stderr, with ids, paths and dataset text made terminal-safe."""
    print(terminal_safe(message), file=sys.stderr)


def gate_report(failures: list[str], n_gates: int) -> int:
    for line in failures:
        say(line)
    if failures:
        print(f"{len(failures)} of {n_gates} gate(s) failed", file=sys.stderr)
        return 1
    return 0


def summary_table(summary: dict[str, Any]) -> str:
    """The run's scores, one row each; a `.weighted` / `.greedy` row that would read exactly as
    its headline's (names.same_as_headline) is left out and named under the table."""
    from localeval.names import same_as_headline, same_note
    from localeval.report.kit import fmt, fmt_ci, text_table

    hidden = same_as_headline(summary["metrics"])
    rows: list[tuple[Any, ...]] = [("metric", "mean", "95% CI", "n scored", "errors", "skipped")]
    rows += [(key, fmt(m["mean"]), fmt_ci(m.get("ci95")), m["count"], m["errors"], m["skipped"])
             for key, m in summary["metrics"].items() if key not in hidden]
    lines = text_table(rows)
    if hidden:
        lines.append(same_note(hidden))
    judge = summary.get("judge")
    tail = f"elapsed {summary.get('elapsed_s') or 0:.1f} s"
    if judge:
        tail += (
            f"; judge calls {judge['calls']} (+{judge['cached']} cached), "
            f"tokens {judge['prompt_tokens']} in / {judge['completion_tokens']} out"
        )
    errors = (summary.get("dataset") or {}).get("input_errors") or []
    if errors:
        tail += f"; {len(errors)} input row(s) skipped"
    retried = {k: m["judge_retries"] for k, m in summary["metrics"].items()
               if m.get("judge_retries") and "." not in k}
    if retried:
        tail += "; requests retried split smaller: " + ", ".join(
            f"{k} {n}" for k, n in retried.items())
    gain = (summary.get("retrieval") or {}).get("ndcg_gain")
    if gain:
        tail += f"; ndcg gain {gain}"
    return "\n".join([*lines, tail])


def to_json(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False)
