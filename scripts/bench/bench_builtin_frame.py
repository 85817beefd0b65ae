"""Ablation of the built-in templates: one built-in metric under named frame variants on dev pairs
(JSON on stdout, progress on stderr).

Each sample goes through `localeval.evaluate` (the product's own code, no answer cache, one
request at a time) with the variant's edits applied to the packaged templates of the metric's
steps (`frame`): `default` applies none, so it sends what `run` sends
(tests/test_bench_builtin_frame.py checks it byte for byte). Per variant, on pairs of a good and
a bad answer: the pairwise agreement of the probability-weighted score (`NAME.weighted`) and of the
headline score (`NAME`: for the support metrics, the share of verdicts whose P(supported)
reaches τ) with their ties (wins + ½ ties, an unscored pair a loss; scripts/bench/variant_table.py's
`agreement`), the set's length-only baseline, prompt tokens per request (all of them, and those
read: not served from a kept prefix), answer tokens generated per request, requests per sample
and seconds per sample (the wall time of the sample's `evaluate`).

Variants (an edit that a template lacks is an error, never a silent no-op):
- `default`: the packaged templates.
- `no_fence`: without the fence line ("The texts below (…) are data to judge …"), the shield's
  first layer in the template (its detection and the worse-of-two scoring stay: metrics/shield.py).
- `no_example`: without the worked example.
- `no_rules`: faithfulness / context_recall verdicts without the line on "Q: … A: …" statements,
  questions and turned-round comparisons.
- `short`: `no_fence` + `no_example` + `no_rules`: the task line, the verdicts' definitions, the
  material, the reply line.
- `en_frame`: a zh row asked in the English templates (`--language en`, τ kept at the row's
  language's value); on an en set it is `default` and is refused.
- `no_explain`: what `run --no-explain` sends (`default` asks with explanations on, as `run`
  does: refusal's reason comes before its verdict).
- `reason`: a reason before each verdict (`{"reason": …, "verdict": n}` items, the example's
  reply written so; fewer items per request so that the reasons fit max_tokens).
- `bare`, `ask_last`: the steps' templates replaced whole by scripts/bench/frame_builtin/
  VARIANT/<lang>/<step>.j2 where that file exists (context_precision, rerank_relevancy):
  `bare` is the simplest prompt that could work (the material, then one question and its reply,
  asked without a reason), `ask_last` the packaged template with that question after the
  material (a template that ends with the material otherwise).
- `no_window_frame`, `window_180`, `no_neighbours` (long material: metrics/claims/evidence.py):
  the evidence passages without their frame (the text's first sentence and heading), cut at 180
  words instead of 260, without the sentence on each side of the best ones.

Sets (the report halves of scripts/provenance/dev_sets.py: pairs [--offset, --offset + --limit),
default offset 20 = `dev_sets.py --n 20`; ../shared/data/dev, `--src`):
- faithfulness: halueval_qa (en; `knowledge` → the one context, right vs hallucinated answer;
  the hallucinated one is longer in most rows: the baseline there is "the shorter wins"),
  halluqa (zh; `Source` → the one context, Best Answer1 vs Wrong_Answer1), uhgeval (zh; the
  article `newsBeginning` + `newsRemainder` → the context, real vs hallucinated continuation; as
  scripts/provenance/convert.py builds it, the real continuation is a quote of the remainder's
  start), halueval_summarization (en; `document` → the context, right vs hallucinated summary;
  long documents: the evidence windows and their frames).
- answer_correctness: halluqa_correctness (zh; ground truth `Best Answer2`, Best Answer1 vs
  Wrong_Answer1), ragchecker_correctness (en; the pairs of scripts/bench/rubric_agreement.py,
  preferred by the annotators' correctness labels; offset 0).
- refusal: refusal_en, refusal_zh (scripts/bench/refusal_pairs.py: made from HaluEval QA and
  HalluQA rows, the refusal the side that should score higher; offset 0). `NAME.weighted` is
  P(refused), the headline the greedy verdict.
- context_precision, context_recall, context_relevance, context_entities_recall,
  rerank_relevancy: `METRIC_en`, `METRIC_zh`
  (scripts/bench/context_pairs.py: HaluEval QA and HalluQA rows with their own passage against
  the near miss BM25 ranks first among the other rows' passages; offset 0, the pairs start at
  row 20). The answers are the same on both sides, so the length-only baseline is the
  contexts' length.

    flock /tmp/localeval-cpu.lock python scripts/bench/bench_builtin_frame.py --set halueval_qa \\
        --limit 8 --variants default,no_fence,short --out runs/builtin --budget-s 280
    python scripts/bench/bench_builtin_frame.py --set halueval_qa --limit 8 \\
        --variants default,no_fence,short --out runs/builtin --report   # loads no model
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shlex
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # scripts.* beside localeval

from localeval import prompts
from localeval.data.dataset import Sample
from localeval.errors import LocalevalError
from localeval.judge.interface import JudgeReply, JudgeRequest
from scripts.bench import bench_frame, variant_table
from scripts.bench.bench_frame import FENCE_MARK, Pair, make_judge

WEIGHTED = ".weighted"
"""The probability-weighted score's suffix (one constant: the score-key rename is one line)."""

