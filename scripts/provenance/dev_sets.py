"""Write the faithfulness dev pairs as meta-eval files, split into a fit half and a report half.

For each of halueval, halueval_summarization, halluqa and uhgeval: `<set>-fit.jsonl` holds pairs
[0, N) (τ is fitted on these: fit_threshold.py, beside it) and `<set>-report.jsonl` pairs [N, 2N)
(the figures reported). `long-report.jsonl` is the long dev set (build_long_dev.py, its
rows paired), `adversarial-report.jsonl` the injection pairs, `swaps-report.jsonl` the swaps
(swaps.jsonl in data/) and `evasive-report.jsonl` answer_relevance's direct-vs-evasive pairs;
none is fitted on. The relevance sets (`partial-<lang>.jsonl`: complete vs partial answers for
answer_relevance; `padded-<lang>.jsonl`: focused vs padded contexts for context_relevance, padded
from one unrelated document or with related sentences of ../shared/data/train; each
also as labelled rows, `-rows.jsonl`, for Cohen's κ) are built by relevance_pairs below.

    python scripts/provenance/dev_sets.py --out runs/dev --n 20
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # scripts.provenance.convert

from localeval.text import overlap_words, split_sentences
from scripts.provenance.convert import (
    CONVERTERS,
    UHGEVAL_QUESTION,
    default_src,
    dev_rows,
)

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


RELEVANCE_START = {"partial": 60, "padded": 120}
"""First HaluEval QA dev row of each relevance set (apart from the faithfulness halves, 0-39)."""
_YES_NO = {"yes", "no"}


def _dot(text: str) -> str:
    text = text.strip()
    return text if text[-1:] in ".!?。！？”」』）)" else text + ("。" if _cjk(text) else ".")


def _cjk(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def _pair(pid: str, language: str, good: dict, bad: dict, kind: str) -> dict:
    return {"pair_id": pid, "language": language, "preferred": "a", "a": good, "b": bad,
            "meta": {"kind": kind}}


def _partial(language: str, qa: list[tuple[str, str, str]], extra: list[str], n: int
             ) -> list[dict]:
    """n pairs whose question asks two things (two rows' questions), the complete answer
    (both answers) against one that drops a part (the first part kept in even pairs, the
    second in odd ones), then n pairs of an answer against the same answer plus a sentence of
    another document (added last in even pairs, first in odd ones)."""
    out = []
    for k in range(n):
        (q1, a1, c1), (q2, a2, c2) = qa[2 * k], qa[2 * k + 1]
        joiner = "" if language == "zh" else " "
        row = {"question": q1 + joiner + q2, "contexts": [c1, c2]}
        kept = a1 if k % 2 == 0 else a2
        out.append(_pair(f"partial-{language}-part-{k}", language,
                         {**row, "answer": _dot(a1) + joiner + _dot(a2)},
                         {**row, "answer": _dot(kept)}, "part dropped"))
    for k in range(n):
        q, a, c = qa[2 * n + k]
        joiner = "" if language == "zh" else " "
        added = (_dot(a) + joiner + extra[k]) if k % 2 == 0 else (extra[k] + joiner + _dot(a))
        row = {"question": q, "contexts": [c]}
        out.append(_pair(f"partial-{language}-added-{k}", language, {**row, "answer": _dot(a)},
                         {**row, "answer": added}, "unrelated sentence added"))
    return out


def _splice(own: list[str], foreign: list[str], language: str) -> str:
    """`own` sentences with `foreign` ones put in after every second own sentence (the rest at
    the end): the same context padded with another document's sentences."""
    out: list[str] = []
    rest = list(foreign)
    for i, s in enumerate(own):
        out.append(s)
        if i % 2 == 1 and rest:
            out.append(rest.pop(0))
    out += rest
    return ("" if language == "zh" else " ").join(out)


def _padded(language: str, items: list[tuple[str, str, str]], others: list[str], n: int
            ) -> list[dict]:
    """n pairs: (question, answer, context) with the context as it is against the same context
    with sentences of another document spliced in (half as many as it has, at least 2)."""
    out = []
    for k in range(n):
        q, a, c = items[k]
        own = split_sentences(c)
        foreign = split_sentences(others[k])[: max(2, (len(own) + 1) // 2)]
        row = {"question": q, "answer": a}
        out.append(_pair(f"padded-{language}-{k}", language,
                         {**row, "contexts": [_splice(own, [], language)]},
                         {**row, "contexts": [_splice(own, foreign, language)]},
                         "context padded"))
    return out


TRAIN_POOL = {"en": ("halueval_qa_train.jsonl", 2000), "zh": ("uhgeval_train.jsonl", 1000)}
"""The train rows whose sentences pad the related pairs (file in ../shared/data/train, rows)."""


def train_pool(train: Path, language: str) -> list[tuple[str, set[str]]]:
    """Every sentence of the first train rows of the language (HaluEval QA knowledge; UHGEval
    articles' remainders), with its content terms."""
    name, rows = TRAIN_POOL[language]
    out = []
    for line in (train / name).read_text(encoding="utf-8").splitlines()[:rows]:
        row = json.loads(line)
        text = row["knowledge"] if language == "en" else row["newsRemainder"]
        out += [(s, overlap_words(s)) for s in split_sentences(text) if 15 <= len(s) <= 300]
    return out


def related(pool: list[tuple[str, set[str]]], about: str, avoid: str, k: int) -> list[str]:
    """The k pool sentences sharing the most content terms with `about` (at least one; ties in
    pool order), leaving out those that hold `avoid` or share over half their terms with it:
    padding a reader would call related, which the candidates rule cannot settle by itself."""
    terms, near = overlap_words(about), overlap_words(avoid)
    scored = []
    for i, (s, own) in enumerate(pool):
        shared = len(own & terms)
        if shared and avoid.lower() not in s.lower() and len(own & near) * 2 <= len(own):
            scored.append((-shared, i, s))
    return [s for _, _, s in sorted(scored)[:k]]


def _padded_related(language: str, items: list[tuple[str, str, str]],
                    pool: list[tuple[str, set[str]]], n: int, avoid: list[str]) -> list[dict]:
    """n pairs as _padded, the spliced sentences taken from the train pool by shared terms with
    the question and answer (related()), not from one unrelated document."""
    out = []
    for k in range(n):
        q, a, c = items[k]
        own = split_sentences(c)
        about = a if language == "zh" else q + " " + a
        foreign = related(pool, about, avoid[k], max(2, (len(own) + 1) // 2))
        row = {"question": q, "answer": a}
        out.append(_pair(f"padded-{language}-related-{k}", language,
                         {**row, "contexts": [_splice(own, [], language)]},
                         {**row, "contexts": [_splice(own, foreign, language)]},
                         "context padded with related sentences"))
    return out


def answer_sentence(row: dict) -> str | None:
    """The sentence of a HaluEval QA row's knowledge that holds its right answer (a full-sentence
    answer to its question), or None."""
    found = [s for s in split_sentences(row["knowledge"])
             if row["right_answer"].strip().lower() in s.lower()]
    return found[-1] if found else None


def relevance_pairs(src: Path, n: int = 5) -> dict[str, list[dict]]:
    """The relevance dev sets, en (HaluEval QA dev rows from RELEVANCE_START; partial: the
    knowledge sentence with the right answer as the answer) and zh (HalluQA rows whose best
    answer states a fact; UHGEval articles): `partial-<lang>` 2n pairs, `padded-<lang>` 4n
    pairs (2n padded with an unrelated document's sentences, then 2n with the train sentences
    that share the most terms with the answer: related()). Deterministic; never from
    WikiEval."""
    hal = [r for r in dev_rows("halueval", src)
           if r["right_answer"].strip().lower() not in _YES_NO]
    start = RELEVANCE_START["partial"]
    en_qa = [(r["question"].strip(), s, r["knowledge"])
             for r in hal[start:] if (s := answer_sentence(r))][: 3 * n]
    en_extra = [split_sentences(r["knowledge"])[0] for r in hal[start + 50:start + 50 + n]]
    uhg = dev_rows("uhgeval", src)
    zh_extra = [next(s for s in split_sentences(r["newsRemainder"]) if 15 <= len(s) <= 60)
                for r in uhg[-n:]]
    zh_qa = []
    for r in dev_rows("halluqa", src):
        if not _NOT_FACTUAL.search(r["Best Answer1"]) and len(r["Best Answer1"]) >= 4:
            zh_qa.append((r["Question"].strip(), r["Best Answer1"].strip(), r["Source"]))
    zh_qa = (zh_qa * 2)[: 3 * n]  # 21 such rows: the added-sentence pairs may reuse some
    start = RELEVANCE_START["padded"]
    en_items = [(r["question"].strip(), _dot(r["right_answer"]), r["knowledge"])
                for r in hal[start:start + 2 * n]]
    en_others = [r["knowledge"] for r in hal[start + 40:start + 40 + 2 * n]]
    zh_items = [(UHGEVAL_QUESTION, r["realContinuation"].strip(),
                 (r["newsBeginning"] + r["newsRemainder"]).strip()) for r in uhg[: 2 * n]]
    zh_others = [r["newsRemainder"] for r in uhg[100:100 + 2 * n]]
    train = src.parent / "train"
    en_avoid = [r["right_answer"].strip() for r in hal[start:start + 2 * n]]
    return {"partial-en": _partial("en", en_qa, en_extra, n),
            "partial-zh": _partial("zh", zh_qa, zh_extra, n),
            "padded-en": _padded("en", en_items, en_others, 2 * n)
            + _padded_related("en", en_items, train_pool(train, "en"), 2 * n, en_avoid),
            "padded-zh": _padded("zh", zh_items, zh_others, 2 * n)
            + _padded_related("zh", zh_items, train_pool(train, "zh"), 2 * n,
                              [a for _, a, _ in zh_items])}


def as_rows(pairs: list[dict]) -> list[dict]:
    """The pairs as labelled rows (the preferred side 1, the other 0), for meta-eval's κ."""
    rows = []
    for p in pairs:
        for side in ("a", "b"):
            rows.append({**p[side], "id": f"{p['pair_id']}/{side}", "language": p["language"],
                         "label": int(p["preferred"] == side)})
    return rows


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
    parser.add_argument("--relevance", type=int, default=5,
                        help="relevance pairs per kind and language (default 5)")
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
    for name, pairs in relevance_pairs(default_src(), args.relevance).items():
        write(args.out / f"{name}.jsonl", pairs)
        write(args.out / f"{name}-rows.jsonl", as_rows(pairs))
        counts[name] = [0, len(pairs)]
    print(json.dumps({"fit_report_pairs": counts}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
