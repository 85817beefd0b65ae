"""A conversation scored turn by turn with its history, then as a whole.

A conversation row (data/conversation.py) is expanded into one single-turn Sample per assistant
turn, and each is scored by every single-turn metric exactly as a row would be (the answer cache,
the shield, batching and determinism are theirs):

- `question`: the user message the turn answers, rewritten by the judge as a standalone question
  from the conversation before it (`conversation_rewrite`, one request per turn that has a
  history, cached like any request; the first message is its own question). answer_relevance
  and the context metrics read it; `history`: the conversation before the assistant turn, a
  column a rubric may require;
- `answer`, `contexts`, `ground_truth`: the assistant turn's own.

Faithfulness judges a turn's claims against that turn's contexts; a claim they leave unsupported
is judged again against what the user said up to that turn, and counts as supported when that
supports it (`supported_by: "user"` in the turn's statements; not on a turn the shield flagged).
That pass is asked only where a claim is left unsupported; a dry run (`Backends.every_request`,
`run --estimate`) asks it on every such turn, so the estimate's count is an upper bound.

The conversation's record: each single-turn metric's score (and sub-scores) is the mean over the
assistant turns it scored, `<name>.last_turn` the last assistant turn's; each turn's question,
rewrite, scores, details, errors and skips are in `details.turns`. A metric that failed on a
turn is that conversation's error (naming the turn), never a mean over fewer turns; a key no
scored turn has, or `.last_turn` of an unscored last turn, is None with its reason in the
metric's `details.undefined`. The conversation metrics (`requires=("turns",)`:
knowledge_retention, conversation_completeness) run on the conversation itself. Imported only
for a conversation (executor.evaluate_sample).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from localeval.config import Settings
from localeval.data.conversation import USER_MARK, Turn, transcript, turn_id, turns_of
from localeval.data.dataset import Sample
from localeval.errors import LocalevalError
from localeval.judge.schemas import Standalone
from localeval.metrics import Metric, MetricContext
from localeval.metrics.claims.score import ALL_SUPPORTED
from localeval.metrics.shield import meaning_flags, planted, without
from localeval.models.backends import Backends
from localeval.names import GREEDY, WEIGHTED, owner_of
from localeval.prompts import REWRITE_STEP
from localeval.results.records import SampleRecord
from localeval.text import detect_language

if TYPE_CHECKING:
    from localeval.models.embed import EmbeddingStore

LAST_TURN = "last_turn"
"""The key suffix of a conversation's last assistant turn's score (`faithfulness.last_turn`)."""
FAITHFULNESS = "faithfulness"

EvaluateFn = Callable[[Sample, list[Metric], Settings, Backends, str], Awaitable[SampleRecord]]
"""executor.evaluate_metrics: one sample through the metrics, in the given language."""

EXAMPLES = {
    "en": {"history": "User: Who designed the Eiffel Tower?\nAssistant: Gustave Eiffel's "
                      "company designed it.",
           "message": "How tall is it?"},
    "zh": {"history": "用户：埃菲尔铁塔是谁设计的？\n助手：古斯塔夫·埃菲尔的公司设计了它。",
           "message": "它有多高？"},
}
"""The rewrite step's golden-prompt variables (tests/test_prompts_golden.py)."""


def is_single_turn(m: Metric) -> bool:
    """A metric scored on each assistant turn (not one that reads the whole conversation)."""
    return "turns" not in m.requires


async def conversation_language(sample: Sample, settings: Settings,
                                store: EmbeddingStore | None = None) -> str:
    """The conversation's one language (every turn's templates): `settings.language`, or the
    one its messages and first context are written in, less any note to the evaluator that a
    form or the meaning head flags in them (as executor.sample_language reads a row)."""
    if settings.language != "auto":
        return settings.language
    columns = ("turns",)
    also = frozenset(await meaning_flags(sample, settings, store, columns))
    if planted(sample, columns, also):
        sample = without(sample, columns, also)
    turns = turns_of(sample.value("turns"))
    first_context = next((c[:500] for t in turns for c in t.contexts or ()), None)
    return detect_language(*(t.content[:500] for t in turns[:6]), first_context)


@dataclass
class TurnOutcome:
    """One assistant turn scored: its number, the message it answers (as asked and as the
    standalone question it was scored with), its reply and its record."""

    turn: int
    asked_turn: int | None
    asked: str | None
    standalone: str | None
    rewritten: bool
    answer: str
    record: SampleRecord

    def as_json(self) -> dict[str, Any]:
        r = self.record
        out: dict[str, Any] = {"turn": self.turn, "asked_turn": self.asked_turn,
                               "asked": self.asked,
                               "standalone": self.standalone, "rewritten": self.rewritten,
                               "answer": self.answer, "scores": r.scores, "details": r.details}
        if r.errors:
            out["errors"] = r.errors
        if r.skipped:
            out["skipped"] = r.skipped
        return out