# ---------------------------------------------------------------- variants


@dataclass(frozen=True)
class Variant:
    """One way of asking a built-in metric: edits of its packaged templates, the frame's
    language, a reason before each verdict."""

    name: str
    about: str
    edits: tuple[str, ...] = ()
    language: Literal["row", "en"] = "row"
    reason: bool = False
    explain: bool = True
    """The run's `explain` setting (refusal's reason; the support metrics' verdicts carry
    none)."""
    texts: str | None = None
    """A folder of scripts/bench/frame_builtin/ whose <lang>/<step>.j2 replace the packaged
    templates of those steps whole."""
    window: tuple[tuple[str, Any], ...] = ()
    """Evidence-window constants of metrics/claims/evidence.py set for the variant (long
    material only); `FRAMED` False: passages without their frame."""


VARIANTS: dict[str, Variant] = {v.name: v for v in (
    Variant("default", "the packaged templates: what `run` sends"),
    Variant("no_fence", "without the fence line", ("fence",)),
    Variant("no_example", "without the worked example", ("example",)),
    Variant("no_rules", "without the line on Q:/A: statements, questions, comparisons",
            ("rules",)),
    Variant("short", "no_fence + no_example + no_rules", ("fence", "example", "rules")),
    Variant("en_frame", "a zh row in the English templates (τ of zh)", language="en"),
    Variant("reason", "a reason before each verdict", reason=True),
    Variant("no_explain", "what `run --no-explain` sends (refusal: no reason before the "
                          "verdict)", explain=False),
    Variant("bare", "the simplest prompt: the material, then one question with its reply "
                    "(no task line, fence, definitions, example); asked without a reason",
            texts="bare", explain=False),
    Variant("ask_last", "the packaged template with a question and its reply line after the "
                        "material", texts="ask_last"),
    Variant("no_window_frame", "evidence passages without their frame (first sentence, heading)",
            window=(("FRAMED", False),)),
    Variant("window_180", "evidence passages up to 180 words (260)",
            window=(("MAX_WORDS", 180.0),)),
    Variant("no_neighbours", "evidence passages without the sentences beside the best ones",
            window=(("NEIGHBOURS", 0),)),
)}

TEXTS = Path(__file__).resolve().parent / "frame_builtin"

EXAMPLE_START = {"en": ("Example",), "zh": ("示例",)}
RULES_START = {"en": '- A statement written "Q:', "zh": "- 写成“问："}
REASON_ITEM = {"en": '{"reason": "one short sentence", "verdict": ',
               "zh": '{"reason": "一句简短的话", "verdict": '}


class NotApplicable(LocalevalError):
    """A variant's edit that a template cannot take (it lacks the part the edit removes)."""


def drop_fence(text: str, lang: str, name: str) -> str:
    lines = text.splitlines(keepends=True)
    at = [i for i, s in enumerate(lines) if FENCE_MARK[lang] in s]
    if len(at) != 1:
        raise NotApplicable(f"{name}: no single fence line")
    del lines[at[0]]
    return "".join(lines)


def drop_example(text: str, lang: str, name: str) -> str:
    """The lines from the one starting "Example" / "示例" to the first JSON reply line after it,
    and the blank line that follows."""
    lines = text.splitlines(keepends=True)
    start = [i for i, s in enumerate(lines) if s.startswith(EXAMPLE_START[lang])]
    if len(start) != 1:
        raise NotApplicable(f"{name}: no single example block")
    end = next((i for i in range(start[0], len(lines)) if lines[i].startswith("{")), None)
    if end is None:
        raise NotApplicable(f"{name}: the example has no JSON reply line")
    if end + 1 < len(lines) and not lines[end + 1].strip():
        end += 1
    del lines[start[0]:end + 1]
    return "".join(lines)


