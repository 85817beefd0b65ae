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

`--split train` writes the retention conversations to learn on (research/conversations/
train.jsonl): other facts (TRAIN_FACTS, six per language, none of the dev set's), each opening
on a row of the train files (HaluEval QA train in en; in zh, UHGEval train, the user asking a
news item's headline from its opening), never reported on.
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
TRAIN_FACTS = {
    "en": [
        ("I don't drink alcohol.", "What should I bring to a dinner party?",
         "A bottle of sparkling elderflower pressé or a good dessert would be welcome.",
         "A nice bottle of red wine, such as a Rioja."),
        ("My budget is 300 euros.", "Which camera should I buy for travelling?",
         "The Sony ZV-1F costs about 280 euros and is light enough for travel.",
         "The Fujifilm X-T5 at about 1,700 euros is the best travel camera."),
        ("I am gluten intolerant.", "What bread can I have with my soup?",
         "Rice crackers or a certified gluten-free sourdough loaf.",
         "A crusty wheat baguette goes well with soup."),
        ("My name is Priya.", "Write a one-line sign-off for my email.",
         "Best regards, Priya",
         "What name should I sign it with?"),
        ("I can't travel before the 15th of May.", "When should I book my flight to Rome?",
         "Book it for the 16th or 17th of May.",
         "Fly on the 10th of May, when fares are lowest."),
        ("I use a wheelchair.", "Which way up to the castle do you recommend?",
         "Take the funicular: it has step-free access to the top.",
         "Take the 300 stone steps from the old town; it is the quickest way."),
    ],
    "zh": [
        ("我不喝酒。", "去朋友家吃饭带什么好？", "带一盒水果或者一瓶果汁就很好。",
         "带一瓶好的红酒，比如波尔多。"),
        ("我的预算是两千元。", "买什么手机好？", "可以看看一千八百元左右的红米Note系列。",
         "推荐iPhone 15 Pro，大约八千元。"),
        ("我对花生过敏。", "下午茶配什么点心？", "可以配绿豆糕或者蛋挞。",
         "花生酥就很不错，香脆可口。"),
        ("我叫李明。", "帮我写一句邮件结尾的署名。", "此致敬礼，李明",
         "请问你叫什么名字？我好帮你写署名。"),
        ("我五月十五号之前走不开。", "什么时候订去北京的机票？", "可以订五月十六号或十七号的。",
         "五月十号的票最便宜，就订那天吧。"),
        ("我坐轮椅。", "去山顶怎么走比较好？", "可以坐缆车，缆车站有无障碍通道。",
         "走后山的三百级台阶最快。"),
    ],
}
"""The train split's facts (`--split train`): none of FACTS."""
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


def train_qa(lang: str, src: Path) -> list[tuple[str, str, list[str]]]:
    """(question, answer, contexts) of the train files: HaluEval QA train's questions and right
    answers in en; in zh, UHGEval train's news openings, asked for their headline."""
    rows = [json.loads(line) for line in (src / TRAIN_FILES[lang]).read_text(
        encoding="utf-8").splitlines() if line.strip()]
    if lang == "en":
        return [(r["question"], r["right_answer"], [r["knowledge"]]) for r in rows]
    return [("这条新闻的标题是什么？", r["headLine"].split("\n")[0].strip(),
             [r["newsBeginning"].strip()]) for r in rows]


TRAIN_FILES = {"en": "halueval_qa_train.jsonl", "zh": "uhgeval_train.jsonl"}


def retention(lang: str, pool: list[tuple[str, str, list[str]]],
              facts: dict[str, list[tuple[str, str, str, str]]] = FACTS) -> list[dict]:
    rows = []
    for i, (fact, ask, keep, brk) in enumerate(facts[lang]):
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
    parser.add_argument("--out", type=Path, default=None,
                        help="default research/conversations/<split>.jsonl")
    parser.add_argument("--split", choices=("dev", "train"), default="dev")
    parser.add_argument("--train-src", type=Path,
                        default=Path(__file__).resolve().parents[2].parent / "shared/data/train")
    args = parser.parse_args()
    args.out = args.out or Path(f"research/conversations/{args.split}.jsonl")
    rows = []
    for lang in ("en", "zh"):
        if args.split == "train":
            rows += retention(lang, train_qa(lang, args.train_src), TRAIN_FACTS)
            continue
        pool = qa(lang)
        rows += retention(lang, pool) + completeness(lang, pool)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                        encoding="utf-8")
    print(json.dumps({"rows": len(rows), "out": str(args.out)}))


if __name__ == "__main__":
    main()
