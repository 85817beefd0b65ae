"""Agreement of citation_recall / citation_precision with the citation dev set
(research/citations_dev.jsonl, scripts/provenance/citations_dev.py): per language, the share of
pairs where the answer citing the right passages scores above the same answer with a citation
moved (`swap`: to the other passage of the topic, `far`: to another row's passage) or, for
precision, with a needless second citation (`overcite`); ties count half and are counted apart.
Beside it, two baselines on the same pairs: length-only (the longer answer scores higher) and a
rule (a citation supports its sentence when the cited passages hold 60% of the sentence's
content words, text.overlap_words; every sentence a fact; ALCE's arithmetic as the metric's).
The fact question (`citations_fact`) is measured apart: each correct answer is judged once
more between two filler sentences (FILLERS, written before any variant was measured; one
changed after the first run: "Here is what I found:" joined the sentence after it), and the
JSON's `facts` gives per language how many of the answers' own sentences and of the fillers the
judge called a fact, and their mean P(fact). `--variant NAME` asks the fact question with the
template `NAME/<lang>/citations_fact.j2` of scripts/bench/frame_builtin/ instead of the packaged
one, with the answer cache off (its requests are all the variant's own; run.json still names
the packaged templates' sha256).
Prints JSON.

    flock /tmp/localeval-cpu.lock env PYTHONPATH=. .venv/bin/python \
        scripts/bench/bench_citations.py --profile small --out runs/citations-dev \
        [--variant bare|no_example|fact_first]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import localeval
from localeval import prompts
from localeval.metrics.citations import (
    FACT_STEP,
    Fact,
    Judged,
    citation_holds,
    cited_sentences,
    wanted_pairs,
)
from localeval.metrics.claims.record import Verdict
from localeval.text import overlap_words

DEV = Path(__file__).resolve().parents[2] / "research" / "citations_dev.jsonl"
TEXTS = Path(__file__).resolve().parent / "frame_builtin"
FILLERS = {
    "en": ["Great question!", "I hope this helps.", "Let me know if you need more details.",
           "Here is what I found.", "Thanks for asking.", "I am not completely sure about this.",
           "Is there anything else you would like to know?",
           "Feel free to ask a follow-up question.",
           "Based on the sources below, here is my answer.", "Happy to help!"],
    "zh": ["好问题！", "希望这对你有帮助。", "如需更多细节请告诉我。", "以下是我找到的信息。",
           "谢谢你的提问。", "我对此不太确定。", "你还想了解什么吗？", "欢迎继续提问。",
           "根据下面的资料，我的回答如下。", "很高兴为你解答！"],
}
"""Sentences that state nothing about the world."""
CONTRASTS = {"citation_recall": ("swap", "far"),
             "citation_precision": ("swap", "far", "overcite")}
RULE_SHARE = 0.6


def rule_scores(row: dict[str, Any]) -> dict[str, float | None]:
    """The rule baseline's two scores for one row."""
    contexts = row["contexts"]
    sentences = cited_sentences(row["answer"], len(contexts), row["question"], "en")
    verdicts = {}
    for i, passages in wanted_pairs(sentences):
        words = overlap_words(sentences[i].bare)
        held = set().union(*(overlap_words(contexts[n - 1]) for n in passages))
        share = len(words & held) / len(words) if words else 0.0
        verdicts[(i, passages)] = Verdict(int(share >= RULE_SHARE), "rule")
    judged = Judged(sentences, [Fact(1, None)] * len(sentences), verdicts, len(contexts))
    joints = [judged.joint(i) for i in range(len(sentences))]
    recall = sum(1 for v in joints if v is not None and v.verdict == 1) / len(sentences)
    rows = [c for i in range(len(sentences)) for c in citation_holds(judged, i)]
    precision = sum(c["holds"] for c in rows) / len(rows) if rows else None
    return {"citation_recall": recall, "citation_precision": precision}


def agreement(scores: dict[str, dict[str, dict[str, float | None]]],
              language: dict[str, str]) -> dict[str, Any]:
    """scores[pair][variant][metric] → per language and metric and contrast: pairs, agreement
    (ties half), ties, undefined."""
    out: dict[str, Any] = {}
    for metric, contrasts in CONTRASTS.items():
        for contrast in contrasts:
            tally: dict[str, list[float]] = defaultdict(list)
            undefined: dict[str, int] = defaultdict(int)
            for pair, variants in scores.items():
                a = variants["correct"].get(metric)
                b = variants[contrast].get(metric)
                if a is None or b is None:
                    undefined[language[pair]] += 1
                    continue
                tally[language[pair]].append(1.0 if a > b else 0.5 if a == b else 0.0)
            for lang, got in sorted(tally.items()):
                out.setdefault(lang, {}).setdefault(metric, {})[f"correct>{contrast}"] = {
                    "pairs": len(got), "agreement": round(sum(got) / len(got), 3),
                    "ties": sum(1 for g in got if g == 0.5),
                    **({"undefined": undefined[lang]} if undefined[lang] else {})}
    return out


