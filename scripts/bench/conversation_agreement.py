"""Agreement of the conversation metrics with the conversations dev set's labels, and what a
conversation costs against its turns scored as independent rows (prints JSON; no model).

    python scripts/bench/conversation_agreement.py agree --dev research/conversations/dev.jsonl \
        --run runs/conv-retention --run runs/conv-completeness
    python scripts/bench/conversation_agreement.py split --dev research/conversations/dev.jsonl \
        --set completeness --language en --n 3 --out runs/conv-cost
    python scripts/bench/conversation_agreement.py cost --conversations runs/conv-cost-c \
        --independent runs/conv-cost-i

`agree`: per metric and language, over the dev conversations labelled for it that the runs
scored: the share whose score equals the label (1.0 kept / met, 0.5 one turn broken / turned
away), pairwise agreement (the good conversation of each built pair scored above the bad one;
a tie counts ½), and the per-turn verdicts against the labels' turn. `split`: writes the chosen
conversations (`conversations.jsonl`) and the same assistant turns as single-turn rows, each
with its user message as asked and no history (`independent.jsonl`). `cost`: judge calls,
prompt tokens, generated tokens and seconds of the two runs' summary.json, per conversation.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def results(run: Path) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in rows(run / "results.jsonl")}


def agree(dev: Path, runs: list[Path]) -> dict[str, Any]:
    scored: dict[str, dict[str, Any]] = {}
    for run in runs:
        scored.update(results(run))
    out: dict[str, Any] = {}
    for metric in ("knowledge_retention", "conversation_completeness"):
        for lang in ("en", "zh"):
            mine = [r for r in rows(dev) if metric in r["labels"] and r["language"] == lang]
            got = [(r, scored[r["id"]]["scores"].get(metric)) for r in mine
                   if r["id"] in scored and metric in scored[r["id"]]["scores"]]
            if not got:
                continue
            exact = sum(1 for r, s in got if s is not None and abs(s - r["labels"][metric]) < 1e-9)
            pairs = {}
            for r, s in got:
                pairs.setdefault(r["id"].rsplit("-", 1)[0], {})[r["labels"][metric]] = s
            wins = []
            for p in pairs.values():
                good, bad = p.get(1.0), p.get(0.5)
                if good is None or bad is None:
                    wins.append(0.0)
                else:
                    wins.append(1.0 if good > bad else 0.5 if good == bad else 0.0)
            last = [(r["labels"][metric] == 1.0, _last_verdict(scored[r["id"]], metric))
                    for r, _ in got]
            out[f"{metric}/{lang}"] = {
                "conversations": len(got), "exact": exact / len(got),
                "pairwise": sum(wins) / len(wins) if wins else None, "pairs": len(wins),
                "last_turn_verdict_agrees": sum(1 for want, v in last if v == want) / len(last),
                "scores": {r["id"]: s for r, s in got}}
    return out


def _last_verdict(record: dict[str, Any], metric: str) -> bool | None:
    """The verdict on the turn the label is about: the last assistant reply (retention) or the
    last user message (completeness)."""
    key = "retained" if metric == "knowledge_retention" else "met"
    turns = (record["details"].get(metric) or {}).get("turns") or []
    return bool(turns[-1][key]) if turns else None


def independent_turns(conversation: dict[str, Any]) -> list[dict[str, Any]]:
    """A conversation's assistant turns as single-turn rows: the user message as asked (no
    history), the answer, and the turn's contexts and ground_truth where it has them."""
    out, asked = [], None
    for i, t in enumerate(conversation["turns"], start=1):
        if t["role"] == "user":
            asked = t["content"]
        elif asked is not None:
            out.append({"id": f"{conversation['id']}-turn{i}", "question": asked,
                        "answer": t["content"],
                        **{k: t[k] for k in ("contexts", "ground_truth") if t.get(k)}})
    return out


def split(dev: Path, set_name: str, language: str, n: int, out: Path) -> dict[str, Any]:
    chosen = [r for r in rows(dev) if r["set"] == set_name and r["language"] == language][:n]
    out.mkdir(parents=True, exist_ok=True)
    independent = [row for r in chosen for row in independent_turns(r)]
    conversations = [{"id": r["id"], "turns": r["turns"]} for r in chosen]
    for name, items in (("conversations", conversations), ("independent", independent)):
        (out / f"{name}.jsonl").write_text(
            "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in items), encoding="utf-8")
    return {"conversations": len(conversations), "turns": len(independent), "out": str(out)}


def cost(conversations: Path, independent: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    n = len(rows(conversations / "results.jsonl"))
    for name, run in (("conversations", conversations), ("independent", independent)):
        s = json.loads((run / "summary.json").read_text(encoding="utf-8"))
        judge = s.get("judge") or {}
        out[name] = {"rows": s["dataset"]["samples"], "calls": judge.get("calls"),
                     "calls_by_step": judge.get("calls_by_step"),
                     "prompt_tokens": judge.get("prompt_tokens"),
                     "completion_tokens": judge.get("completion_tokens"),
                     "elapsed_s": s.get("elapsed_s"),
                     "means": {k: m.get("mean") for k, m in s["metrics"].items()
                               if "." not in k}}
    c, i = out["conversations"], out["independent"]
    out["per_conversation"] = {
        k: {"as_conversation": c[k] / n, "as_independent_turns": i[k] / n,
            "ratio": c[k] / i[k] if i[k] else None}
        for k in ("calls", "prompt_tokens", "completion_tokens", "elapsed_s")
        if c.get(k) is not None and i.get(k) is not None}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("agree")
    a.add_argument("--dev", type=Path, required=True)
    a.add_argument("--run", type=Path, action="append", required=True)
    s = sub.add_parser("split")
    s.add_argument("--dev", type=Path, required=True)
    s.add_argument("--set", default="completeness")
    s.add_argument("--language", default="en")
    s.add_argument("--n", type=int, default=3)
    s.add_argument("--out", type=Path, required=True)
    c = sub.add_parser("cost")
    c.add_argument("--conversations", type=Path, required=True)
    c.add_argument("--independent", type=Path, required=True)
    args = parser.parse_args()
    if args.cmd == "agree":
        result = agree(args.dev, args.run)
    elif args.cmd == "split":
        result = split(args.dev, args.set, args.language, args.n, args.out)
    else:
        result = cost(args.conversations, args.independent)
    print(json.dumps(result, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    main()
