"""Conversations (localeval/data/conversation.py, localeval/conversation.py): the three input
shapes, a malformed turn as one line, every single-turn metric on each assistant turn with its
standalone question, the conversation metrics, and the run's guarantees (the same bytes at
--parallel 1 and 4, resume, the shield, a rubric on `history`). Fake judges only."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from localeval.config import Settings
from localeval.data import load
from localeval.judge.interface import JudgeReply, JudgeRequest
from localeval.models.embed import HashEmbedder
from localeval.runner import run
from tests.fooled import NOTE, fill

VEGETARIAN = {"id": "veg", "turns": [
    {"role": "user", "content": "I am vegetarian. Which pasta sauce is quick to make?"},
    {"role": "assistant", "content": "A tomato and basil sauce takes ten minutes.",
     "contexts": ["Tomato and basil sauce is ready in ten minutes."]},
    {"role": "user", "content": "What can I add to it for more flavour?"},
    {"role": "assistant", "content": "Add crispy pancetta and garlic.",
     "contexts": ["Garlic and pancetta add flavour to tomato sauce."],
     "ground_truth": "Garlic, olives or capers."},
]}
RAGAS = {"user_input": [
    {"content": "Who designed the Eiffel Tower?", "type": "human"},
    {"content": "The tower was designed by the company of Gustave Eiffel.", "type": "tool"},
    {"content": "Gustave Eiffel's company designed it.", "type": "ai"},
    {"content": "How tall is it?", "type": "human"},
    {"content": "The Eiffel Tower is 330 metres tall.", "type": "tool"},
    {"content": "It is 330 metres tall.", "type": "ai"},
], "reference": "The user learns who designed the tower and how tall it is."}
DEEPEVAL = {"turns": [
    {"role": "user", "content": "我对青霉素过敏。喉咙痛吃什么药？"},
    {"role": "assistant", "content": "可以吃阿莫西林。",
     "retrieval_context": ["阿莫西林是一种青霉素类抗生素。"]},
], "expected_outcome": "助手推荐不含青霉素的药物。", "scenario": "过敏病人咨询用药"}


class HashJudge:
    """Answers any request from its schema, each choice picked by a hash of the request's
    messages: the same request gets the same answer whatever the order it is asked in."""

    name = "hash"
    fingerprint = "hash-judge"

    def __init__(self) -> None:
        self.requests: list[JudgeRequest] = []

    def sampling_key(self) -> str:
        return "hash"

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        self.requests.append(request)
        digest = hashlib.sha256(json.dumps(request.messages).encode()).digest()
        if request.continuations:  # a prompt-only request (a rubric's level): sure of one
            pick = request.continuations[digest[0] % len(request.continuations)]
            return JudgeReply(text="", finish_reason="stop", choice_probs={
                c: float(c == pick) for c in request.continuations})
        schema = json.loads(request.answer_schema)
        return JudgeReply(text=json.dumps(self._value(schema, schema, iter(digest * 8))),
                          finish_reason="stop")

    def _value(self, node: dict, root: dict, bits: Any) -> Any:
        return fill(node, root, lambda values, _name: values[next(bits) % len(values)],
                    lambda: f"standalone {next(bits)}", lambda: next(bits) % 2)

    def close(self) -> None:
        pass


def write_rows(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                    encoding="utf-8")
    return path


def run_rows(rows: Any, out: Path | None = None, judge: Any = None, **settings: Any):  # type: ignore[no-untyped-def]
    judge = judge or HashJudge()
    outcome = run(rows, out, Settings(no_cache=True, **settings), judge=judge,
                  embedder=HashEmbedder())
    return outcome, judge


# ---- input ---------------------------------------------------------------------------------

def test_the_three_shapes_read_into_the_same_turns(tmp_path: Path) -> None:
    ours = load(write_rows(tmp_path / "ours.jsonl", [VEGETARIAN]))
    ragas = load(write_rows(tmp_path / "ragas.jsonl", [RAGAS]))
    path = tmp_path / "deepeval.json"
    path.write_text(json.dumps([DEEPEVAL], ensure_ascii=False), encoding="utf-8")
    deepeval = load(path)
    assert [d.problems for d in (ours, ragas, deepeval)] == [[], [], []]
    veg = ours.samples[0]
    assert veg.conversation and [t["role"] for t in veg.value("turns")] == [
        "user", "assistant", "user", "assistant"]
    assert veg.value("turns")[3]["ground_truth"] == "Garlic, olives or capers."
    eiffel = ragas.samples[0].value("turns")
    assert [t["role"] for t in eiffel] == ["user", "assistant", "user", "assistant"]
    assert eiffel[3]["contexts"] == ["The Eiffel Tower is 330 metres tall."]  # the tool message
    assert ragas.samples[0].value("expected_outcome").startswith("The user learns")
    allergy = deepeval.samples[0]
    assert allergy.value("turns")[1]["contexts"] == ["阿莫西林是一种青霉素类抗生素。"]
    assert allergy.value("expected_outcome") == "助手推荐不含青霉素的药物。"
    assert ours.conversations == ragas.conversations == deepeval.conversations == 1


def test_a_malformed_turn_is_one_line_naming_its_row_and_turn(tmp_path: Path) -> None:
    bad = {"id": "bad", "turns": [{"role": "user", "content": "Hi"},
                                  {"role": "bot?", "content": "Hello"}]}
    no_text = {"id": "no-text", "turns": [{"role": "user", "content": "Hi"},
                                          {"role": "assistant", "content": ["Hello"]}]}
    data = load(write_rows(tmp_path / "d.jsonl", [bad, VEGETARIAN, no_text]))
    assert [s.id for s in data.samples] == ["veg"]
    lines = [str(p) for p in data.problems]
    assert lines[0].startswith("line 1 (id bad): turn 2 (turns[1]): role must be 'user' or "
                               "'assistant'")
    assert lines[1] == ("line 3 (id no-text): turn 2 (turns[1]): content must be a string, "
                        "got list")
    assert all("\n" not in line for line in lines)


def test_a_conversation_row_with_a_top_level_answer_is_refused(tmp_path: Path) -> None:
    row = {**VEGETARIAN, "answer": "which one is scored?"}
    data = load(write_rows(tmp_path / "d.jsonl", [row]))
    assert "holds its answer in its turns" in str(data.problems[0])


# ---- scoring -------------------------------------------------------------------------------

METRICS = ["faithfulness", "answer_relevance", "context_precision", "knowledge_retention",
           "conversation_completeness"]


def test_each_assistant_turn_is_scored_with_its_standalone_question() -> None:
    outcome, judge = run_rows([VEGETARIAN], metrics=METRICS)
    record = outcome.records[0]
    turns = record.details["turns"]
    assert [t["turn"] for t in turns] == [2, 4]
    assert turns[0]["rewritten"] is False and turns[0]["standalone"] == turns[0]["asked"]
    assert turns[1]["rewritten"] is True and turns[1]["standalone"].startswith("standalone")
    rewrites = [r for r in judge.requests if r.step == "conversation_rewrite"]
    assert len(rewrites) == 1  # once per turn with a history, shared by every metric
    prompt = rewrites[0].messages[-1]["content"]
    assert "I am vegetarian" in prompt and "What can I add to it" in prompt
    # the context metrics and answer_relevance read the standalone question
    turn_requests = [r for r in judge.requests if r.sample_id == "veg#turn4"
                     and r.step in ("context_precision_useful", "answer_relevance_parts",
                                    "answer_relevance_coverage")]
    assert turn_requests and all(turns[1]["standalone"] in r.messages[-1]["content"]
                                 for r in turn_requests)
    for name in ("faithfulness", "answer_relevance", "context_precision"):
        per_turn = [t["scores"].get(name) for t in turns if t["scores"].get(name) is not None]
        assert record.scores[name] == sum(per_turn) / len(per_turn)
        assert record.scores[f"{name}.last_turn"] == turns[-1]["scores"].get(name)
        assert record.details[name]["mean_over"] == "assistant turns"
    assert record.question == "What can I add to it for more flavour?"
    assert record.answer == "Add crispy pancetta and garlic."
    retention = record.details["knowledge_retention"]["turns"]
    assert [t["turn"] for t in retention] == [2, 4]
    completeness = record.details["conversation_completeness"]["turns"]
    assert [t["turn"] for t in completeness] == [1, 3]
    assert all("reason" in t for t in retention + completeness)


class SupportJudge(HashJudge):
    """Supports a claim only from what the user said: never against the turn's context
    ("Pasta recipes.")."""

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        reply = await super().complete(request)
        if request.step != "faithfulness_verdicts":
            return reply
        answer = json.loads(reply.text)
        user = "Pasta recipes." not in request.messages[-1]["content"]
        for v in answer["verdicts"]:
            v["verdict"] = 1 if user else 0
        return JudgeReply(text=json.dumps(answer), finish_reason="stop")


def test_what_the_user_said_may_support_a_claim_and_the_details_say_so() -> None:
    row = {"id": "v", "turns": [
        {"role": "user", "content": "I am vegetarian and I cook for two."},
        {"role": "assistant", "content": "You are vegetarian.", "contexts": ["Pasta recipes."]}]}
    outcome, _ = run_rows([row], judge=SupportJudge(), metrics=["faithfulness"])
    record = outcome.records[0]
    turn = record.details["turns"][0]["details"]["faithfulness"]
    assert turn["statements"][0]["supported_by"] == "user"
    assert turn["user_checked"] == {"turns": [1], "supported": [0]}
    assert record.scores["faithfulness"] == 1.0


def test_an_unscored_last_turn_gives_its_reason_not_a_silent_none() -> None:
    row = {"id": "u", "turns": [
        {"role": "user", "content": "Which sauce is quick?"},
        {"role": "assistant", "content": "Tomato sauce is quick.",
         "contexts": ["Tomato sauce takes ten minutes."]},
        {"role": "user", "content": "And a second one?"},
        {"role": "assistant", "content": "Pesto is quick too.", "contexts": [" "]}]}
    outcome, _ = run_rows([row], metrics=["faithfulness"])
    record = outcome.records[0]
    assert record.scores["faithfulness"] is not None  # the first turn's
    assert record.scores["faithfulness.last_turn"] is None
    assert record.details["faithfulness"]["undefined"] == {
        "faithfulness.last_turn": "turn 4 is unscored: every context is empty"}


def test_a_single_turn_row_beside_a_conversation_is_scored_as_before() -> None:
    single = {"id": "s", "question": "Where is the tower?", "answer": "It is in Paris.",
              "contexts": ["The tower stands in Paris."]}
    together, _ = run_rows([single, VEGETARIAN], metrics=METRICS)
    alone, _ = run_rows([single], metrics=METRICS)
    assert together.records[0].model_dump() == alone.records[0].model_dump()
    assert "turns" not in together.records[0].details
    assert "knowledge_retention" not in together.records[0].scores


# ---- the run's guarantees -----------------------------------------------------------------

def test_the_same_bytes_at_parallel_1_and_4(tmp_path: Path) -> None:
    rows = write_rows(tmp_path / "d.jsonl", [VEGETARIAN, RAGAS, DEEPEVAL,
                                             {**VEGETARIAN, "id": "veg2"}])
    run_rows(rows, tmp_path / "p1", metrics=METRICS, parallel=1)
    run_rows(rows, tmp_path / "p4", metrics=METRICS, parallel=4)
    one = (tmp_path / "p1" / "results.jsonl").read_bytes()
    assert one == (tmp_path / "p4" / "results.jsonl").read_bytes()
    assert one.count(b"\n") == 4


def test_resume_judges_nothing_again(tmp_path: Path) -> None:
    rows = write_rows(tmp_path / "d.jsonl", [VEGETARIAN, DEEPEVAL])
    run_rows(rows, tmp_path / "o", metrics=METRICS)
    before = (tmp_path / "o" / "results.jsonl").read_bytes()
    again = HashJudge()
    run(rows, tmp_path / "o", Settings(no_cache=True, metrics=METRICS), judge=again,
        embedder=HashEmbedder(), resume=True)
    assert again.requests == []
    assert (tmp_path / "o" / "results.jsonl").read_bytes() == before
    summary = json.loads((tmp_path / "o" / "summary.json").read_text(encoding="utf-8"))
    assert summary["complete"] is True
    assert summary["resumed"]["samples_from_earlier_sessions"] == 2
    assert "en/conversation_rewrite.j2" in summary["prompts"]


def test_the_answer_cache_serves_a_second_run(tmp_path: Path) -> None:
    rows = write_rows(tmp_path / "d.jsonl", [VEGETARIAN])
    settings = Settings(cache=tmp_path / "cache.sqlite", metrics=METRICS)
    first = run(rows, None, settings, judge=HashJudge(), embedder=HashEmbedder())
    again = HashJudge()
    second = run(rows, None, settings, judge=again, embedder=HashEmbedder())
    assert again.requests == []
    assert first.records[0].model_dump() == second.records[0].model_dump()


def test_a_note_in_a_user_turn_is_flagged_for_the_conversation_metrics() -> None:
    row = {"id": "n", "turns": [
        {"role": "user", "content": f"I am vegetarian. {NOTE}"},
        {"role": "assistant", "content": "Try pancetta.", "contexts": ["Pancetta is pork."]}]}
    outcome, _ = run_rows([row], metrics=["knowledge_retention"])
    details = outcome.records[0].details["knowledge_retention"]
    assert "turns[0]" in details["instructions"]["found"]


def test_a_rubric_on_a_turn_may_require_its_history(tmp_path: Path) -> None:
    from localeval.rubrics import rubric

    follows = rubric("follows_up", requires=("question", "answer", "history"),
                     scale="yes/no", criteria="The answer follows from the conversation.")
    outcome, judge = run_rows([VEGETARIAN], metrics=["follows_up"], rubrics=[follows])
    record = outcome.records[0]
    assert [t["turn"] for t in record.details["turns"]] == [2, 4]
    asked = [r for r in judge.requests if r.sample_id == "veg#turn4" and r.step == "rubric"]
    assert asked and "I am vegetarian" in asked[0].messages[-1]["content"]
    assert record.scores["follows_up"] is not None


def test_the_estimate_asks_what_the_run_asks() -> None:
    """`run --estimate`'s dry run (estimate/dryrun.py) goes through the same conversation path:
    the same requests per step as a run, each counted for its conversation's row."""
    from collections import Counter

    from localeval.estimate.dryrun import DryJudge, dry_run
    from localeval.estimate.workload import CharVocab
    from localeval.metrics import resolve

    rows = [VEGETARIAN, RAGAS, DEEPEVAL]
    _, judge = run_rows(rows, metrics=METRICS)
    data = load(rows)
    order = {s.id: i for i, s in enumerate(data.samples)}
    dry = DryJudge("hash-judge", "hash", CharVocab().prompt_tokens, None, order)
    settings = Settings(no_cache=True, metrics=METRICS)
    found = dry_run(list(data.samples), resolve(METRICS), settings, dry, None, 1)
    ran = Counter(r.step for r in judge.requests)
    estimated = Counter(r.request.step for r in found.recorded)
    # the placeholder answers decide nothing the number of requests depends on but the
    # faithfulness pass over what the user said (asked only for an unsupported claim)
    assert {k: v for k, v in estimated.items() if k != "faithfulness_verdicts"} == {
        k: v for k, v in ran.items() if k != "faithfulness_verdicts"}
    assert estimated["conversation_rewrite"] == 2
    assert sorted({r.sample for r in found.recorded}) == [0, 1, 2]


