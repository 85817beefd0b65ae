"""Write the faithfulness dev pairs as meta-eval files, split into a fit half and a report half.

For each of halueval, halueval_summarization, halluqa and uhgeval: `<set>-fit.jsonl` holds pairs
[0, N) (τ is fitted on these: fit_threshold.py, beside it) and `<set>-report.jsonl` pairs [N, 2N)
(the figures reported). `long-report.jsonl` is the long dev set (build_long_dev.py, its
rows paired), `adversarial-report.jsonl` the injection pairs, `swaps-report.jsonl` the swaps
(swaps.jsonl in data/) and `evasive-report.jsonl` answer_relevance's direct-vs-evasive pairs;
none is fitted on.

    python scripts/provenance/dev_sets.py --out runs/dev --n 20
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

from localeval.meta_eval.convert import CONVERTERS, default_src

SETS = ("halueval", "halueval_summarization", "halluqa", "uhgeval")
SWAPS = Path(__file__).with_name("data") / "swaps.jsonl"
"""16 hand-written pairs (8 en, 8 zh): a comparison turned round, or one of two things the
context names put in place of the other (roles, places, years, people); never fitted on."""


EVASIVE = {
    "en": ["As for the question \"{q}\", it depends on many factors and there is no single answer.",
           "That is hard to say. People have different views on \"{q}\", and I would rather not "
           "commit to one.",
           "I am not certain. Some sources say one thing about \"{q}\" and others say another."],
    "zh": ["关于“{q}”这个问题，取决于很多因素，没有唯一的答案。",
           "这很难说。对于“{q}”，人们看法不一，我不想下结论。",
           "我不太确定。关于“{q}”，有的资料这么说，有的资料那么说。"],
}
"""On-topic answers that commit to nothing: each repeats the question, so only answer_relevance's
clear flag (not the cosine) can tell them from a direct answer."""
_NOT_FACTUAL = re.compile("无法|不能|没有|不确定|不存在|不是|并非|不会|看法|主观|取决")


def evasive_pairs(halueval_report: list[dict], halluqa_rows: Path, n: int = 12) -> list[dict]:
    """n en pairs (the HaluEval report half's right answers) and n zh pairs (HalluQA rows whose
    best answer states a fact), each a direct answer (a) against an evasive one (b)."""
    out = []
    for i, pair in enumerate(halueval_report[:n]):
        right = pair[pair["preferred"]]
        q = right["question"].rstrip("?")
        out.append({"pair_id": f"evasive-en-{i}", "language": "en", "preferred": "a",
                    "a": right, "b": {**right, "answer": EVASIVE["en"][i % 3].format(q=q)}})
    k = 0
    for line in halluqa_rows.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        best = row["Best Answer1"]
        if _NOT_FACTUAL.search(best) or len(best) < 4:
            continue
        right = {"question": row["Question"], "contexts": [best], "answer": best}
        q = row["Question"].rstrip("？?")
        out.append({"pair_id": f"evasive-zh-{k}", "language": "zh", "preferred": "a",
                    "a": right, "b": {**right, "answer": EVASIVE["zh"][k % 3].format(q=q)}})
        k += 1
        if k == n:
            break
    return out


def write(path: Path, pairs: list[dict]) -> None:
    path.write_text("".join(json.dumps(p, ensure_ascii=False) + "\n" for p in pairs),
                    encoding="utf-8")


def long_pairs(out: Path, n: int) -> list[dict]:
    rows_file = out / "long_rows.jsonl"
    subprocess.run([sys.executable, str(Path(__file__).with_name("build_long_dev.py")),
                    "--pairs", str(n), "--out", str(rows_file)], check=True,
                   stdout=subprocess.DEVNULL)
    rows = [json.loads(line) for line in rows_file.read_text(encoding="utf-8").splitlines()]
    twins: dict[str, dict[str, dict]] = {}
    for r in rows:
        side = "a" if r.pop("preferred") else "b"
        pid = r.pop("pair")
        r.pop("id", None)
        twins.setdefault(pid, {})[side] = r
    return [{"pair_id": pid, "preferred": "a", **t} for pid, t in twins.items()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--n", type=int, default=20, help="pairs per half (default 20)")
    parser.add_argument("--long", type=int, default=3, help="long pairs per language")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    counts = {}
    halves: dict[str, list[dict]] = {}
    for name in SETS:
        pairs = list(CONVERTERS[name](default_src()))
        halves[name] = pairs[args.n: 2 * args.n]
        write(args.out / f"{name}-fit.jsonl", pairs[: args.n])
        write(args.out / f"{name}-report.jsonl", halves[name])
        counts[name] = [len(pairs[: args.n]), len(halves[name])]
    evasive = evasive_pairs(halves["halueval"], default_src() / "halluqa_dev.jsonl")
    write(args.out / "evasive-report.jsonl", evasive)
    counts["evasive"] = [0, len(evasive)]
    long = long_pairs(args.out, args.long)
    write(args.out / "long-report.jsonl", long)
    adversarial = list(CONVERTERS["adversarial"](default_src()))
    write(args.out / "adversarial-report.jsonl", adversarial)
    swaps = [json.loads(line) for line in SWAPS.read_text(encoding="utf-8").splitlines()]
    write(args.out / "swaps-report.jsonl", swaps)
    counts |= {"long": [0, len(long)], "adversarial": [0, len(adversarial)],
               "swaps": [0, len(swaps)]}
    print(json.dumps({"fit_report_pairs": counts}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