def with_fillers(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each correct answer between two fillers of its language (variant `filler`)."""
    out = []
    for i, r in enumerate(r for r in rows if r["variant"] == "correct"):
        fill = FILLERS[r["language"]]
        out.append({**r, "id": f"{r['pair']}:filler", "variant": "filler",
                    "answer": f"{fill[i % 10]} {r['answer']} {fill[(i + 5) % 10]}"})
    return out


def fact_figures(rows: list[dict[str, Any]], records: list[Any]) -> dict[str, Any]:
    """Per language: the filler rows' own sentences and fillers called a fact, mean P(fact)."""
    fillers = {f for texts in FILLERS.values() for f in texts}
    got: dict[str, dict[str, list[tuple[int, float | None]]]] = defaultdict(
        lambda: {"own": [], "filler": []})
    for r, rec in zip(rows, records, strict=True):
        if r["variant"] != "filler":
            continue
        for s in rec.details.get("citation_recall", {}).get("sentences", []):
            kind = "filler" if s["sentence"].strip() in fillers else "own"
            got[r["language"]][kind].append((s["fact"], s.get("p_fact")))
    out: dict[str, Any] = {}
    for lang, kinds in sorted(got.items()):
        for kind, seen in kinds.items():
            ps = [p for _, p in seen if p is not None]
            out.setdefault(lang, {})[kind] = {
                "sentences": len(seen), "called_fact": sum(f for f, _ in seen),
                "mean_p_fact": round(sum(ps) / len(ps), 3) if ps else None}
    return out


def fact_template(variant: str | None) -> contextlib.AbstractContextManager[None]:
    """The variant's fact-question templates in place of the packaged ones."""
    if variant is None:
        return contextlib.nullcontext()
    texts = {prompts.template_name(lang, FACT_STEP): path.read_text(encoding="utf-8")
             for lang in ("en", "zh")
             if (path := TEXTS / variant / lang / f"{FACT_STEP}.j2").is_file()}
    if not texts:
        known = sorted({p.parent.parent.name for p in TEXTS.glob(f"*/*/{FACT_STEP}.j2")})
        raise SystemExit(f"{TEXTS / variant}: no {FACT_STEP}.j2 there; --variant takes one of "
                         f"{', '.join(known)}")
    return prompts.overridden(texts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEV)
    parser.add_argument("--profile", default="small")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--limit", type=int, default=None, help="source rows per language")
    parser.add_argument("--variant", default=None,
                        help="a folder of frame_builtin/ with <lang>/citations_fact.j2")
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.data.read_text(encoding="utf-8").splitlines()]
    if args.limit:
        keep = {lang: list(dict.fromkeys(r["pair"] for r in rows if r["language"] == lang))
                [:args.limit] for lang in ("en", "zh")}
        rows = [r for r in rows if r["pair"] in keep[r["language"]]]
    rows += with_fillers(rows)
    language = {r["pair"]: r["language"] for r in rows}
    data = [{k: r[k] for k in ("id", "question", "answer", "contexts")} for r in rows]
    start = time.perf_counter()
    with fact_template(args.variant):
        results = localeval.evaluate(data, metrics=["citations"], profile=args.profile,
                                     out=args.out, overwrite=True,
                                     **({"no_cache": True} if args.variant else {}))
    seconds = time.perf_counter() - start
    judge: dict[str, dict[str, dict[str, float | None]]] = defaultdict(dict)
    rule: dict[str, dict[str, dict[str, float | None]]] = defaultdict(dict)
    length: dict[str, dict[str, dict[str, float | None]]] = defaultdict(dict)
    errors = {}
    for r, rec in zip(rows, results.records, strict=True):
        if rec.errors:
            errors[r["id"]] = rec.errors
        judge[r["pair"]][r["variant"]] = dict(rec.scores)
        rule[r["pair"]][r["variant"]] = rule_scores(r)
        size = float(len(r["answer"]))
        length[r["pair"]][r["variant"]] = {m: size for m in CONTRASTS}
    print(json.dumps({"variant": args.variant or "default",
                      "samples": len(rows), "seconds": round(seconds, 1),
                      "seconds_per_sample": round(seconds / max(1, len(rows)), 2),
                      "judge": agreement(judge, language), "rule": agreement(rule, language),
                      "length_only": agreement(length, language),
                      "facts": fact_figures(rows, results.records), "errors": errors},
                     ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
