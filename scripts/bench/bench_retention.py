"""Ablation of knowledge_retention's request: each assistant turn of a conversations file under
named variants (JSON on stdout, progress on stderr).

The turns' labels come from the file's construction (scripts/provenance/
build_conversation_dev.py): every reply retains but the last of a `broken` conversation. Per
language and variant: the turns whose greedy verdict is their label, the AUC of P(retained)
over retaining against breaking turns (ties ½) and over the last replies alone (kept against
broken: what tells the two apart, the first reply being one turn of both), and the pairs (kept
against broken conversation of one fact) whose score (the share of turns that retain, as the
metric scores) and whose weighted score (the mean P) rank the kept one higher (ties ½); beside
them the majority baseline (every turn retains) and the length-only one (the shorter last reply
wins).

Variants: `default` (the product's request, `run`'s default: the reason, then the verdict),
`no_reason` (`--no-explain`), and the simplest prompts that could work, each read from the two
digits' probabilities at the first answer position, nothing generated: `bare` (does the reply
keep to everything the user said about themselves? 1 / 0) and `bare_breaks` (does it go against
something the user said about themselves: contradict, forget or ask for it again? 1 / 0, so
P(retained) is P(0)). The `fact_*` variants show one fact of the user's instead of the
transcript (FACT_LABELS): `fact_keeps` / `fact_breaks` as the two bare ones, `fact_template` /
`fact_template_reason` today's template and schema with the fact as its conversation,
`fact_bears` (does the fact matter for the reply?), `fact_respect` / `fact_conflict` (answered
with the words Yes / No). The `user_*` variants ask `fact_keeps` / `fact_bears` of every earlier
user message instead of the one fact; MIXES combine a bears and a keeps variant's records.

    flock /tmp/localeval-cpu.lock python scripts/bench/bench_retention.py \\
        --conversations research/conversations/train.jsonl --out runs/ret-train
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from localeval import prompts
from localeval.data.conversation import transcript, turns_of
from localeval.judge.interface import JudgeRequest, judge_p_yes
from localeval.judge.schemas import BareRetained, Retained, schema_json
from localeval.metrics.knowledge_retention import STEP
from localeval.text import split_sentences

VARIANTS = ("default", "no_reason", "bare", "bare_breaks", "fact_breaks", "fact_keeps",
            "fact_template", "fact_template_reason", "fact_bears", "user_keeps", "user_bears",
            "fact_respect", "fact_conflict")
MIXES = {"fact_mix": ("fact_bears", "fact_keeps"), "user_mix": ("user_bears", "user_keeps")}
"""A mix is computed from two variants' records, asking nothing: P(retained) = 1 − P(the
user's words bear on the reply) × (1 − P(the reply is consistent with them))."""
SYSTEM = {"en": "Answer with a single digit only.", "zh": "只用一个数字回答。"}
QUESTION = {
    "bare": {"en": "Does the last reply keep to everything the user said about themselves? "
                   "Reply 1 for yes, 0 for no.",
             "zh": "最后一条回复是否遵守了用户说过的关于自己的一切？是回复1，否回复0。"},
    "bare_breaks": {"en": "Does the last reply go against something the user said about "
                          "themselves (contradict it, forget it, or ask for it again)? Reply 1 "
                          "for yes, 0 for no.",
                    "zh": "最后一条回复是否违背了用户说过的关于自己的内容（与之矛盾、忘记了它，"
                          "或再次询问）？是回复1，否回复0。"},
}
FACT_QUESTION = {
    "fact_breaks": {"en": "Does the reply go against what the user said (contradict it, ignore "
                          "it, or ask for it again)? Reply 1 for yes, 0 for no.",
                    "zh": "这条回复是否违背了用户说的话（与之矛盾、忽视它，或再次询问）？"
                          "是回复1，否回复0。"},
    "fact_keeps": {"en": "Is the reply consistent with what the user said? Reply 1 for yes, 0 "
                         "for no.",
                   "zh": "这条回复与用户说的话一致吗？是回复1，否回复0。"},
    "fact_bears": {"en": "Does what the user said about themselves (their diet, health, budget, "
                         "dates, place or name) matter for this reply? Reply 1 for yes, 0 for no.",
                   "zh": "用户说的关于自己的情况（饮食、健康、预算、日期、地点或名字）与这条回复"
                         "有关吗？是回复1，否回复0。"},
}
FACT_QUESTION["user_keeps"] = FACT_QUESTION["fact_keeps"]
FACT_QUESTION["user_bears"] = FACT_QUESTION["fact_bears"]
YES_NO = {
    "fact_respect": {"en": 'A user told an assistant: "{fact}"\nLater the assistant replied: '
                           '"{reply}"\n\nDoes this reply respect what the user told it? Answer '
                           'Yes or No.',
                     "zh": "用户对助手说：“{fact}”\n之后助手回复：“{reply}”\n\n这条回复照顾到了用户"
                           "说的情况吗？只回答“是”或“否”。"},
    "fact_conflict": {"en": 'A user told an assistant: "{fact}"\nLater the assistant replied: '
                            '"{reply}"\n\nDoes this reply go against what the user told it, or '
                            'ask for it again? Answer Yes or No.',
                      "zh": "用户对助手说：“{fact}”\n之后助手回复：“{reply}”\n\n这条回复是否违背了"
                            "用户说的情况，或者再次询问了它？只回答“是”或“否”。"},
}
"""Asked with the words Yes / No (是 / 否) as the answers, not digits; P(retained) is P(Yes) for
`fact_respect`, P(No) for `fact_conflict`."""
YES_NO_SYSTEM = {"en": "Answer Yes or No.", "zh": "只回答“是”或“否”。"}
YES_NO_WORDS = {"en": ["Yes", "No"], "zh": ["是", "否"]}
FACT_LABELS = {"en": ("The user said:", "The assistant replied:"),
               "zh": ("用户说：", "助手回复：")}