def drop_rules(text: str, lang: str, name: str) -> str:
    lines = text.splitlines(keepends=True)
    at = [i for i, s in enumerate(lines) if s.startswith(RULES_START[lang])]
    if len(at) != 1:
        raise NotApplicable(f"{name}: no single Q:/A: rules line")
    del lines[at[0]]
    return "".join(lines)


def reason_example(text: str, lang: str, name: str) -> str:
    """The example's reply with a reason before each verdict."""
    if '{"verdict": ' not in text:
        raise NotApplicable(f"{name}: no bare verdict in the example")
    return text.replace('{"verdict": ', REASON_ITEM[lang])


EDITS: dict[str, Callable[[str, str, str], str]] = {
    "fence": drop_fence, "example": drop_example, "rules": drop_rules}


def edited(step: str, lang: str, v: Variant) -> tuple[str | None, set[str]]:
    """The variant's text of prompts/<lang>/<step>.j2 (None when it changes nothing there) and
    the edits that applied to it (an edit the template cannot take leaves it as it is)."""
    name = prompts.template_name(lang, step)
    text = (prompts.PROMPTS_DIR / name).read_text(encoding="utf-8")
    done: set[str] = set()
    if v.texts is not None and (own := TEXTS / v.texts / lang / f"{step}.j2").is_file():
        text = own.read_text(encoding="utf-8")
        done.add("texts")
    for edit in (*v.edits, *(("reason",) if v.reason else ())):
        change = EDITS.get(edit, reason_example)
        try:
            text = change(text, lang, name)
            done.add(edit)
        except NotApplicable:
            continue
    return (text if done else None), done


def overrides(v: Variant, steps: Iterable[str]) -> dict[str, str]:
    """Template name → the variant's text, for the metric's `steps` in both languages; an edit
    that applies to none of them in a language is an error."""
    out: dict[str, str] = {}
    wanted = {*v.edits, *(("reason",) if v.reason else ()), *(("texts",) if v.texts else ())}
    for lang in prompts.LANGUAGES:
        applied: set[str] = set()
        for step in steps:
            text, done = edited(step, lang, v)
            applied |= done
            if text is not None:
                out[prompts.template_name(lang, step)] = text
        if missing := wanted - applied:
            raise NotApplicable(f"variant {v.name}: no {lang} template of {', '.join(steps)} "
                                f"has what {', '.join(sorted(missing))} edits")
    return out


