"""Paraphrased claims for the verifier's training rows, written by the small judge itself.

The first head learned "copied from the context = supported" and "negated = unsupported": every
Chinese positive was a verbatim quote (UHGEval's real continuation is the start of its
remainder) and every negation was an edit that made a claim false. This script gives
build_training.py claims that are supported but not copied: a sentence of a training document
(UHGEval news in zh, HaluEval summarization documents in en), rewritten in other words by the
`small` judge (greedy, so the same on a rerun), kept only when every number of the sentence
survives, the rewrite is not a near-copy and keeps about its length. build_training.py then
makes each kept rewrite a positive and its slot / negation / comparison / role edit a negative,
so both sides of a pair are paraphrases. Sentences that hold a negation are drawn first, so a
supported claim is as often negative in form as an unsupported one.

    python scripts/verifier/paraphrase.py --out runs/verifier/paraphrases.jsonl [--zh 160]
        [--en 100] [--seed 0]
    python scripts/verifier/paraphrase.py --embellish runs/verifier/paraphrases.jsonl \
        --out runs/verifier/embellished.jsonl
The second form gives each kept rewrite a twin with one specific detail added that its context
lacks (a number, date, name or place): the hallucination the judge lets through most often.
Resumable: sentences already in --out are not rewritten again. Prints JSON counts.
"""

from __future__ import annotations

import argparse
import difflib
import json
import random
import re
import sys
import time
from pathlib import Path
from typing import Any

from localeval.text import CJK_RANGES, split_sentences

TRAIN = Path(__file__).resolve().parents[3] / "shared" / "data" / "train"
WINDOW = 2  # sentences either side of the source sentence kept as its context
NEGATION = {"zh": re.compile(r"不|没有|未|无|非"), "en": re.compile(r"\b(?:not|never|no)\b|n't")}
NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
ASK = {
    "zh": "用不同的词语和句式改写下面这句话。意思必须完全相同，保留所有数字、人名、地名和机构名，"
          "不增加也不删减任何信息。只输出改写后的一句话。\n\n原句：{s}",
    "en": "Rewrite the sentence below in different words and a different sentence structure. "
          "Keep the exact meaning and every number, name and place; add nothing and drop "
          "nothing. Output only the rewritten sentence.\n\nSentence: {s}",
}
EMBELLISH = {
    "zh": "在下面这句话里加入一个原句没有的具体细节（例如一个数字、日期、人名或地名），"
          "其余内容保持不变。"
          "只输出改写后的一句话。\n\n原句：{s}",
    "en": "Add to the sentence below one specific detail it does not have (a number, a date, a "
          "name or a place), keeping everything else. Output only the new sentence.\n\n"
          "Sentence: {s}",
}
_CJK_PAIR = re.compile(f"[{CJK_RANGES}]{{2}}")


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def _fits(sentence: str, language: str) -> bool:
    size = _size(sentence, language)
    low, high = (15, 70) if language == "zh" else (8, 35)
    return low <= size <= high and not sentence.startswith(("（", "(", "“", '"'))


