"""Issue 51 item 4: a conversation labelled turn by turn. The labelling page shows each
assistant turn of a conversation (with the conversation before it) as a unit of its own for a
metric scored per turn, and writes its labels bound to the conversation's input_hash, the turn's
number and the turn's reply; the estimate then runs over turns (the judge's per-turn scores,
details.turns) and says so, while labels of whole conversations estimate the mean over
conversations. Fake judges only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from localeval.config import Settings
from localeval.labels.estimate import estimate_run
from localeval.labels.show import basis, labels_table
from localeval.labels.store import LABELS_FILE, read_labels
from localeval.models.embed import HashEmbedder
from localeval.runner import run
from tests.test_conversation import VEGETARIAN, HashJudge, write_rows
from tests.test_label_page import open_run, serving

TEA = {"id": "tea", "turns": [
    {"role": "user", "content": "Where does tea come from?"},
    {"role": "assistant", "content": "Tea comes from China. It was a medicine first.",
     "contexts": ["Tea originated in southwest China as a medicinal drink."]},
    {"role": "user", "content": "And when did it reach Europe?"},
    {"role": "assistant", "content": "It reached Europe in the 17th century.",
     "contexts": ["Portuguese and Dutch traders brought tea to Europe around 1610."]},
]}
NILE = {"id": "nile", "turns": [
    {"role": "user", "content": "How long is the Nile?"},
    {"role": "assistant", "content": "About 6,650 km.",
     "contexts": ["The Nile is about 6,650 km long."]},
    {"role": "user", "content": "Where does it end?"},
    {"role": "assistant", "content": "In the Mediterranean Sea.",
     "contexts": ["The Nile flows into the Mediterranean Sea."]},
]}
ROW = {"id": "moon", "question": "Who first walked on the Moon?",
       "answer": "Neil Armstrong walked on the Moon first.",
       "contexts": ["Neil Armstrong was the first person to walk on the Moon, in 1969."]}


def make_conversation_run(tmp_path: Path, metrics: list[str] | None = None) -> Path:
    data = write_rows(tmp_path / "chats.jsonl", [VEGETARIAN, TEA, NILE, ROW])
    out = tmp_path / "run"
    run(data, out, Settings(no_cache=True, metrics=metrics or ["faithfulness"]),
        judge=HashJudge(), embedder=HashEmbedder())
    return out


@pytest.fixture
def chats(tmp_path: Path) -> Path:
    return make_conversation_run(tmp_path)


def _results(run_dir: Path) -> dict[str, Any]:
    return {r["id"]: r for r in map(json.loads, (run_dir / "results.jsonl").read_text()
                                    .splitlines())}


def test_the_page_labels_each_assistant_turn_with_the_conversation_before_it(
        chats: Path) -> None:
    session = open_run(chats, seed=3)
    view = session.view("faithfulness")
    assert sorted(view.ids) == sorted(["veg#turn2", "veg#turn4", "tea#turn2", "tea#turn4",
                                       "nile#turn2", "nile#turn4", "moon"])
    results = _results(chats)
    turn4 = results["veg"]["details"]["turns"][1]
    with serving(session) as c:
        shown = c.item(view.informative_order.index("veg#turn4"), "informative")
        assert shown["conversation"] == "veg" and shown["turn"] == 4
        assert shown["answer"] == "Add crispy pancetta and garlic."
        assert shown["question"] == turn4["standalone"]
        assert [m["role"] for m in shown["history"]] == ["user", "assistant", "user"]
        assert shown["history"][-1]["content"] == "What can I add to it for more flavour?"
        assert shown["contexts"][0][0]["t"].startswith("Garlic and pancetta")  # the turn's
        claims = turn4["details"]["faithfulness"]["statements"]
        assert [x["text"] for x in shown["claims"]] == [x["statement"] for x in claims]
        for i in range(len(claims)):
            state = c.post("/api/mark", {
                "metric": "faithfulness", "order": "informative", "id": "veg#turn4",
                "claim": i, "label": 1, "note": None, "input_hash": shown["input_hash"],
                "statement": claims[i]["statement"], "turn_text": shown["answer"]})
        assert state["informative_done"] == 1
        assert state["interval"]["unit"] == "turns" and state["interval"]["n_rows"] == 7
        # a page that showed another reply for the turn is refused
        refused = c.post("/api/mark", {
            "metric": "faithfulness", "order": "informative", "id": "veg#turn4", "claim": 0,
            "label": 0, "note": None, "turn_text": "Add olives."}, 400)["error"]
        assert "turn's reply is not the one marked" in refused
        assert c.item(view.informative_order.index("veg#turn4"), "informative")["status"] == \
            "informative"
    rows = [json.loads(x) for x in (chats / LABELS_FILE).read_text().splitlines()]
    assert {(r["id"], r["turn"], r["turn_text"]) for r in rows} == {
        ("veg", 4, "Add crispy pancetta and garlic.")}
    assert {r["input_hash"] for r in rows} == {results["veg"]["input_hash"]}
    assert [r["statement"] for r in rows] == [x["statement"] for x in claims]


def test_a_conversation_metric_is_still_labelled_per_conversation(tmp_path: Path) -> None:
    run_dir = make_conversation_run(tmp_path, ["faithfulness", "knowledge_retention"])
    session = open_run(run_dir)
    view = session.view("knowledge_retention")
    assert sorted(view.ids) == ["nile", "tea", "veg"] and not view.claims
    assert session.state("knowledge_retention")["interval"]["unit"] == "conversations"


def _label(run_dir: Path, marks: dict[tuple[str, int | None], float]) -> None:
    """Rows of the labels file, drawn at random: (id, turn) → label; bound as the page binds
    them (the turn's reply for a turn)."""
    results = _results(run_dir)
    with open(run_dir / LABELS_FILE, "a", encoding="utf-8") as f:
        for (sid, turn), value in marks.items():
            row = {"id": sid, "metric": "answer_relevance", "label": value, "order": "random",
                   "input_hash": results[sid]["input_hash"]}
            if turn is not None:
                entry = next(t for t in results[sid]["details"]["turns"] if t["turn"] == turn)
                row.update(turn=turn, turn_text=entry["answer"])
            f.write(json.dumps(row) + "\n")


def test_per_turn_labels_are_estimated_over_turns_and_say_so(tmp_path: Path) -> None:
    run_dir = make_conversation_run(tmp_path, ["answer_relevance"])
    _label(run_dir, {("veg", 2): 1.0, ("veg", 4): 0.0, ("tea", 2): 1.0, ("moon", None): 1.0})
    results = _results(run_dir)
    judge_turns = [t["scores"]["answer_relevance"] for cid in ("veg", "tea", "nile")
                   for t in results[cid]["details"]["turns"]]
    data = estimate_run(run_dir).to_json()
    e = data["ppi"]["answer_relevance"]
    assert e["unit"] == "turns" and e["n_labels"] == 4
    assert e["n_rows"] == 7  # six turns and the single-turn row
    everything = [*judge_turns, results["moon"]["scores"]["answer_relevance"]]
    assert e["judge_mean"] == pytest.approx(sum(everything) / 7)
    assert "among the 7 turns the judge scored" in basis("answer_relevance", e)
    table = labels_table(data).splitlines()
    assert "mean over" in table[0] and "4/7" in table[1] and "turns" in table[1]
    # a label of a whole conversation beside them is left out, and said
    _label(run_dir, {("nile", None): 1.0})
    again = estimate_run(run_dir)
    assert again.estimates["answer_relevance"].n_labels == 4
    assert any("1 conversation(s) labelled as a whole are left out" in n for n in again.notes)


def test_whole_conversation_labels_estimate_the_mean_over_conversations(
        tmp_path: Path) -> None:
    data = write_rows(tmp_path / "chats.jsonl", [VEGETARIAN, TEA, NILE])
    run_dir = tmp_path / "run"
    run(data, run_dir, Settings(no_cache=True, metrics=["answer_relevance"]),
        judge=HashJudge(), embedder=HashEmbedder())
    _label(run_dir, {("veg", None): 0.5, ("tea", None): 1.0})
    e = estimate_run(run_dir).to_json()["ppi"]["answer_relevance"]
    assert e["unit"] == "conversations" and e["n_rows"] == 3 and e["n_labels"] == 2
    assert "mean over conversations" in basis("answer_relevance", e)


def test_a_turn_label_is_bound_to_the_turn_it_judged(chats: Path) -> None:
    """A row whose turn's reply differs, or that names a turn the conversation does not have,
    is left out by why; the right one is used."""
    results = _results(chats)
    veg = results["veg"]
    reply = veg["details"]["turns"][0]["answer"]
    base = {"id": "veg", "metric": "faithfulness", "claim": None, "label": 1,
            "input_hash": veg["input_hash"], "turn": 2}
    rows = [{**base, "turn_text": reply}, {**base, "id": "tea", "turn_text": "Tea is red.",
                                           "input_hash": results["tea"]["input_hash"]},
            {**base, "turn": 3, "turn_text": reply}]
    (chats / LABELS_FILE).write_text("".join(json.dumps(r) + "\n" for r in rows))
    from localeval.labels.bound import checker, run_content

    read = read_labels(chats / LABELS_FILE, check=checker(run_content(chats)))
    assert list(read.labels) == [("veg#turn2", "faithfulness", None)]
    assert read.dropped == {"turn": 2}
    assert any("judged a conversation's turn" in n for n in read.notes(chats / LABELS_FILE))