"""The `fact_*` variants show the judge one fact of the user's and one reply: the fact is the
construction's (the first sentence of the first user message), an oracle for what an
extraction step would give."""
LABELS = {"en": ("Conversation so far:", "The assistant's last reply:"),
          "zh": ("目前的对话：", "助手的最后一条回复：")}


def request(variant: str, lang: str, history: str, reply: str, max_tokens: int,
            fact: str = "", user_said: str = "") -> JudgeRequest:
    if variant in YES_NO:
        return JudgeRequest(step=STEP + "_" + variant, answer_schema=schema_json(BareRetained),
                            messages=[{"role": "system", "content": YES_NO_SYSTEM[lang]},
                                      {"role": "user", "content": YES_NO[variant][lang].format(
                                          fact=fact, reply=reply)}],
                            max_tokens=1, continuations=YES_NO_WORDS[lang])
    if variant in FACT_QUESTION:
        head, tail = FACT_LABELS[lang]
        fact = user_said if variant.startswith("user_") else fact
        user = "\n".join([f"{head} {fact}", f"{tail} {reply}", "", FACT_QUESTION[variant][lang]])
        return JudgeRequest(step=STEP + "_" + variant, answer_schema=schema_json(BareRetained),
                            messages=[{"role": "system", "content": SYSTEM[lang]},
                                      {"role": "user", "content": user}],
                            max_tokens=1, continuations=["0", "1"])
    if variant.startswith("fact_template"):
        explain = variant.endswith("_reason")
        head = FACT_LABELS[lang][0].rstrip(":：")
        sep = "：" if lang == "zh" else ": "
        return JudgeRequest(step=STEP, messages=prompts.render(
            lang, STEP, history=f"{head}{sep}{fact}", reply=reply, explain=explain),
            answer_schema=schema_json(Retained if explain else BareRetained),
            max_tokens=max_tokens, probe_fields=["retained"])
    if variant in ("default", "no_reason"):
        explain = variant == "default"
        return JudgeRequest(step=STEP, messages=prompts.render(lang, STEP, history=history,
                                                               reply=reply, explain=explain),
                            answer_schema=schema_json(Retained if explain else BareRetained),
                            max_tokens=max_tokens, probe_fields=["retained"])
    head, tail = LABELS[lang]
    user = "\n".join([head, history, "", f"{tail} {reply}", "", QUESTION[variant][lang]])
    return JudgeRequest(step=STEP + "_" + variant, answer_schema=schema_json(BareRetained),
                        messages=[{"role": "system", "content": SYSTEM[lang]},
                                  {"role": "user", "content": user}],
                        max_tokens=1, continuations=["0", "1"])