async def evaluate_conversation(sample: Sample, metrics: list[Metric], settings: Settings,
                                backends: Backends, evaluate: EvaluateFn) -> SampleRecord:
    """The conversation's record (module doc): its assistant turns scored concurrently, each by
    the single-turn metrics, and the conversation by the conversation metrics."""
    turns = turns_of(sample.value("turns"))
    language = await conversation_language(sample, settings, backends.embeddings)
    per_turn = [m for m in metrics if is_single_turn(m)]
    whole = [m for m in metrics if not is_single_turn(m)]
    record = SampleRecord(id=sample.id, line=sample.line, language=language)
    rewriter = MetricContext(sample=sample, language=language, settings=settings,
                             judge=backends.judge, embeddings=None, steps=(REWRITE_STEP,))
    positions = [k for k, t in enumerate(turns) if t.role == "assistant"] if per_turn else []

    async def as_a_whole() -> SampleRecord | None:
        return await evaluate(sample, whole, settings, backends, language) if whole else None

    own, *outcomes = await asyncio.gather(as_a_whole(), *(
        _score_turn(sample, turns, k, per_turn, settings, backends, evaluate, rewriter,
                    language) for k in positions))
    if own is not None:
        record.scores.update(own.scores)
        record.details.update(own.details)
        record.errors.update(own.errors)
        record.skipped.update(own.skipped)
    if per_turn:
        _fold(record, per_turn, outcomes)
    return record


async def _score_turn(sample: Sample, turns: list[Turn], k: int, metrics: list[Metric],
                      settings: Settings, backends: Backends, evaluate: EvaluateFn,
                      rewriter: MetricContext, language: str) -> TurnOutcome:
    """The assistant turn at position k scored with its history."""
    reply = turns[k]
    asked_at = next((j for j in range(k - 1, -1, -1) if turns[j].role == "user"), None)
    asked = turns[asked_at].content if asked_at is not None else None
    asked_number = turns[asked_at].number if asked_at is not None else None
    standalone, rewritten, failed = asked, False, None
    if asked_at is not None and asked_at > 0:
        try:
            answer = await rewriter.ask(REWRITE_STEP, Standalone,
                                        history=transcript(turns[:asked_at], language),
                                        message=asked)
            standalone, rewritten = answer.question.strip() or asked, True
        except LocalevalError as exc:
            failed = str(exc)
    turn_sample = Sample(
        id=turn_id(sample.id, reply.number), line=sample.line, question=standalone,
        answer=reply.content, contexts=list(reply.contexts) if reply.contexts else None,
        ground_truth=reply.ground_truth,
        history=transcript(turns[:k], language) if k else None)
    if failed is not None:  # without its standalone question the turn would be judged alone
        record = SampleRecord(id=turn_sample.id, line=sample.line, language=language)
        record.errors = {m.name: f"the standalone question of turn {reply.number} could not be "
                                 f"written: {failed}" for m in metrics}
        return TurnOutcome(reply.number, asked_number, asked, None, False, reply.content,
                           record)
    record = await evaluate(turn_sample, metrics, settings, backends, language)
    said = [t for t in turns[:k] if t.role == "user" and t.content.strip()]
    faith = next((m for m in metrics if m.name == FAITHFULNESS), None)
    if faith is not None and said and _unsupported(record, any_verdict=backends.every_request):
        user_sample = turn_sample.model_copy(update={
            "id": turn_sample.id + USER_MARK, "contexts": [t.content for t in said]})
        by_user = await evaluate(user_sample, [faith], settings, backends, language)
        _credit_user(record, by_user, [t.number for t in said])
    return TurnOutcome(reply.number, asked_number, asked, standalone, rewritten, reply.content,
                       record)


def _unsupported(record: SampleRecord, *, any_verdict: bool = False) -> bool:
    """Whether the turn's faithfulness left a claim unsupported (a flagged turn: not lifted);
    `any_verdict`: whether it judged a claim at all (the dry run's upper bound)."""
    details = record.details.get(FAITHFULNESS) or {}
    if "instructions" in details or record.scores.get(FAITHFULNESS) is None:
        return False
    return any(any_verdict or s.get("verdict") == 0 for s in details.get("statements") or [])


