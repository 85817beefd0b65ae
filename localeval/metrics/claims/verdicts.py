"""One support verdict per claim: ask the judge, let τ decide, let the checks overrule.

`support_verdicts` judges numbered items (claims, sentences) against the material: each item is
shown the passages of a long material that bear on it (claims/evidence.py), items go to the
judge in groups that bound the answer's length, a group whose prompt does not fit is judged
against the piece of the material most likely to hold its evidence (claims/evidence.py), and a
request that fails is asked again in halves (claims/verdicts.py). The judge answers a bare digit
per item (grammar-constrained); its probability P(verdict = 1) (`p_yes`) against τ
(`threshold`) decides, and the checks of claims/checks.py may overrule a verdict of support.
The work grows linearly with the material.

τ, the P(supported) a claim needs: the greedy verdict digit of a small judge leans to
"supported" (on hold-out Chinese pairs whose context says there is no such thing it said 1 where
its own P(1) was low). So every support verdict (faithfulness, context_recall,
answer_correctness, context_relevance, context_precision) is decided by P(verdict = 1),
renormalised over the two verdicts, against τ. τ was fitted with
`scripts/provenance/fit_threshold.py` on the fit half of the dev sets (research/notes.md,
*Support verdicts measured: τ, claims, passages*); `--support-threshold` overrides it. A judge
that gives no probabilities (the fake judge) keeps its written verdict.

A judge request that failed or looped, asked once more in two halves.

A small judge sometimes runs to max_tokens, writes an answer its schema rejects, or loops (the
same n-gram over and over). Such a request over several items is asked again split in two, once;
the retries are counted and reported (`judge_retries`), never hidden.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeVar

from localeval.errors import JudgeError, PromptTooLong
from localeval.judge.interface import judge_p_yes
from localeval.judge.schemas import checked_verdicts, fact_verdicts
from localeval.metrics.base import MetricContext
from localeval.metrics.claims.checks import decide
from localeval.metrics.claims.evidence import Index, Piece, is_long, narrow, route, split_material
from localeval.metrics.claims.record import NOT_JUDGED, JudgeAnswer, Verdict
from localeval.text import Sentences, has_cjk, json_safe, sentences_of_all

if TYPE_CHECKING:
    from localeval.config import Settings
    from localeval.judge.interface import FieldProbs
    from localeval.metrics.base import Metric



T = TypeVar("T")
R = TypeVar("R")


def degenerate(texts: Sequence[str], *, same_texts: bool = True) -> bool:
    """The same word 4-gram (CJK: 8 characters) three times in one text, or (`same_texts`) one
    text three times: the signature of a small model looping."""
    if same_texts and any(n >= 3 for n in Counter(t.strip() for t in texts
                                                   if t.strip()).values()):
        return True
    for text in texts:
        units: list[str] = list(text) if has_cjk(text) else text.casefold().split()
        n = 8 if has_cjk(text) else 4
        grams = Counter(tuple(units[i:i + n]) for i in range(len(units) - n + 1))
        if grams and max(grams.values()) >= 3:
            return True
    return False


async def retry_split(items: list[T], ask: Callable[[list[T]], Awaitable[list[R]]],
                      bad: Callable[[list[R]], bool] | None = None) -> tuple[list[R], int]:
    """`ask(items)`; if it fails (not for length of prompt) or its answer is `bad`, ask once
    more in two halves. Returns the answers and the number of retried requests (0 or 1)."""
    try:
        answer = await ask(items)
        if bad is None or not bad(answer) or len(items) < 2:
            return answer, 0
    except PromptTooLong:
        raise
    except JudgeError:
        if len(items) < 2:
            raise
    half = len(items) // 2
    return [*(await ask(items[:half])), *(await ask(items[half:]))], 1


ITEMS_PER_REQUEST = 16
"""Numbered items per verdict request: bounds the answer's length (max_tokens)."""
ITEM_TOKENS = 16
"""Upper bound on the tokens of one bare verdict item of the answer."""
SCHEMA_CHARS = {"en": 160, "zh": 80}
"""A number in the verdict schema's name (the evidence-copy length of a retired verdict style):
the name is part of the cache key, so it stays."""


FITTED = {"en": 0.6, "zh": 0.45}
"""τ per language, fitted on the dev sets' fit half (rows not reported)."""
FITTED_STEP = {"context_precision_useful": {"en": 0.25, "zh": 0.15}}
"""τ of a step whose P(yes) answers another question than "is this claim supported": P(useful)
of a context (context_precision), fitted with scripts/provenance/fit_step_threshold.py on
rows never reported (research/frame-bench.md, *context_precision's own τ*); at the support τ
the judge called a third of the passages that hold the answer useful."""
FITTED_FOR = ("qwen2.5-coder-1.5b-instruct-q4_k_m",
              "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046")
"""The judge (manifest name, sha256) FITTED was fitted for."""
DECIDED_BY_TAU = frozenset({"faithfulness", "context_recall", "answer_correctness",
                            "context_relevance", "context_precision", "citation_recall",
                            "citation_precision"})
"""The metrics whose verdicts τ decides."""