def p_retained(variant: str, reply: Any, lang: str) -> float | None:
    if variant in YES_NO:
        p_yes = reply.choice_probs.get(YES_NO_WORDS[lang][0])
        if p_yes is None:
            return None
        return 1.0 - p_yes if variant == "fact_conflict" else p_yes
    if variant in ("default", "no_reason") or variant.startswith("fact_template"):
        return judge_p_yes(reply.field_probs[0]) if reply.field_probs else None
    p1 = reply.choice_probs.get("1")
    if p1 is None:
        return None
    return 1.0 - p1 if variant.endswith("_breaks") else p1


def mixed(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The MIXES' records, from the records of the variants they combine."""
    by = {(r["variant"], r["id"], r["turn"]): r for r in records}
    out = []
    for name, (bears, keeps) in MIXES.items():
        for (v, rid, turn), b in list(by.items()):
            k = by.get((keeps, rid, turn))
            if v != bears or k is None or b["p"] is None or k["p"] is None:
                continue
            out.append({"variant": name, "id": rid, "turn": turn,
                        "p": round(1.0 - b["p"] * (1.0 - k["p"]), 6),
                        "prompt_tokens": b["prompt_tokens"] + k["prompt_tokens"],
                        "seconds": b["seconds"] + k["seconds"]})
    return out


def turns_to_judge(row: dict[str, Any]) -> list[dict[str, Any]]:
    """Each assistant turn after a user turn: its history, reply and label."""
    turns = turns_of(row["turns"])
    at = [k for k, t in enumerate(turns) if t.role == "assistant" and k > 0]
    broken = row["labels"]["knowledge_retention"] < 1.0
    fact = split_sentences(turns[0].content)[0]
    return [{"turn": turns[k].number, "fact": fact,
             "user_said": " ".join(t.content for t in turns[:k] if t.role == "user"),
             "history": transcript(turns[:k], row["language"]), "reply": turns[k].content,
             "label": 0 if broken and k == at[-1] else 1} for k in at]


def last_turn(row: dict[str, Any]) -> int:
    return turns_to_judge(row)[-1]["turn"]


def auc(pos: list[float], neg: list[float]) -> float | None:
    if not pos or not neg:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return round(wins / (len(pos) * len(neg)), 3)


def pairwise(good: list[float], bad: list[float]) -> float | None:
    if not good:
        return None
    return round(sum((g > b) + 0.5 * (g == b) for g, b in zip(good, bad, strict=True))
                 / len(good), 3)


def figures(records: list[dict[str, Any]], rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for lang in sorted({r["language"] for r in rows}):
        mine = [r for r in rows if r["language"] == lang]
        kept = {r["id"].rsplit("-", 1)[0]: r for r in mine if r["id"].endswith("-kept")}
        broken = {r["id"].rsplit("-", 1)[0]: r for r in mine if r["id"].endswith("-broken")}
        keys = sorted(kept.keys() & broken.keys())
        labels = [t["label"] for r in mine for t in turns_to_judge(r)]
        last = lambda r: len(r["turns"][-1]["content"])  # noqa: E731
        base = {"turns": len(labels), "majority_accuracy": round(sum(labels) / len(labels), 3),
                "length_only_pairwise": pairwise([-last(kept[k]) for k in keys],
                                                 [-last(broken[k]) for k in keys])}
        per: dict[str, Any] = {}
        for v in sorted({r["variant"] for r in records}):
            got = {(r["id"], r["turn"]): r for r in records if r["variant"] == v}
            mine_v = [(r, t) for r in mine for t in turns_to_judge(r)
                      if (r["id"], t["turn"]) in got]
            ps = [(got[(r["id"], t["turn"])]["p"], t["label"]) for r, t in mine_v]
            right = sum((p is not None and (p >= 0.5) == bool(label)) for p, label in ps)

            def score(row: dict[str, Any], weighted: bool, got: dict = got) -> float:
                vals = [got[(row["id"], t["turn"])]["p"] for t in turns_to_judge(row)]
                vals = [0.0 if p is None else (p if weighted else float(p >= 0.5)) for p in vals]
                return sum(vals) / len(vals)

            done = [k for k in keys if all((r["id"], t["turn"]) in got for r in (kept[k], broken[k])
                                           for t in turns_to_judge(r))]
            per[v] = {
                "turns": len(ps), "accuracy": round(right / len(ps), 3) if ps else None,
                "auc": auc([p for p, label in ps if label and p is not None],
                           [p for p, label in ps if not label and p is not None]),
                "last_reply_auc": auc([got[(kept[k]["id"], last_turn(kept[k]))]["p"] or 0.0
                                       for k in done],
                                      [got[(broken[k]["id"], last_turn(broken[k]))]["p"] or 0.0
                                       for k in done]),
                "pairwise": pairwise([score(kept[k], False) for k in done],
                                     [score(broken[k], False) for k in done]),
                "pairwise_weighted": pairwise([score(kept[k], True) for k in done],
                                              [score(broken[k], True) for k in done]),
                "first_reply_retained": round(sum(
                    (got[(r["id"], t["turn"])]["p"] or 0) >= 0.5 for r, t in mine_v
                    if t["turn"] == turns_to_judge(r)[0]["turn"]) / max(1, sum(
                        t["turn"] == turns_to_judge(r)[0]["turn"] for r, t in mine_v)), 3),
                "prompt_tokens_per_request": round(sum(got[(r["id"], t["turn"])]["prompt_tokens"]
                                                       for r, t in mine_v) / max(1, len(mine_v))),
                "seconds_per_request": round(sum(got[(r["id"], t["turn"])]["seconds"]
                                                 for r, t in mine_v) / max(1, len(mine_v)), 2),
            }
        out[lang] = {"baselines": base, "variants": per}
    return out


async def run(args: argparse.Namespace, rows: list[dict[str, Any]], path: Path) -> None:
    from localeval.config import Settings
    from localeval.models.backends import make_judge

    done = {(r["variant"], r["id"], r["turn"]) for r in read(path)}
    todo = [(v, r, t) for v in args.variants for r in rows for t in turns_to_judge(r)
            if (v, r["id"], t["turn"]) not in done]
    if not todo:
        return
    judge, _ = make_judge(Settings(profile=args.profile, parallel=1, n_ctx=4096))
    try:
        with path.open("a", encoding="utf-8") as f:
            for i, (v, r, t) in enumerate(todo, 1):
                t0 = time.perf_counter()
                reply = await judge.complete(request(v, r["language"], t["history"], t["reply"],
                                                     args.max_tokens, t["fact"], t["user_said"]))
                f.write(json.dumps({"variant": v, "id": r["id"], "turn": t["turn"],
                                    "p": p_retained(v, reply, r["language"]), "prompt_tokens":
                                    reply.prompt_tokens, "seconds":
                                    round(time.perf_counter() - t0, 3),
                                    "text": reply.text[:200]}, ensure_ascii=False) + "\n")
                f.flush()
                if i % 10 == 0 or i == len(todo):
                    print(f"{i}/{len(todo)}", file=sys.stderr, flush=True)
    finally:
        judge.close()


def read(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--conversations", type=Path, required=True)
    parser.add_argument("--variants", type=lambda s: s.split(","), default=list(VARIANTS))
    parser.add_argument("--out", type=Path, required=True, help="folder of records.jsonl")
    parser.add_argument("--profile", default="small")
    parser.add_argument("--max-tokens", type=int, default=160)
    parser.add_argument("--report", action="store_true", help="figures from the records only")
    args = parser.parse_args(argv)
    unknown = [v for v in args.variants if v not in VARIANTS]
    if unknown:
        print(f"--variants: unknown {', '.join(unknown)}; of {', '.join(VARIANTS)}",
              file=sys.stderr)
        return 2
    rows = [r for r in read(args.conversations) if r.get("set") == "retention"]
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "records.jsonl"
    if not args.report:
        asyncio.run(run(args, rows, path))
    records = read(path)
    records = [r for r in records + mixed(records)
               if r["variant"] in args.variants or r["variant"] in MIXES]
    print(json.dumps({"conversations": str(args.conversations), "profile": args.profile,
                      "figures": figures(records, rows)}, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
