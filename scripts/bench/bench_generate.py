"""Measure a generated test set (issue 30): for each kind, the share of kept questions whose
reference chunk a plain BM25 over the whole corpus ranks in the top 3 from the question alone,
and the share of reference answers whose content words all stand in their reference chunks
(and the mean share of such words; `..._with_titles`: in the chunks and their documents' titles,
which the judge is shown beside a chunk and names a subject by); prints JSON, the report's
drops per filter as a table and its seconds per kept question, and with --rows N, N kept rows
per language (the kinds in turn).

    python scripts/bench/bench_generate.py runs/gen/testset.jsonl [--rows 20]
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from localeval.generate.filters import content_share
from localeval.generate.store import paths_for
from localeval.generate.subjects import document_names, document_titles
from localeval.text import CJK_RUN, normalize

_LATIN = re.compile(r"[a-z0-9]+")


def tokens(text: str) -> list[str]:
    """Latin words (lower case) and Chinese character bigrams (a lone character as itself)."""
    norm = normalize(text)
    out = _LATIN.findall(norm)
    for run in CJK_RUN.findall(norm):
        out += [run] if len(run) == 1 else [run[i:i + 2] for i in range(len(run) - 1)]
    return out


class BM25:
    """Okapi BM25 (k1 = 1.5, b = 0.75) over the corpus texts."""

    def __init__(self, docs: list[str], k1: float = 1.5, b: float = 0.75) -> None:
        self.tf = [Counter(tokens(d)) for d in docs]
        self.len = [sum(t.values()) for t in self.tf]
        self.avg = sum(self.len) / len(self.len)
        df = Counter(t for tf in self.tf for t in tf)
        n = len(docs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
        self.k1, self.b = k1, b

    def rank(self, query: str) -> list[int]:
        q = tokens(query)
        scores = []
        for i, tf in enumerate(self.tf):
            s = 0.0
            norm = self.k1 * (1 - self.b + self.b * self.len[i] / self.avg)
            for t in q:
                f = tf.get(t, 0)
                if f:
                    s += self.idf[t] * f * (self.k1 + 1) / (f + norm)
            scores.append(s)
        return sorted(range(len(scores)), key=lambda i: (-scores[i], i))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("testset", type=Path)
    ap.add_argument("--rows", type=int, default=0, help="print this many kept rows per language")
    args = ap.parse_args()
    rows = [json.loads(x) for x in args.testset.read_text("utf-8").splitlines()]
    corpus = [json.loads(x) for x in paths_for(args.testset)["corpus"].read_text(
        "utf-8").splitlines()]
    ids = [c["id"] for c in corpus]
    bm25 = BM25([c["text"] for c in corpus])
    texts: dict[str, list[str]] = {}
    for c in corpus:
        texts.setdefault(c["source"], []).append(c["text"])
    docs = {src: "\n\n".join(parts) for src, parts in texts.items()}
    titles = document_titles(docs, document_names(docs))
    title_of = {c["id"]: titles.get(c["source"], "") for c in corpus}
    out: dict[str, dict[str, float | int]] = {}
    for kind in ("single", "colloquial", "pair", "unanswerable"):
        mine = [r for r in rows if r["kind"] == kind]
        if not mine:
            continue
        entry: dict[str, float | int] = {"kept": len(mine)}
        if kind != "unanswerable":
            top3 = [set(ids[i] for i in bm25.rank(r["question"])[:3]) for r in mine]
            entry["bm25_top3"] = round(sum(bool(set(r["expected_ids"]) & t)
                                           for r, t in zip(mine, top3, strict=True))
                                       / len(mine), 3)
            if kind == "pair":
                entry["bm25_top3_both"] = round(sum(set(r["expected_ids"]) <= t for r, t in
                                                    zip(mine, top3, strict=True)) / len(mine), 3)
            shares = [content_share(r["ground_truth"], r["reference_contexts"]) for r in mine]
            entry["answers_all_content_words_in_chunks"] = round(
                sum(s >= 1.0 for s in shares) / len(shares), 3)
            entry["answers_mean_content_word_share"] = round(sum(shares) / len(shares), 3)
            titled = [content_share(r["ground_truth"], r["reference_contexts"] + [
                title_of[i] for i in r["expected_ids"]]) for r in mine]
            entry["answers_all_content_words_in_chunks_with_titles"] = round(
                sum(s >= 1.0 for s in titled) / len(titled), 3)
        out[kind] = entry
    print(json.dumps(out, indent=2))
    report_path = paths_for(args.testset)["report"]
    if report_path.is_file():
        report = json.loads(report_path.read_text("utf-8"))
        from localeval.generate.filters import FILTERS

        head = ["kind", "candidates", *FILTERS, "kept", "retyped"]
        print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
        for kind, counts in report["by_kind"].items():
            print("| " + " | ".join(str(counts.get(h, 0)) if h != "kind" else kind
                                    for h in head) + " |")
        print(f"seconds: {report.get('seconds')}, per kept question: "
              f"{report.get('seconds_per_kept_question')}, judge calls: "
              f"{report['judge']['calls']} (cached {report['judge']['cached']})")
    if args.rows:
        for lang in ("en", "zh"):
            by_kind = {k: [r for r in rows if r["language"] == lang and r["kind"] == k]
                       for k in ("single", "pair", "unanswerable", "colloquial")}
            picked = [r for i in range(args.rows) for k in by_kind
                      for r in by_kind[k][i:i + 1]][:args.rows]
            for r in picked:
                print(f"{r['kind']} — {r['question']} — {r['ground_truth']}")


if __name__ == "__main__":
    main()