def calibration_status(settings: Settings, metric_names: list[str],
                       models: dict[str, Any]) -> dict[str, Any] | None:
    """summary.json's `calibration`: whether τ was fitted for the run's judge (the shipped
    judge, a learned head's own τ, or τ set for this run by --support-threshold or
    --calibration); with the sentence to show when it was not. None when no verdict of the run
    is decided by τ (or the judge is the fake one)."""
    judge = models.get("judge") if isinstance(models.get("judge"), dict) else None
    if judge is None or judge.get("sha256") == "fake" or not DECIDED_BY_TAU & set(metric_names):
        return None
    if settings.support_threshold is not None:
        return {"calibrated": True, "how": "τ set for this run (--support-threshold or "
                                           "--calibration)", "tau": settings.support_threshold}
    if (models.get("verifier") or {}).get("tau"):
        return {"calibrated": True, "how": "the learned verifier head's own τ"}
    if judge.get("sha256") == FITTED_FOR[1]:
        return {"calibrated": True, "how": f"τ fitted for {FITTED_FOR[0]} on the dev sets"}
    name = judge.get("name") or "this judge"
    return {"calibrated": False, "fitted_for": FITTED_FOR[0],
            "note": f"τ was fitted for {FITTED_FOR[0]}; label 50 samples with `localeval label` "
                    f"to calibrate {name} (then `localeval calibrate RUN_DIR --out calib.json` "
                    "and `localeval run --calibration calib.json`)"}


def threshold(ctx: MetricContext, step: str | None = None) -> float:
    """τ for this sample: the setting, else the learned verifier's own τ when its head scores
    the verdicts of `step`, else the value fitted for the judge's raw probability (the step's
    own, FITTED_STEP, where it has one)."""
    chosen = ctx.settings.support_threshold
    if chosen is not None:
        return chosen
    verifier = getattr(ctx.judge, "verifier", None)
    head = getattr(verifier, "head", None)
    if head is not None and step in head.steps:
        return head.tau.get(ctx.language, head.tau.get("en", 0.5))
    fitted = FITTED_STEP.get(step or "", FITTED)
    return fitted.get(ctx.language, fitted["en"])


def effective_thresholds(settings: Settings, head_tau: dict[str, float] | None = None
                         ) -> dict[str, float]:
    """τ per language as a run applies it (summary.json): the setting, else the learned
    verifier's (`head_tau`), else the fitted values."""
    chosen = settings.support_threshold
    base = head_tau or FITTED
    return {lang: chosen if chosen is not None else tau for lang, tau in base.items()}


def step_thresholds(settings: Settings, metrics: Iterable[Metric]) -> dict[str, dict[str, float]]:
    """The steps of the run's metrics that have their own fitted τ (FITTED_STEP), as the run
    applies them (summary.json's `step_thresholds`, the run's fingerprint): empty when the
    setting decides every step or no metric asks such a step."""
    if settings.support_threshold is not None:
        return {}
    steps = {step for m in metrics for step in m.steps}
    return {step: dict(FITTED_STEP[step]) for step in sorted(steps & FITTED_STEP.keys())}


def p_yes(entry: FieldProbs | None) -> float | None:
    """P(verdict = 1): the learned verifier's when it scored the verdict, else the judge's own
    probability renormalised over the two verdicts."""
    if entry is None:
        return None
    if entry.score is not None:
        return entry.score
    return judge_p_yes(entry)