def _credit_user(record: SampleRecord, by_user: SampleRecord, user_turns: list[int]) -> None:
    """Count as supported the claims the contexts left unsupported and what the user said
    supports; rescore faithfulness (and its sub-scores) over the merged claims."""
    details = record.details[FAITHFULNESS]
    checked = by_user.details.get(FAITHFULNESS) or {}
    if "instructions" in checked:  # what the user said is aimed at the evaluator: no credit
        return
    theirs = checked.get("statements") or []
    found = {(s.get("statement"), s.get("sentence")): s for s in theirs}
    statements, credited = [], []
    for i, s in enumerate(details.get("statements") or []):
        other = found.get((s.get("statement"), s.get("sentence")))
        if s.get("verdict") == 0 and other is not None and other.get("verdict") == 1:
            s = {**s, "verdict": 1, "supported_by": "user",
                 **({"p_supported": other["p_supported"]} if "p_supported" in other else {})}
            credited.append(i)
        elif s.get("verdict") == 1:
            s = {**s, "supported_by": "contexts"}
        statements.append(s)
    if not credited:
        details["user_checked"] = {"turns": user_turns, "supported": []}
        return
    details["statements"] = statements
    details["user_checked"] = {"turns": user_turns, "supported": credited}
    share = sum(s["verdict"] for s in statements) / len(statements)
    record.scores[FAITHFULNESS] = record.scores[FAITHFULNESS + GREEDY] = share
    every = f"{FAITHFULNESS}.{ALL_SUPPORTED}"
    if every in record.scores:
        record.scores[every] = float(share == 1.0)
    probs = [s.get("p_supported") for s in statements]
    if FAITHFULNESS + WEIGHTED in record.scores and all(p is not None for p in probs):
        record.scores[FAITHFULNESS + WEIGHTED] = sum(probs) / len(probs)  # type: ignore[arg-type]


def _fold(record: SampleRecord, metrics: list[Metric], outcomes: Sequence[TurnOutcome]) -> None:
    """Each single-turn metric's per-turn results into the conversation's record (module doc)."""
    record.details["turns"] = [o.as_json() for o in outcomes]
    for m in metrics:
        failed = [(o.turn, o.record.errors[m.name]) for o in outcomes if m.name in o.record.errors]
        if failed:
            record.errors[m.name] = "; ".join(f"turn {t}: {e}" for t, e in failed)
            continue
        ran = [o for o in outcomes if m.name not in o.record.skipped]
        if not ran:
            record.skipped[m.name] = "; ".join(
                f"turn {o.turn}: {o.record.skipped[m.name]}" for o in outcomes)
            continue
        keys = list(dict.fromkeys(
            k for o in ran for k in o.record.scores if owner_of(k) == m.name))
        scored = [o for o in ran if o.record.scores.get(m.name) is not None]
        undefined: dict[str, str] = {}
        for key in keys:
            values = [o.record.scores[key] for o in scored if o.record.scores.get(key) is not None]
            record.scores[key] = sum(values) / len(values) if values else None  # type: ignore
            if not values and scored and key != m.name:
                undefined[key] = "; ".join(
                    f"turn {o.turn}: {why}" for o in scored
                    if (why := ((o.record.details.get(m.name) or {}).get("undefined") or {})
                        .get(key))) or "no scored assistant turn has it"
        last = ran[-1]
        record.scores[f"{m.name}.{LAST_TURN}"] = last.record.scores.get(m.name)
        summary: dict[str, Any] = {
            "mean_over": "assistant turns", "turns_scored": [o.turn for o in scored],
            "turns_applied": [o.turn for o in ran], "last_turn": last.turn}
        if not scored:
            summary["unscored_reason"] = "no assistant turn was scored: " + "; ".join(
                f"turn {o.turn}: {_unscored_reason(o, m.name)}" for o in ran)
        elif last.record.scores.get(m.name) is None:
            undefined[f"{m.name}.{LAST_TURN}"] = (f"turn {last.turn} is unscored: "
                                                  f"{_unscored_reason(last, m.name)}")
        if undefined:
            summary["undefined"] = undefined
        flagged = [o.turn for o in ran
                   if "instructions" in (o.record.details.get(m.name) or {})]
        if flagged:  # the report counts the conversation as flagged
            summary["instructions"] = {"turns": flagged,
                                       "note": "text aimed at the evaluator in these turns "
                                               "(details.turns)"}
        record.details[m.name] = summary


def _unscored_reason(outcome: TurnOutcome, name: str) -> str | None:
    return (outcome.record.details.get(name) or {}).get("unscored_reason")