def candidates(language: str, n: int, seed: int) -> list[dict[str, Any]]:
    """Source sentences with their context windows: half holding a negation where there are."""
    if language == "zh":
        docs = [(f"uhg-{r['id']}", (r["newsBeginning"] + r["newsRemainder"]).strip())
                for r in _jsonl(TRAIN / "uhgeval_train.jsonl")]
    else:
        docs = [(f"summ{r['row']}", r["document"])
                for r in _jsonl(TRAIN / "halueval_summarization_train.jsonl")]
    rng = random.Random(seed)
    rng.shuffle(docs)
    negated, plain = [], []
    for doc_id, text in docs:
        sentences = [s.strip() for s in split_sentences(text)]
        usable = [i for i, s in enumerate(sentences) if _fits(s, language)]
        if not usable:
            continue
        neg = [i for i in usable if NEGATION[language].search(sentences[i])]
        i = rng.choice(neg or usable)
        item = {"id": f"{doc_id}-s{i}", "language": language, "sentence": sentences[i],
                "context": ("" if language == "zh" else " ").join(
                    sentences[max(0, i - WINDOW): i + WINDOW + 1])}
        (negated if neg else plain).append(item)
        if len(negated) >= n // 2 and len(plain) >= n - n // 2:
            break
    return negated[: n // 2] + plain[: n - n // 2]


def _size(text: str, language: str) -> int:
    """Characters of Chinese, words of English."""
    return len(text) if language == "zh" else len(text.split())


def acceptable(sentence: str, rewrite: str, language: str) -> bool:
    """A rewrite that keeps every number, is not a near-copy and keeps about the length."""
    if not rewrite or rewrite == sentence or "\n" in rewrite:
        return False
    if sorted(NUMBER.findall(sentence)) != sorted(NUMBER.findall(rewrite)):
        return False
    if not 0.6 <= _size(rewrite, language) / max(1, _size(sentence, language)) <= 1.5:
        return False
    return difflib.SequenceMatcher(None, sentence, rewrite).ratio() < 0.85


def embellished(base: str, context: str, rewrite: str, language: str) -> bool:
    """A twin of `base` that keeps its numbers and adds a detail its context lacks."""
    if not rewrite or rewrite == base or "\n" in rewrite or len(split_sentences(rewrite)) != 1:
        return False
    if any(n not in rewrite for n in NUMBER.findall(base)):
        return False
    if not 1.1 <= _size(rewrite, language) / max(1, _size(base, language)) <= 2.2:
        return False
    known = context + base
    if any(n not in known for n in NUMBER.findall(rewrite)):
        return True
    if language == "en":
        seen = set(re.findall(r"[a-z]+", known.lower()))
        new = {w for w in re.findall(r"[A-Za-z]{4,}", rewrite) if w.lower() not in seen}
        return len(new) >= 2 or any(w[0].isupper() for w in new)  # two new words, or a name
    pairs = set(_CJK_PAIR.findall(rewrite))  # non-overlapping pairs of Chinese characters
    return len([g for g in pairs if g not in known]) >= 3


def _clean(text: str) -> str:
    text = text.strip().strip('"“”').strip()
    for lead in ("改写：", "改写后：", "Rewritten sentence:", "Rewrite:", "Sentence:"):
        if text.startswith(lead):
            text = text[len(lead):].strip()
    return text


def refilter(path: Path, twins: bool) -> int:
    rows = _jsonl(path)
    for r in rows:
        if twins:
            good = embellished(r["sentence"], r["context"], r["rewrite"], r["language"])
            r["embellished"] = r["rewrite"] if good else None
        else:
            good = acceptable(r["sentence"], r["rewrite"], r["language"])
            r["paraphrase"] = r["rewrite"] if good else None
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    key = "embellished" if twins else "paraphrase"
    print(json.dumps({"rows": len(rows), "kept": sum(bool(r[key]) for r in rows)}))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--zh", type=int, default=160)
    ap.add_argument("--en", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--limit", type=int, default=0, help="rewrite at most this many, then stop")
    ap.add_argument("--refilter", action="store_true",
                    help="apply today's filters to the rewrites --out holds (no judge)")
    ap.add_argument("--embellish", type=Path,
                    help="a paraphrase file: give each kept rewrite a twin with a detail added")
    args = ap.parse_args()
    if not TRAIN.is_dir():
        print(f"paraphrase: {TRAIN} not found (../shared/data/train beside the checkout)",
              file=sys.stderr)
        return 2
    if args.refilter:
        return refilter(args.out, bool(args.embellish))
    from llama_cpp import Llama

    from localeval import models

    manifest = models.load_manifest()
    path = models.require(manifest.get(manifest.profile("small")["judge"]))
    done = {r["id"] for r in _jsonl(args.out)} if args.out.exists() else set()
    if args.embellish:
        todo = [{**r, "sentence": r["paraphrase"]} for r in _jsonl(args.embellish)
                if r.get("paraphrase") and r["id"] not in done]
    else:
        todo = [c for c in candidates("zh", args.zh, args.seed)
                + candidates("en", args.en, args.seed) if c["id"] not in done]
    ask = EMBELLISH if args.embellish else ASK
    if args.limit:
        todo = todo[: args.limit]
    llm = Llama(model_path=str(path), n_ctx=1024, n_threads=args.threads, seed=0, verbose=False)
    started, kept = time.time(), 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("a", encoding="utf-8") as f:
        for c in todo:
            reply = llm.create_chat_completion(
                messages=[{"role": "user", "content": ask[c["language"]].format(s=c["sentence"])}],
                temperature=0.0, top_k=1, max_tokens=160, seed=0)
            rewrite = _clean(reply["choices"][0]["message"]["content"] or "")
            c["rewrite"] = rewrite
            if args.embellish:
                good = embellished(c["sentence"], c["context"], rewrite, c["language"])
                c["embellished"] = rewrite if good else None
            else:
                good = acceptable(c["sentence"], rewrite, c["language"])
                c["paraphrase"] = rewrite if good else None
            kept += good
            f.write(json.dumps(c, ensure_ascii=False) + "\n")
            f.flush()
    print(json.dumps({"rewritten": len(todo), "kept": kept,
                      "seconds": round(time.time() - started, 1)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