def items_per_request(ctx: MetricContext) -> int:
    """Numbered items per verdict request, so that the longest possible answer fits
    max_tokens."""
    return max(1, min(ITEMS_PER_REQUEST, (ctx.settings.max_tokens - 16) // ITEM_TOKENS))


@dataclass
class Support:
    """Per item its `Verdict` (claims/record.py): the final verdict (1 supported), the judge's
    own verdict, the checks, and in words why (`reason`); the piece that judged it when the
    material was split; and how many requests were retried split smaller."""

    verdicts: list[Verdict]
    pieces: int = 1
    retries: int = 0


async def support_verdicts(ctx: MetricContext, step: str, items: list[str], *, split: str,
                           items_var: str = "statements", question: str | None = None,
                           material_name: str = "context", details: bool = True,
                           focus: bool = True, cut: Sequence[Sentences] | None = None,
                           asks: set[int] | frozenset[int] = frozenset(),
                           **variables: Any) -> Support:
    """One verdict per item against the material `variables[split]` (module doc), split into
    sentences once (`cut`, when the caller has it: text.sentences_of) for every step.
    `details=False` skips the novel-detail check (when the material is an answer that may say
    "it" where the item names the subject). With `focus`, material longer than
    evidence.LONG_WORDS is narrowed per item to the passages that bear on it; items with the
    same passages share a request. A request holding an item of `asks` (indices: a sentence
    that may assert nothing) asks beside each verdict whether the item asserts a fact; the
    entries of `asks` carry the answer as `asserts_fact`."""
    schema_chars = SCHEMA_CHARS.get(ctx.language, 160)
    size = items_per_request(ctx)
    material: list[str] = variables[split]
    cut = cut if cut is not None else sentences_of_all(material)
    result: list[Verdict | None] = [None] * len(items)
    retries = 0
    tau = threshold(ctx, step)

    async def judge(indices: list[int], texts: list[str]) -> list[JudgeAnswer]:
        """The judge's verdict and P(verdict = 1) of each item against `texts`."""
        facts = any(i in asks for i in indices)
        schema = fact_verdicts(len(indices)) if facts else checked_verdicts(len(indices),
                                                                             schema_chars)
        answer, probs = await ctx.ask_probs(
            step, schema, ["verdict"], question=question or "",
            **({"ask_fact": True} if facts else {}),
            **{**variables, split: [json_safe(t) for t in texts],
               items_var: [json_safe(items[i]) for i in indices]})
        verdicts = answer.verdicts  # type: ignore[attr-defined]
        found = probs if len(probs) == len(verdicts) else [None] * len(verdicts)
        return [JudgeAnswer(int(v.verdict), getattr(v, "fact", None), p_yes(f),
                            judge_p_yes(f) if f and f.score is not None else None)
                for v, f in zip(verdicts, found, strict=True)]

    def settle(indices: list[int], answer: list[JudgeAnswer], texts: list[str],
               piece: int | None, focused: bool = False) -> None:
        for i, judged in zip(indices, answer, strict=True):
            p, said = judged.p_yes, judged.greedy_verdict
            if p is not None:  # the judge's probability decides, not its greedy digit
                said = int(p >= tau)
            v = decide(items[i], said, texts, question, material_name=material_name,
                       details=details, known=material if focused else None,
                       cut=cut if texts is material else None)
            reason, p_out = v.reason, None
            rule = "judge" if v.verdict == v.judge_verdict else "check"
            if p is not None:  # a mechanical check found a detail the material lacks: no
                overruled = bool(v.novel_details)  # support, whatever P and τ
                rule = "check" if overruled else "judge"
                p_out = 0.0 if overruled else round(p, 4)
                sign = "≥" if p >= tau else "<"
                who = "P(supported)" if judged.judge_p_yes is None else "verifier P(supported)"
                reason = f"{who} {p:.2f} {sign} τ {tau:g}: {reason}"
            result[i] = replace(
                v, reason=reason, rule=rule,
                p_yes=p_out, greedy_verdict=judged.greedy_verdict if p is not None else None,
                judge_p_yes=(round(judged.judge_p_yes, 4) if judged.judge_p_yes is not None
                             else None),
                asserts_fact=int(judged.fact) if i in asks and judged.fact is not None else None,
                evidence_passages=tuple(texts) if focused else None, piece=piece)

    def finish(n_pieces: int) -> Support:
        verdicts = [v or NOT_JUDGED for v in result]
        return Support(verdicts, n_pieces, retries)

    # each item against the passages that bear on it
    remaining = list(range(len(items)))
    if focus and ctx.settings.evidence_passages and is_long(material):
        index = Index.build(cut)
        by_passages: dict[tuple[str, ...], list[int]] = {}
        for i, item in enumerate(items):
            by_passages.setdefault(tuple(index.passages(item)), []).append(i)
        remaining = []
        for passages, members in by_passages.items():
            texts = list(passages)
            for start in range(0, len(members), size):
                batch = members[start:start + size]
                try:
                    answer, retried = await retry_split(
                        batch, lambda ix, texts=texts: judge(ix, texts))
                except PromptTooLong:  # one sentence longer than the window: split below
                    remaining += batch
                    continue
                retries += retried
                settle(batch, answer, texts, None, focused=True)
        if not remaining:
            return finish(1)

    pieces: list[Piece] | None = None
    batches = [remaining[s:s + size] for s in range(0, len(remaining), size)]
    for batch in batches:
        if pieces is None:
            try:
                answer, retried = await retry_split(batch, lambda ix: judge(ix, material))
                retries += retried
                settle(batch, answer, material, None)
                continue
            except PromptTooLong as exc:
                sub = [items[i] for i in batch]
                pieces = split_material(ctx, step, split, {
                    **variables, "question": question or "", items_var: sub}, exc, cut)
        routed = route([items[i] for i in batch], pieces)
        for p_index, piece in enumerate(pieces):
            mine = [i for i, r in zip(batch, routed, strict=True) if r == p_index]
            if not mine:
                continue
            used: dict[tuple[int, ...], list[str]] = {}

            async def in_piece(ix: list[int], piece: Piece = piece,
                               used: dict[tuple[int, ...], list[str]] = used
                               ) -> list[JudgeAnswer]:
                while True:
                    try:
                        answer = await judge(ix, piece.texts)
                        used[tuple(ix)] = piece.texts
                        return answer
                    except PromptTooLong:
                        piece = narrow(piece, [items[i] for i in ix])

            answer, retried = await retry_split(mine, in_piece)
            retries += retried
            if retried:
                used.pop(tuple(mine), None)  # the answer that was asked again in halves
            at = 0
            for ix, texts in used.items():
                settle(list(ix), answer[at:at + len(ix)], texts, p_index + 1)
                at += len(ix)
    return finish(len(pieces) if pieces else 1)
