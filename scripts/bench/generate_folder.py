"""Build the small mixed folder issue 52's generate figures are measured on, from ../shared/data:
three HaluEval QA rows whose knowledge is two Wikipedia openings, the first naming the second's
subject (each opening its own Markdown page, titled by its subject: six English pages, three
bridges), and three UHGEval news items (Chinese, the headline as title, the article's opening as
text). `--set wide` writes the same six pages, two untitled English news articles of HaluEval
summarization (plain text, several chunks each) and four whole UHGEval articles (several chunks
each), for a test set of about twenty rows per language.

    python scripts/bench/generate_folder.py ../shared/data runs/gen-folder [--set wide]
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

HALUEVAL = {"halueval-qa-5008": ("This Woman Is Dangerous", "Joan Crawford"),
            "halueval-qa-5047": ("The Galapagos Affair", "Diane Kruger"),
            "halueval-qa-5100": ("Kenneth Marlar Taylor", "George Welch")}
"""Row id → the titles of its two openings."""
UHGEVAL = ("num_000606", "kno_000368", "doc_003340")
"""The news items (their `id`), in the order written."""
NEWS_CHARS = 300
"""A news item's opening paragraphs up to this many characters (one chunk at the default size)."""
WIDE_UHGEVAL = ("num_005223", "doc_001510", "num_005475", "doc_001074")
"""`--set wide`: the whole news items (their `id`, 630–870 characters each)."""
WIDE_SUMMARIES = ("halueval-summ-5031", "halueval-summ-5009")
"""`--set wide`: the HaluEval summarization documents (their `id`, about 360 words each)."""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", type=Path, help="../shared/data")
    ap.add_argument("out", type=Path, help="the folder to write")
    ap.add_argument("--set", choices=["small", "wide"], default="small",
                    help="small: 6 pages and 3 news openings; wide: 8 English, 4 Chinese documents")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    qa = {r["id"]: r for r in map(json.loads, (args.data / "dev" / "halueval_qa_dev.jsonl")
                                  .read_text("utf-8").splitlines())}
    for rid, titles in HALUEVAL.items():
        # the two openings are joined with no space: "...Dennis Morgan ....Joan Crawford (born"
        parts = re.split(r"(?<=[.!?\")])(?=[A-Z])", qa[rid]["knowledge"], maxsplit=1)
        for title, text in zip(titles, parts, strict=True):
            name = re.sub(r"\W+", "_", title).strip("_").lower()
            (args.out / f"{name}.md").write_text(f"# {title}\n\n{text.strip()}\n", "utf-8")
    news = {r["id"]: r for r in map(json.loads, (args.data / "dev" / "uhgeval_dev.jsonl")
                                    .read_text("utf-8").splitlines())}
    wide = args.set == "wide"
    for i, nid in enumerate(WIDE_UHGEVAL if wide else UHGEVAL, 1):
        item = news[nid]
        paragraphs = [p.strip() for p in (item["newsBeginning"] + item["newsRemainder"])
                      .split("\n") if p.strip()]
        body = paragraphs[0]
        for p in paragraphs[1:]:
            if not wide and len(body) + len(p) > NEWS_CHARS:
                break
            body += "\n\n" + p
        title = re.sub(r"^（[^）]*）", "", item["headLine"].strip())
        (args.out / f"新闻{i}.md").write_text(f"# {title}\n\n{body}\n", "utf-8")
    if wide:
        summaries = {r["id"]: r for r in map(json.loads, (args.data / "dev" /
                     "halueval_summarization_dev.jsonl").read_text("utf-8").splitlines())}
        for i, sid in enumerate(WIDE_SUMMARIES, 1):
            (args.out / f"news{i}.txt").write_text(summaries[sid]["document"].strip() + "\n",
                                                   "utf-8")


if __name__ == "__main__":
    main()