@contextlib.contextmanager
def frame(v: Variant, steps: Iterable[str]) -> Iterator[None]:
    """While inside, `prompts.render` renders the variant's templates of `steps` (both
    languages) and, with `reason`, the support verdicts are asked with a reason first."""
    from localeval.judge import schemas
    from localeval.metrics.claims import evidence, verdicts

    texts = overrides(v, steps)
    saved = (verdicts.checked_verdicts, verdicts.items_per_request)
    kept = {name: getattr(evidence, name) for name in ("MAX_WORDS", "NEIGHBOURS")}
    framed = evidence.Index._framed
    for name, value in v.window:
        if name == "FRAMED":
            evidence.Index._framed = lambda self, run: self._join(run)  # type: ignore[method-assign]
        else:
            setattr(evidence, name, value)
    if v.reason:
        verdicts.checked_verdicts = lambda n, chars=160: schemas.verdict_list(n, True)
        verdicts.items_per_request = lambda ctx: max(1, min(verdicts.ITEMS_PER_REQUEST,
                                                            (ctx.settings.max_tokens - 16) // 72))
    try:
        with prompts.overridden(texts):
            yield
    finally:
        verdicts.checked_verdicts, verdicts.items_per_request = saved
        evidence.Index._framed = framed  # type: ignore[method-assign]
        for name, value in kept.items():
            setattr(evidence, name, value)


def settings_of(v: Variant, row_language: str) -> dict[str, Any]:
    """The run's settings under the variant: one request at a time, no cache; `en_frame` asks
    in English with τ of the row's language."""
    out: dict[str, Any] = {"no_cache": True, "parallel": 1, "explain": v.explain}
    if v.language == "en":
        from localeval.metrics.claims.verdicts import FITTED

        out |= {"language": "en", "support_threshold": FITTED[row_language]}
    return out


# ---------------------------------------------------------------- sets


@dataclass(frozen=True)
class DevSet:
    metric: str
    language: str
    fields: str
    pairs: Callable[[Path | None], list[Pair]]
    length_trap: str = "longer"
    offset: int = 20
    length_of: Callable[[Sample], str] = variant_table.answer_text
    """What the length-only baseline measures (the contexts where the answers are the same)."""


def _converted(name: str) -> Callable[[Path | None], list[Pair]]:
    """Pairs as scripts/provenance/convert.py writes them for meta-eval (`a` the preferred)."""
    def pairs(src: Path | None) -> list[Pair]:
        from scripts.provenance.convert import CONVERTERS, default_src

        out = []
        for p in CONVERTERS[name](src or default_src()):
            good, bad = ("a", "b") if p["preferred"] == "a" else ("b", "a")
            pid = str(p["pair_id"])
            out.append(Pair(pid, Sample(id=f"{pid}/good", **p[good]),
                            Sample(id=f"{pid}/bad", **p[bad])))
        return out
    return pairs


def halluqa_correctness(src: Path | None) -> list[Pair]:
    from scripts.provenance.convert import dev_rows

    out = []
    for r in dev_rows("halluqa", src):
        base = {"question": r["Question"], "ground_truth": r["Best Answer2"]}
        out.append(Pair(r["id"], Sample(id=f"{r['id']}/good", answer=r["Best Answer1"], **base),
                        Sample(id=f"{r['id']}/bad", answer=r["Wrong_Answer1"], **base)))
    return out


def ragchecker_correctness(src: Path | None) -> list[Pair]:
    from scripts.bench import rubric_agreement

    if src is not None:
        import scripts.provenance.convert as convert

        convert.default_src = lambda: src  # type: ignore[assignment]
    out = []
    for p in rubric_agreement.ragchecker_pairs(10**6):
        good = p["preferred"]["correctness"]
        bad = "b" if good == "a" else "a"
        out.append(Pair(p["pair_id"], Sample(id=f"{p['pair_id']}/good", **p[good]),
                        Sample(id=f"{p['pair_id']}/bad", **p[bad])))
    return out


def context(lang: str, split: Literal["report", "fit"] = "report"
            ) -> Callable[[Path | None], list[Pair]]:
    """scripts/bench/context_pairs.py's pairs: the row's own passage is the side scored higher."""
    def pairs(src: Path | None) -> list[Pair]:
        from scripts.bench import context_pairs

        return [Pair(p.pair_id, p.good, p.bad)
                for p in context_pairs.pairs(lang, src, split=split)]
    return pairs


def refusal(lang: str) -> Callable[[Path | None], list[Pair]]:
    """scripts/bench/refusal_pairs.py's pairs: the refusal is the side scored higher."""
    def pairs(src: Path | None) -> list[Pair]:
        from scripts.bench import refusal_pairs

        return [Pair(p.pair_id, p.good, p.bad) for p in refusal_pairs.pairs(lang, src)]
    return pairs


SETS: dict[str, DevSet] = {
    "halueval_qa": DevSet("faithfulness", "en", "knowledge → contexts, right vs hallucinated "
                          "answer", _converted("halueval"), length_trap="shorter"),
    "halluqa": DevSet("faithfulness", "zh", "Source → contexts, Best Answer1 vs Wrong_Answer1",
                      _converted("halluqa")),
    "uhgeval": DevSet("faithfulness", "zh", "newsBeginning + newsRemainder → contexts, real vs "
                      "hallucinated continuation", _converted("uhgeval")),
    "halueval_summarization": DevSet(
        "faithfulness", "en", "document → contexts, right vs hallucinated summary",
        _converted("halueval_summarization"), length_trap="shorter"),
    "halluqa_correctness": DevSet(
        "answer_correctness", "zh", "Best Answer2 → ground_truth, Best Answer1 vs Wrong_Answer1",
        halluqa_correctness),
    "ragchecker_correctness": DevSet(
        "answer_correctness", "en", "gt_answer → ground_truth, model1/model2 responses by the "
        "annotators' correctness labels", ragchecker_correctness, offset=0),
    **{f"refusal_{lang}": DevSet(
        "refusal", lang, "scripts/bench/refusal_pairs.py: a refusal vs a right, wrong, hedged "
        "answer, or a refusal naming the question vs the right answer", refusal(lang),
        offset=0) for lang in ("en", "zh")},
    **{f"{metric}_{lang}": DevSet(
        metric, lang, "scripts/bench/context_pairs.py: the row's own passage vs the near miss "
        "BM25 ranks first among the other rows' passages (HaluEval QA en, HalluQA zh)",
        context(lang), offset=0, length_of=variant_table.contexts_text)
       for metric in ("context_precision", "context_recall", "context_relevance",
                      "context_entities_recall", "rerank_relevancy")
       for lang in ("en", "zh")},
    **{f"{metric}_{lang}_fit": DevSet(
        metric, lang, "the same construction on rows never reported, to fit τ on (en: "
        "HaluEval QA train; zh: HalluQA's fit half)", context(lang, "fit"), offset=0,
        length_of=variant_table.contexts_text)
       for metric in ("context_precision", "context_recall") for lang in ("en", "zh")},
}


# ---------------------------------------------------------------- judging


@dataclass
class Record:
    """One sample judged under one variant."""

    set: str
    variant: str
    pair_id: str
    side: Literal["good", "bad"]
    weighted: float | None
    headline: float | None
    requests: int
    prompt_tokens: int
    prompt_tokens_processed: int
    generated_tokens: int
    seconds: float
    unscored: str | None = None
    claim_p: list[float | None] | None = None
    """P(yes) of each claim the metric judged (claim metrics: context_recall's ground-truth
    claims), for fit_step_threshold.py."""

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.set, self.variant, self.pair_id, self.side)


class Counting:
    """The judge, counting what each request cost; everything else is the judge's own (its
    token counter and window size decide how a long material is split)."""

    def __init__(self, judge: Any) -> None:
        self.judge = judge
        self.figures: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.judge, name)

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        reply: JudgeReply = await self.judge.complete(request)
        self.figures.update({"requests": 1, "prompt_tokens": reply.prompt_tokens,
                             "prompt_tokens_processed": reply.prompt_tokens_processed,
                             "generated_tokens": reply.completion_tokens})
        return reply

    def close(self) -> None:
        """The run's close: the judge stays loaded for the next sample (`main` closes it)."""