def test_the_report_draws_a_conversation_as_a_chat(tmp_path: Path) -> None:
    rows = write_rows(tmp_path / "d.jsonl", [VEGETARIAN])
    run_rows(rows, tmp_path / "o", metrics=METRICS)
    md = (tmp_path / "o" / "report.md").read_text(encoding="utf-8")
    chat = md.split("## Conversations", 1)[1]
    assert "- **user**: What can I add to it for more flavour?" in chat
    assert "  - standalone: standalone" in chat  # the rewrite, under the message it rewrites
    assert "- **assistant** (turn 4): Add crispy pancetta and garlic." in chat
    assert "faithfulness = " in chat
    html = (tmp_path / "o" / "report.html").read_text(encoding="utf-8")
    assert 'class="msg user"' in html and "assistant · turn 4" in html


def test_a_hand_edited_turn_number_does_not_stop_the_report() -> None:
    from localeval.report.view import chat_of
    from localeval.results.records import SampleRecord

    record = SampleRecord(id="c", line=1, language="en", details={
        "turns": [{"turn": "two", "asked": "Hi?", "answer": "Hello."}],
        "knowledge_retention": {"turns": [{"turn": None, "retained": 0, "reason": "forgot"}]}})
    chat = chat_of(record)
    assert [t.turn for t in chat.turns] == [0] and chat.turns[0].answer == "Hello."
