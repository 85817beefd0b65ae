"""Builds the conversations dev set (research/conversations/dev.jsonl): conversations of our own
making, en and zh, each labelled by construction for one conversation metric.

- `retention`: the user states a fact (a diet, an allergy, a budget, a city) beside a question
  of the dev files (HaluEval QA in en, HalluQA in zh), answered with its right answer; then asks
  for something the fact bears on, and the second reply keeps the fact or breaks it
  (contradicts it, or asks again for it). Label: knowledge_retention = 1.0 (kept) or 0.5 (one
  of the two replies breaks it).
- `completeness`: a two-part question split into two turns (two dev questions asked one after
  the other); the second reply answers (label 1.0) or turns the request away (0.5).

Written before any tuning of the conversation templates; deterministic (the first rows of the
dev files). `python scripts/provenance/build_conversation_dev.py --out
research/conversations/dev.jsonl`
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from convert import dev_rows

FACTS = {
    "en": [
        ("I am vegetarian.", "Can you suggest a pasta dish for tonight?",
         "Try spaghetti with tomato, basil and roasted aubergine.",
         "Try spaghetti carbonara with plenty of crispy pancetta."),
        ("I am allergic to penicillin.", "What antibiotic could a doctor give me for strep "
         "throat?", "With a penicillin allergy, doctors often prescribe azithromycin or "
         "clindamycin instead.", "Amoxicillin is the usual choice; take it three times a day."),
        ("I live in Lyon.", "Where can I get my passport renewed?",
         "In Lyon you can renew it at the passport service of the town hall.",
         "Which city do you live in? I need to know that to tell you where to renew it."),
    ],
    "zh": [
        ("我吃素。", "今晚做什么菜好？", "可以做素食版的麻婆豆腐，用香菇丁代替肉末。",
         "推荐红烧肉，五花肉慢炖两个小时。"),
        ("我对青霉素过敏。", "喉咙发炎，医生可能开什么抗生素？",
         "对青霉素过敏的话，医生通常会开阿奇霉素等非青霉素类药物。",
         "一般会开阿莫西林，一天三次。"),
        ("我住在成都。", "去哪里办护照？", "在成都可以去市出入境接待中心办理护照。",
         "你住在哪个城市？我需要知道这个才能告诉你去哪里办。"),
    ],
}
TURN_AWAY = {"en": "I'm not sure about that one. Is there anything else I can help you with?",
             "zh": "这个我不太清楚。还有什么别的可以帮你的吗？"}
SEP = {"en": " ", "zh": ""}


def qa(lang: str) -> list[tuple[str, str, list[str]]]:
    """(question, right answer, contexts) of the dev files, in file order."""
    if lang == "en":
        return [(r["question"], r["right_answer"], [r["knowledge"]])
                for r in dev_rows("halueval")]
    rows = [r for r in dev_rows("halluqa") if r["Category"] == "Misleading-hard"
            and not r["Best Answer1"].startswith(("没有", "无法"))]
    return [(r["Question"], r["Best Answer1"], [r["Source"]]) for r in rows]


def retention(lang: str, pool: list[tuple[str, str, list[str]]]) -> list[dict]:
    rows = []
    for i, (fact, ask, keep, brk) in enumerate(FACTS[lang]):
        question, answer, contexts = pool[i]
        for kept, reply in ((True, keep), (False, brk)):
            rows.append({
                "id": f"{lang}-retention-{i + 1}-{'kept' if kept else 'broken'}",
                "set": "retention", "language": lang,
                "labels": {"knowledge_retention": 1.0 if kept else 0.5},
                "turns": [
                    {"role": "user", "content": f"{fact}{SEP[lang]}{question}"},
                    {"role": "assistant", "content": answer, "contexts": contexts},
                    {"role": "user", "content": ask},
                    {"role": "assistant", "content": reply},
                ]})
    return rows


def completeness(lang: str, pool: list[tuple[str, str, list[str]]]) -> list[dict]:
    rows = []
    for i in range(3):
        (q1, a1, c1), (q2, a2, c2) = pool[10 + 2 * i], pool[11 + 2 * i]
        for met, reply in ((True, a2), (False, TURN_AWAY[lang])):
            rows.append({
                "id": f"{lang}-completeness-{i + 1}-{'met' if met else 'unmet'}",
                "set": "completeness", "language": lang,
                "labels": {"conversation_completeness": 1.0 if met else 0.5},
                "turns": [
                    {"role": "user", "content": q1},
                    {"role": "assistant", "content": a1, "contexts": c1},
                    {"role": "user", "content": q2},
                    {"role": "assistant", "content": reply, "contexts": c2},
                ]})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("research/conversations/dev.jsonl"))
    args = parser.parse_args()
    rows = []
    for lang in ("en", "zh"):
        pool = qa(lang)
        rows += retention(lang, pool) + completeness(lang, pool)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                        encoding="utf-8")
    print(json.dumps({"rows": len(rows), "out": str(args.out)}))


if __name__ == "__main__":
    main()