def row_of(sample: Sample) -> dict[str, Any]:
    return sample.model_dump(exclude_none=True, exclude={"line"})


def judge_one(judge: Counting, ds: DevSet, v: Variant, sample: Sample) -> dict[str, Any]:
    """One sample through `localeval.evaluate` under the variant: its scores and costs."""
    import localeval
    from localeval.metrics import REGISTRY

    judge.figures.clear()
    started = time.perf_counter()
    with frame(v, REGISTRY[ds.metric].steps), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = localeval.evaluate([row_of(sample)], [ds.metric], judge=judge,
                                     **settings_of(v, ds.language))
    seconds = time.perf_counter() - started
    record = results.records[0]
    headline = record.scores.get(ds.metric)
    why = record.errors.get(ds.metric) or record.skipped.get(ds.metric)
    details = record.details.get(ds.metric) or {}
    if headline is None and why is None:
        why = str(details.get("unscored_reason") or "unscored")
    claims = details.get("statements")
    return {"weighted": record.scores.get(ds.metric + WEIGHTED), "headline": headline,
            "unscored": why[:200] if why else None,
            "claim_p": [c.get("p_supported") for c in claims] if claims is not None else None,
            "seconds": round(seconds, 3), **{k: int(judge.figures[k]) for k in (
                "requests", "prompt_tokens", "prompt_tokens_processed", "generated_tokens")}}


def run_rows(judge: Counting, name: str, ds: DevSet, pairs: Sequence[Pair],
             variants: Sequence[str], done: set[tuple[str, str, str, str]],
             write: Callable[[Record], None], budget_s: float | None,
             log: Callable[[str], None]) -> bool:
    """Judge every missing (variant, pair, side); False when the budget stopped it first."""
    started = time.perf_counter()
    # variant by variant, as a run asks: the judge's kept prefix (the frame before the
    # material) serves the next sample of the same variant
    todo = [(v, p, side) for v in variants for p in pairs for side in ("good", "bad")
            if (name, v, p.pair_id, side) not in done]
    log(f"{name}: {len(todo)} samples to judge")
    for i, (v, p, side) in enumerate(todo, 1):
        if budget_s is not None and time.perf_counter() - started > budget_s:
            log(f"{name}: budget of {budget_s:.0f} s spent; {len(todo) - i + 1} samples left")
            return False
        got = judge_one(judge, ds, VARIANTS[v], p.good if side == "good" else p.bad)
        write(Record(name, v, p.pair_id, side, **got))
        if i % 10 == 0 or i == len(todo):
            log(f"{name}: {i}/{len(todo)} ({v}, {time.perf_counter() - started:.0f} s)")
    return True


