"""The per-variant table of the frame benches (bench_frame.py: rubrics, bench_builtin_frame.py:
built-in metrics): agreement of two scores on a good / bad pair each, and what the requests
cost, over the pairs every variant has both sides of; and the same table as markdown.

A record is any object with `variant`, `pair_id`, `side` ("good" / "bad"), `weighted`, the
second score's attribute, `prompt_tokens`, `prompt_tokens_processed`, `generated_tokens` and
`seconds`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from localeval.meta_eval.stats import bootstrap_ci, mean, pair_outcome

SIDES = ("good", "bad")


def agreement(good: Sequence[float | None], bad: Sequence[float | None]) -> dict[str, Any]:
    """Pairwise agreement (wins + ½ ties, an unscored pair a loss), its bootstrap 95 % interval
    and the ties, of scores where the good answer of pair i is good[i]; agreement None where no
    sample has the score (a metric without it, e.g. no `.weighted`)."""
    outcomes = [pair_outcome(g, b) for g, b in zip(good, bad, strict=True)]
    if all(x is None for x in (*good, *bad)):
        return {"agreement": None, "ci95": None, "ties": 0, "unscored": 2 * len(outcomes)}
    ci = bootstrap_ci(mean, outcomes)
    return {"agreement": round(mean(outcomes) or 0.0, 4),
            "ci95": [round(c, 4) for c in ci] if ci else None,
            "ties": sum(g is not None and b is not None and abs(g - b) <= 1e-9
                        for g, b in zip(good, bad, strict=True)),
            "unscored": sum(x is None for x in (*good, *bad))}


def answer_text(sample: Any) -> str:
    return sample.answer or ""


def contexts_text(sample: Any) -> str:
    return "".join(sample.contexts or ())


def length_baseline(pairs: Sequence[Any], trap: str,
                    text: Callable[[Any], str] = answer_text) -> dict[str, Any]:
    """Agreement of length alone (characters of `text(sample)`: the answer unless told),
    both ways; `baseline` is the set's. A pair is anything with `good` and `bad` samples."""
    good = [float(len(text(p.good))) for p in pairs]
    bad = [float(len(text(p.bad))) for p in pairs]
    longer = agreement(good, bad)
    shorter = agreement([-x for x in good], [-x for x in bad])
    return {"longer_wins": longer["agreement"], "shorter_wins": shorter["agreement"],
            "ties": longer["ties"], "baseline": trap, "of": text.__name__.removesuffix("_text"),
            "agreement": longer["agreement"] if trap == "longer" else shorter["agreement"]}


def figures(records: Iterable[Any], pairs: Sequence[Any], variants: Sequence[str], trap: str,
            *, about: Mapping[str, Any], second: str,
            requests: Callable[[Sequence[Any]], int] = len,
            before: Callable[[Sequence[Any]], dict[str, Any]] = lambda flat: {},
            after: Callable[[Sequence[Any]], dict[str, Any]] = lambda flat: {},
            length_of: Callable[[Any], str] = answer_text) -> dict[str, Any]:
    """Per variant: `weighted` and the `second` score's agreement, `before(flat)`, the costs per
    request (`requests(flat)` of them, at least 1) and per sample, `after(flat)`; `about[v]` is
    the variant's record with an `about` line."""
    got = {(r.variant, r.pair_id, r.side): r for r in records}
    common = [p for p in pairs if all((v, p.pair_id, s) in got for v in variants for s in SIDES)]
    out: dict[str, Any] = {"pairs": len(common), "pair_ids": [p.pair_id for p in common],
                           "length": length_baseline(common, trap, length_of), "variants": {}}
    for v in variants:
        rows = [(got[(v, p.pair_id, "good")], got[(v, p.pair_id, "bad")]) for p in common]
        flat = [r for pair in rows for r in pair]
        n, asked = len(flat) or 1, requests(flat) or 1
        out["variants"][v] = {
            "about": about[v].about,
            "weighted": agreement([g.weighted for g, _ in rows], [b.weighted for _, b in rows]),
            second: agreement([getattr(g, second) for g, _ in rows],
                              [getattr(b, second) for _, b in rows]),
            **before(flat),
            "prompt_tokens_per_request": round(sum(r.prompt_tokens for r in flat) / asked, 1),
            "prompt_tokens_read_per_request": round(
                sum(r.prompt_tokens_processed for r in flat) / asked, 1),
            "generated_tokens_per_request": round(
                sum(r.generated_tokens for r in flat) / asked, 1),
            "s_per_sample": round(sum(r.seconds for r in flat) / n, 3),
            **after(flat),
        }
    return out


def markdown(summary: dict[str, Any], what: str, second: str,
             middle: Sequence[tuple[str, str]] = ()) -> str:
    """The table of one set's figures; `what` names the score judged (a metric, a rubric),
    `middle` the (column, key) pairs between the second score's ties and the costs."""
    f = summary["figures"]
    columns = ["variant", "weighted (95 % CI)", "ties", second, "ties",
               *(c for c, _ in middle), "prompt tok/req", "read tok/req", "gen tok/req",
               "s/sample"]
    of = "" if f["length"].get("of", "answer") == "answer" else f"{f['length']['of']}, "
    head = (f"{summary['set']} ({summary['language']}), {what}, {f['pairs']} pairs; "
            f"length-only ({of}{f['length']['baseline']} wins): {f['length']['agreement']:.3f}\n\n"
            f"| {' | '.join(columns)} |\n|{'---|' * len(columns)}\n")
    lines = []
    for name, v in f["variants"].items():
        w, s = v["weighted"], v[second]
        ci = "–".join(f"{c:.2f}" for c in w["ci95"]) if w["ci95"] else "–"
        cells = [name, _cell(w, ci), w["ties"], _cell(s), s["ties"], *(v[k] for _, k in middle),
                 v["prompt_tokens_per_request"], v["prompt_tokens_read_per_request"],
                 v["generated_tokens_per_request"], v["s_per_sample"]]
        lines.append(f"| {' | '.join(map(str, cells))} |")
    return head + "\n".join(lines) + "\n"


def _cell(score: dict[str, Any], ci: str | None = None) -> str:
    """An agreement as a table cell: "–" where no sample has the score."""
    if score["agreement"] is None:
        return "–"
    return f"{score['agreement']:.3f}" + (f" ({ci})" if ci is not None else "")
