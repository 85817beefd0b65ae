"""Training rows for the learned verifier, built from ../shared/data/train only (never dev/).

Each row is a faithfulness sample plus `claim_labels`: per sentence of the answer (as
localeval.text.split_sentences cuts it) 1 (supported by the context), 0 (not) or null (not
known, not trained on). The examples differ only in whether a claim is supported, so a head
cannot learn a dataset's style or length:
- `slot`: a right answer, and the same answer with one name, number, date or place replaced by
  another of the same kind from the same context (or, for a detail the context lacks, from
  another row's context);
- `negation`, `comparison`, `role`: the same sentence negated, its comparison turned round, two
  names of the context swapped;
- `annotated`: UHGEval's hallucinated continuations, a sentence holding a keyword the
  annotators marked 不合理 labelled 0 (other sentences unknown), the real continuation 1;
- `edit` rows of HaluEval summarization: the right summary with one sentence negated or its
  comparison turned round (that sentence 0, the others 1; the dataset's hallucinated summaries
  are rewritten whole, so their sentences cannot be labelled one by one);
- `dataset`: HaluEval QA's own hallucinated answer, only where it is not longer than the right
  one (97 % are; those would teach length);
- `para`: a sentence of a UHGEval article or HaluEval summarization document rewritten in other
  words by the judge (scripts/verifier/paraphrase.py) against its neighbourhood as the context,
  and the same rewrite with a slot, negation (added, or removed where it has one), comparison or
  role edit — both sides paraphrases, so neither "copied" nor "negative in form" tells them apart;
  and (`para-added`) the rewrite with one specific detail its context lacks, added by the judge.

    python scripts/verifier/build_training.py --out runs/verifier/train.jsonl [--seed 0]
        [--qa 250] [--uhg 80] [--summ 30] [--paraphrases runs/verifier/paraphrases.jsonl]
        [--embellished runs/verifier/embellished.jsonl]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from localeval.text import split_sentences

TRAIN = Path(__file__).resolve().parents[3] / "shared" / "data" / "train"
UHG_QUESTION = "请续写这篇新闻。"
SUMMARY_QUESTION = "Summarize the document."
PARA_QUESTION = {"zh": "根据上下文，这里说了什么？", "en": "What does the text say?"}

_NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?![\w])")
_NAME = re.compile(r"\b(?:[A-Z][a-z’'\-]+|[A-Z]{2,})(?:\s+(?:of\s+|de\s+|the\s+)?"
                   r"(?:[A-Z][a-z’'\-]+|[A-Z]{2,}))*\b")
_NOT_NAMES = {"The", "A", "An", "It", "He", "She", "They", "We", "I", "This", "That", "In",
              "On", "At", "His", "Her", "Its", "Their", "There", "But", "And", "After", "When",
              "While", "As", "For", "By", "With", "From", "Yes", "No", "Q", "A:"}
_EN_NEGATE = re.compile(r"\b(is|was|are|were|has|have|had|will|can|could|would|should|did|"
                        r"does|do)\b(?!\s+not\b|n['’]t)")
_EN_DENIED = re.compile(r"\s+(?:not|never)\b|n['’]t\b")
_EN_COMPARE = [("more", "less"), ("larger", "smaller"), ("higher", "lower"), ("before", "after"),
               ("older", "younger"), ("longer", "shorter"), ("bigger", "smaller"),
               ("increased", "decreased"), ("first", "last"), ("earlier", "later"),
               ("most", "least"), ("greater", "fewer"), ("won", "lost"), ("above", "below")]
_ZH_COMPARE = [("高于", "低于"), ("多于", "少于"), ("增加", "减少"), ("上升", "下降"),
               ("之前", "之后"), ("超过", "不足"), ("最大", "最小"), ("提高", "降低"),
               ("扩大", "缩小"), ("上涨", "下跌"), ("增长", "下降"), ("同意", "反对"),
               ("支持", "反对"), ("成功", "失败"), ("批准", "拒绝"), ("首次", "再次"),
               ("已经", "尚未"), ("加强", "削弱"), ("积极", "消极"), ("开始", "结束")]
_ZH_NEGATE = [("是", "不是"), ("将", "不会"), ("会", "不会"), ("有", "没有"), ("能", "不能"),
              ("已", "未")]
_ZH_DENIED = [("不是", "是"), ("不会", "会"), ("不能", "能"), ("没有", "有"), ("尚未", "已经"),
              ("还未", "已经"), ("并未", "已经"), ("从未", "曾经"), ("无法", "能够"),
              ("不再", "仍然"), ("不可能", "可能"), ("不愿", "愿意"), ("不符合", "符合"),
              ("不允许", "允许"), ("未能", "已经"), ("未", "已")]
_ZH_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def _jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def _row(rid: str, source: str, kind: str, language: str, question: str, context: str,
         answer: str, labels: dict[int, int] | int) -> dict[str, Any] | None:
    """A training row; `labels` is one label for every sentence, or sentence index → label."""
    sentences = split_sentences(answer)
    if not sentences:
        return None
    if isinstance(labels, int):
        per = [labels] * len(sentences)
    else:
        per = [labels.get(i) for i in range(len(sentences))]
    if all(v is None for v in per):
        return None
    return {"id": rid, "source": source, "kind": kind, "language": language,
            "question": question, "contexts": [context], "answer": answer, "claim_labels": per}


def _names(text: str) -> list[str]:
    out = []
    for m in _NAME.finditer(text):
        name = m.group(0)
        if name not in _NOT_NAMES and len(name) > 2:
            out.append(name)
    return list(dict.fromkeys(out))


def _swap_slot(answer: str, context: str, foreign: str, rng: random.Random) -> str | None:
    """The answer with one of its numbers or names (found in the context) replaced by another
    of the same kind from the context, or from `foreign` when the context has none."""
    for finder in rng.sample([_NUMBER.findall, _names], 2):
        own = [x for x in dict.fromkeys(finder(answer)) if x in context]
        if not own:
            continue
        target = rng.choice(own)
        pool = [x for x in finder(context) if x not in answer and x != target]
        if not pool:
            pool = [x for x in finder(foreign) if x not in answer and x not in context]
        if pool:
            return answer.replace(target, rng.choice(sorted(set(pool))), 1)
    return None


def _negate_en(sentence: str) -> str | None:
    if _EN_DENIED.search(sentence):
        return _EN_DENIED.sub("", sentence, count=1)
    m = _EN_NEGATE.search(sentence)
    return None if m is None else sentence[:m.end()] + " not" + sentence[m.end():]


def _turn(sentence: str, pairs: list[tuple[str, str]], words: bool) -> str | None:
    for a, b in pairs:
        for x, y in ((a, b), (b, a)):
            pattern = rf"\b{x}\b" if words else re.escape(x)
            if re.search(pattern, sentence):
                return re.sub(pattern, y, sentence, count=1)
    return None


def _role_swap(sentence: str, context: str) -> str | None:
    names = [n for n in _names(sentence) if n in context]
    if len(names) < 2 or names[0] in names[1] or names[1] in names[0]:
        return None
    a, b = names[0], names[1]
    return sentence.replace(a, "\0").replace(b, a).replace("\0", b)


def halueval_qa(n: int, rng: random.Random) -> Iterator[dict[str, Any]]:
    rows = list(_jsonl(TRAIN / "halueval_qa_train.jsonl"))
    picked = rng.sample(rows, min(n, len(rows)))
    for k, r in enumerate(picked):
        context, q, right = r["knowledge"], r["question"], r["right_answer"].strip()
        foreign = picked[(k + 1) % len(picked)]["knowledge"]
        rid = f"qa{r['row']}"
        yield from filter(None, [_row(f"{rid}-right", "halueval_qa", "right", "en", q, context,
                                      right, 1)])
        edits = [("slot", _swap_slot(right, context, foreign, rng)),
                 ("negation", _negate_en(right) if len(right.split()) > 3 else None),
                 ("comparison", _turn(right, _EN_COMPARE, True)),
                 ("role", _role_swap(right, context))]
        edits = [(kind, text) for kind, text in edits if text and text != right]
        if edits:
            kind, text = rng.choice(edits)
            row = _row(f"{rid}-{kind}", "halueval_qa", kind, "en", q, context, text, 0)
            if row:
                yield row
        wrong = r["hallucinated_answer"].strip()
        if len(wrong) <= len(right) and len(split_sentences(wrong)) == 1:
            row = _row(f"{rid}-dataset", "halueval_qa", "dataset", "en", q, context, wrong, 0)
            if row:
                yield row


def _flagged(annotations: list[str]) -> list[str]:
    out = []
    for a in annotations:
        word, _, verdict = a.partition("<sep>")
        if verdict.startswith("不合理") and word.strip():
            out.append(word.strip())
    return out


def _reasonable(annotations: list[str]) -> list[str]:
    return [a.partition("<sep>")[0].strip() for a in annotations
            if a.partition("<sep>")[2].startswith("合理") and len(a.partition("<sep>")[0]) >= 2]


def _perturb_zh(sentence: str, context: str, keywords: list[str],
                rng: random.Random) -> tuple[str, str] | None:
    """(kind, sentence changed so the context no longer supports it) for one Chinese sentence."""
    options: list[tuple[str, str]] = []
    nums = [x for x in _ZH_NUMBER.findall(sentence) if x in context]
    others = [x for x in _ZH_NUMBER.findall(context) if x not in sentence]
    if nums and others:
        options.append(("slot", sentence.replace(rng.choice(nums), rng.choice(sorted(set(others))),
                                                 1)))
    own = [k for k in keywords if k in sentence]
    pool = [k for k in keywords if k not in sentence and len(k) == len(own[0])] if own else []
    if own and pool:
        options.append(("slot", sentence.replace(own[0], rng.choice(pool), 1)))
    turned = _turn(sentence, _ZH_COMPARE, False)
    if turned:
        options.append(("comparison", turned))
    for a, b in _ZH_NEGATE:
        i = sentence.find(a)
        if i > 0 and b not in sentence and sentence[i - 1] not in "不没未否但于还就只总":
            options.append(("negation", sentence[:i] + b + sentence[i + len(a):]))
            break
    options = [(k, s) for k, s in options if s != sentence]
    return rng.choice(options) if options else None


def _affirm_zh(sentence: str) -> str | None:
    """The sentence with its first negation taken out (a denial turned into an assertion)."""
    hits = [(sentence.find(a), a, b) for a, b in _ZH_DENIED if a in sentence]
    if not hits:
        return None
    i, a, b = min(hits, key=lambda h: (h[0], -len(h[1])))
    return sentence[:i] + b + sentence[i + len(a):]


def _para_edit(text: str, context: str, language: str, foreign: str,
               rng: random.Random) -> tuple[str, str] | None:
    """(kind, the rewrite changed so its context no longer supports it)."""
    if language == "zh":
        options = [("negation", _affirm_zh(text))]
        changed = _perturb_zh(text, context, [], rng)
        if changed:
            options.append(changed)
    else:
        options = [("slot", _swap_slot(text, context, foreign, rng)),
                   ("negation", _negate_en(text)), ("comparison", _turn(text, _EN_COMPARE, True)),
                   ("role", _role_swap(text, context))]
    options = [(k, t) for k, t in options if t and t != text]
    if language == "zh" and options and options[0][0] == "negation":
        # a rewrite holding a negation loses it (half the sources hold one): a supported claim
        # is then as often negative in form as an unsupported one
        return options[0]
    return rng.choice(options) if options else None


def paraphrased(path: Path, rng: random.Random, added: Path | None = None
                ) -> Iterator[dict[str, Any]]:
    """Per kept rewrite: it (supported), one edit of it, and (from `added`, paraphrase.py
    --embellish) the rewrite with a detail its context lacks."""
    items = [r for r in _jsonl(path) if r.get("paraphrase")]
    twins = {r["id"]: r["embellished"] for r in (_jsonl(added) if added else [])
             if r.get("embellished")}
    for k, r in enumerate(items):
        lang, context, text = r["language"], r["context"], r["paraphrase"]
        source = "uhgeval" if lang == "zh" else "halueval_summarization"
        q = PARA_QUESTION[lang]
        if len(split_sentences(text)) != 1:
            continue
        row = _row(f"para-{r['id']}-right", source, "para", lang, q, context, text, 1)
        if row:
            yield row
        edit = _para_edit(text, context, lang, items[(k + 1) % len(items)]["context"], rng)
        if edit:
            kind, changed = edit
            row = _row(f"para-{r['id']}-{kind}", source, f"para-{kind}", lang, q, context,
                       changed, 0)
            if row and len(split_sentences(changed)) == 1:
                yield row
        if r["id"] in twins:
            row = _row(f"para-{r['id']}-added", source, "para-added", lang, q, context,
                       twins[r["id"]], 0)
            if row and len(split_sentences(twins[r["id"]])) == 1:
                yield row


def uhgeval(n: int, rng: random.Random) -> Iterator[dict[str, Any]]:
    rows = list(_jsonl(TRAIN / "uhgeval_train.jsonl"))
    picked = rng.sample(rows, min(n, len(rows)))
    for r in picked:
        context = (r["newsBeginning"] + r["newsRemainder"]).strip()
        real, wrong = r["realContinuation"].strip(), r["hallucinatedContinuation"].strip()
        rid = f"uhg-{r['id']}"
        row = _row(f"{rid}-right", "uhgeval", "right", "zh", UHG_QUESTION, context, real, 1)
        if row:
            yield row
        flagged = _flagged(r.get("annotations") or [])
        labels = {i: 0 for i, s in enumerate(split_sentences(wrong))
                  if any(w in s for w in flagged)}
        row = _row(f"{rid}-annotated", "uhgeval", "annotated", "zh", UHG_QUESTION, context,
                   wrong, labels)
        if row:
            yield row
        sentences = split_sentences(real)
        order = list(range(len(sentences)))
        rng.shuffle(order)
        for i in order:
            changed = _perturb_zh(sentences[i], context, _reasonable(r.get("annotations") or []),
                                  rng)
            if changed:
                kind, text = changed
                answer = "".join(text if j == i else s for j, s in enumerate(sentences))
                per = {j: (0 if j == i else 1) for j in range(len(sentences))}
                row = _row(f"{rid}-{kind}", "uhgeval", kind, "zh", UHG_QUESTION, context,
                           answer, per)
                if row and len(split_sentences(answer)) == len(sentences):
                    yield row
                break


def halueval_summarization(n: int, rng: random.Random) -> Iterator[dict[str, Any]]:
    rows = list(_jsonl(TRAIN / "halueval_summarization_train.jsonl"))
    picked = rng.sample(rows, min(n, len(rows)))
    for r in picked:
        doc, right = r["document"], r["right_summary"].strip()
        rs = split_sentences(right)
        rid = f"summ{r['row']}"
        # the hallucinated summaries are rewritten, not edited: their sentences cannot be told
        # apart from supported ones, so only the right summary and its own edits are used
        # the right summary with one sentence negated or turned round
        order = list(range(len(rs)))
        rng.shuffle(order)
        for i in order:
            text = _turn(rs[i], _EN_COMPARE, True) or _negate_en(rs[i])
            if text and text != rs[i]:
                answer = " ".join(text if j == i else s for j, s in enumerate(rs))
                row = _row(f"{rid}-edit", "halueval_summarization",
                           "comparison" if _turn(rs[i], _EN_COMPARE, True) else "negation",
                           "en", SUMMARY_QUESTION, doc, answer,
                           {j: int(j != i) for j in range(len(rs))})
                if row and len(split_sentences(answer)) == len(rs):
                    yield row
                break


def interleaved(rows: list[dict[str, Any]], seed: int) -> list[dict[str, Any]]:
    """The rows with the sources interleaved (per turn two HaluEval QA rows' variants, one
    UHGEval item's, every other turn one summary's), so that a prefix of the file — what an
    extraction stopped early holds — is a sample of every source."""
    by_source: dict[str, list[list[dict[str, Any]]]] = {}
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["source"], r["id"].rsplit("-", 1)[0]), []).append(r)
    para: list[list[dict[str, Any]]] = []  # last, so the earlier rows keep their places
    for (source, _), members in groups.items():
        if members[0]["id"].startswith("para-"):
            para.append(members)
        else:
            by_source.setdefault(source, []).append(members)
    rng = random.Random(seed)
    for members in by_source.values():
        rng.shuffle(members)
    qa, uhg, summ = (by_source.get(k, []) for k in ("halueval_qa", "uhgeval",
                                                    "halueval_summarization"))
    out: list[dict[str, Any]] = []
    turn = 0
    while qa or uhg or summ:
        for _ in range(2):
            if qa:
                out += qa.pop()
        if uhg:
            out += uhg.pop()
        if turn % 2 == 0 and summ:
            out += summ.pop()
        turn += 1
    for members in para:
        out += members
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--qa", type=int, default=250, help="HaluEval QA rows to draw")
    ap.add_argument("--uhg", type=int, default=80, help="UHGEval items to draw")
    ap.add_argument("--summ", type=int, default=30, help="HaluEval summarization rows to draw")
    ap.add_argument("--paraphrases", type=Path,
                    help="scripts/verifier/paraphrase.py's output: add the `para` rows")
    ap.add_argument("--embellished", type=Path,
                    help="paraphrase.py --embellish's output: add the `para-added` rows")
    args = ap.parse_args(argv)
    if not TRAIN.is_dir():
        print(f"build_training: {TRAIN} not found (../shared/data/train beside the checkout)",
              file=sys.stderr)
        return 2
    rows = [*halueval_qa(args.qa, random.Random(args.seed)),
            *uhgeval(args.uhg, random.Random(args.seed + 1)),
            *halueval_summarization(args.summ, random.Random(args.seed + 2)),
            *(paraphrased(args.paraphrases, random.Random(args.seed + 3), args.embellished)
              if args.paraphrases else [])]
    rows = interleaved(rows, 0)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    labels = Counter((r["source"], r["kind"], v) for r in rows for v in r["claim_labels"]
                     if v is not None)
    print(json.dumps({"rows": len(rows), "claims": {f"{s}/{k}/{v}": c for (s, k, v), c
                                                    in sorted(labels.items())}}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