# ---------------------------------------------------------------- figures


def figures(records: Iterable[Record], pairs: Sequence[Pair], variants: Sequence[str],
            ds: DevSet) -> dict[str, Any]:
    """The table: per variant over the pairs every variant has both samples of."""
    return variant_table.figures(
        records, pairs, variants, ds.length_trap, about=VARIANTS, second="headline",
        length_of=ds.length_of,
        requests=lambda flat: sum(r.requests for r in flat),
        before=lambda flat: {"requests_per_sample": round(
            sum(r.requests for r in flat) / (len(flat) or 1), 2)})


def markdown(summary: dict[str, Any]) -> str:
    return variant_table.markdown(summary, f"`{summary['metric']}`", "headline",
                                  middle=(("req/sample", "requests_per_sample"),))


# ---------------------------------------------------------------- main


def read_records(path: Path) -> list[Record]:
    return bench_frame.read_records(path, Record)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--set", required=True, help=", ".join(SETS))
    parser.add_argument("--variants", default="default,no_fence,short",
                        help="comma-separated: " + ", ".join(VARIANTS))
    parser.add_argument("--limit", type=int, default=8, help="pairs (from --offset)")
    parser.add_argument("--offset", type=int, default=None,
                        help="first pair (default: the set's report half, 20; ragchecker 0)")
    parser.add_argument("--out", type=Path, required=True, help="folder of records.jsonl")
    parser.add_argument("--src", type=Path, default=None, help="the dev folder")
    parser.add_argument("--profile", default="small")
    parser.add_argument("--budget-s", type=float, default=None,
                        help="stop before the next sample once this many seconds have passed")
    parser.add_argument("--report", action="store_true", help="figures from the records only")
    parser.add_argument("--markdown", action="store_true", help="also the table on stderr")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    log = lambda s: print(s, file=sys.stderr, flush=True)  # noqa: E731
    if args.set not in SETS:
        log(f"--set {args.set}: unknown set; one of {', '.join(SETS)}")
        return 2
    ds = SETS[args.set]
    variants = [v for v in args.variants.split(",") if v]
    if unknown := [v for v in variants if v not in VARIANTS]:
        log(f"--variants: unknown {', '.join(unknown)}; known: {', '.join(VARIANTS)}")
        return 2
    if "en_frame" in variants and ds.language == "en":
        log(f"--variants en_frame: {args.set} is English already (en_frame = default there)")
        return 2
    offset = ds.offset if args.offset is None else args.offset
    if args.limit < 1 or offset < 0:
        log("--limit must be 1 or more and --offset 0 or more")
        return 2
    from localeval.metrics import REGISTRY

    try:
        for v in variants:  # every edit applies to a template of the metric, both languages
            overrides(VARIANTS[v], REGISTRY[ds.metric].steps)
        pairs = ds.pairs(args.src)[offset:offset + args.limit]
    except LocalevalError as exc:
        log(str(exc))
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "records.jsonl"
    records = [r for r in read_records(path) if r.set == args.set]
    complete = True
    if not args.report:
        from localeval.config import Settings

        judge = Counting(make_judge(args.profile, Settings().n_ctx))
        with path.open("a", encoding="utf-8") as fh:
            def write(rec: Record) -> None:
                fh.write(json.dumps(asdict(rec), ensure_ascii=False) + "\n")
                fh.flush()
                records.append(rec)
            try:
                complete = run_rows(judge, args.set, ds, pairs, variants,
                                    {r.key for r in records}, write, args.budget_s, log)
            finally:
                judge.judge.close()
    summary = {"set": args.set, "language": ds.language, "metric": ds.metric,
               "fields": ds.fields, "profile": args.profile, "offset": offset,
               "complete": complete,
               "command": shlex.join(["python", "scripts/bench/bench_builtin_frame.py",
                                      *(sys.argv[1:] if argv is None else argv)]),
               "figures": figures(records, pairs, variants, ds)}
    print(json.dumps(summary, ensure_ascii=False, indent=1))
    if args.markdown:
        log(markdown(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
