"""The estimate as a table for people (JSON is the dict itself)."""

from __future__ import annotations

from typing import Any

from localeval.report.kit import text_table

COLUMNS = (("step", None), ("requests", "requests"), ("count", "count"), ("cached", "cached"),
           ("prompt tok", "prompt_tokens"), ("read", "prompt_tokens_processed"),
           ("generated", "generated_tokens"), ("answer read", "forced_tokens"))


def _row(name: str, values: dict[str, Any]) -> list[str]:
    cells = [name]
    for _, key in COLUMNS[1:]:
        value = values.get(key, "")
        if key == "generated_tokens" and values.get("generated") == "estimate":
            value = f"~{value}"
        cells.append(str(value))
    return cells


def table(estimate: dict[str, Any]) -> str:
    """A readable table: per step requests (how exact), cache hits, tokens; then the time."""
    head = (f"estimate: {estimate['samples']} sample(s), metrics "
            f"{', '.join(estimate['metrics']) or '-'}, --parallel {estimate['parallel']}")
    if estimate.get("judge"):
        head += f", judge {estimate['judge']['name']}"
    rows = [[c for c, _ in COLUMNS]]
    rows += [_row(step, v) for step, v in estimate["steps"].items()]
    rows.append(_row("total", estimate["total"]))
    lines = [head, *text_table(rows, right=[i for i in range(len(COLUMNS)) if i not in (0, 2)])]
    lines.append("read = prompt tokens processed after prefix reuse; answer read = answer "
                 "tokens read, not generated; ~ = estimated")
    floor = estimate.get("floor")
    if floor:
        lines.append(f"floor: {floor['floor_tokens']} tokens (the samples' own "
                     f"{floor['own_tokens']} read once + {floor['decision_tokens']} deciding); "
                     f"work {floor['work_tokens']} = {floor['work_over_floor']}x the floor")
    t = estimate.get("time")
    if t:
        cal = t["calibration"]
        line = (f"time: about {t['seconds']:.0f} s (judge {t['judge_s']:.0f} s + model load "
                f"{t['load_s']:.0f} s)")
        if cal:
            line += (f", from this machine's calibration of {cal.get('measured_at')}: "
                     f"{cal.get('prompt_tokens_per_s')} prompt tok/s, "
                     f"{cal.get('generated_tokens_per_s_at_4')} generated tok/s with 4 "
                     "sequences")
        lines.append(line)
    for note in estimate.get("notes", []):
        lines.append(f"note: {note}")
    return "\n".join(lines)
