"""Issue 52 items 1-3: the kept rows cover every document and language by the coverage plan;
every kept answerable row is verified blind by the judge from the corpus's top BM25 chunks; an
"unanswerable" row a kept row answers is dropped; a `bridge` row needs both its chunks."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from localeval.generate.coverage import quotas, share
from localeval.generate.store import paths_for
from tests.test_generate import DOCS, RuleJudge, run_gen


def test_the_plan_gives_every_language_and_document_a_place() -> None:
    docs = {("big.md", "en"): 9, ("small.md", "en"): 1, ("茶园.md", "zh"): 2}
    assert quotas(docs, 3) == {("big.md", "en"): 1, ("small.md", "en"): 1, ("茶园.md", "zh"): 1}
    ten = quotas(docs, 10)
    assert sum(ten.values()) == 10 and ten[("茶园.md", "zh")] >= 2
    assert ten[("big.md", "en")] > ten[("small.md", "en")] >= 1
    assert quotas(docs, 2) == {("big.md", "en"): 1, ("small.md", "en"): 0, ("茶园.md", "zh"): 1}
    assert share({"a": 1, "b": 1}, 1) == {"a": 1, "b": 0}  # ties: key order


@pytest.fixture
def lopsided(tmp_path: Path) -> Path:
    """Four English documents and one Chinese one: the Chinese one must not be crowded out."""
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in ("bees.md", "bridge.md", "tea.md", "glacier.md"):
        (folder / name).write_text((DOCS / "en" / name).read_text("utf-8"), "utf-8")
    (folder / "茶园.md").write_text((DOCS / "zh" / "茶园.md").read_text("utf-8"), "utf-8")
    return folder


def test_rows_are_spread_over_documents_and_languages(lopsided: Path, tmp_path: Path) -> None:
    out = tmp_path / "set" / "t.jsonl"
    made = run_gen([lopsided], out, RuleJudge(), n=5, settings={"no_cache": True})
    for kind in ("single", "colloquial"):  # (the rule judge's unanswerable questions of
        # a Chinese chunk are English: not worded as a question, dropped)
        mine = [r for r in made.rows if r.kind == kind]
        assert len(mine) == 5, kind
        assert {r.source for r in mine} == {"bees.md", "bridge.md", "tea.md", "glacier.md",
                                            "茶园.md"}, kind
    report = json.loads(paths_for(out)["report"].read_text("utf-8"))
    lines = {(c["document"], c["language"]): c for c in report["coverage"]}
    assert lines[("茶园.md", "zh")]["kinds"]["single"]["kept"] >= 1
    assert all(set(c["kinds"]["single"]) == {"planned", "candidates", "kept", "dropped"}
               for c in report["coverage"])
    dropped = [json.loads(x) for x in paths_for(out)["dropped"].read_text("utf-8").splitlines()]
    surplus = [d for d in dropped if d["dropped"] == "surplus" and d["kind"] == "single"]
    # a surplus row is one of a document whose planned places are filled
    kept = {}
    for r in made.rows:
        if r.kind == "single":
            kept[r.source] = kept.get(r.source, 0) + 1
    planned = {c["document"]: c["kinds"]["single"]["planned"] for c in report["coverage"]}
    assert all(kept[d["source"]] >= planned[d["source"]] for d in surplus)


def test_the_closing_output_names_each_document(lopsided: Path, tmp_path: Path) -> None:
    from localeval.cli.generate import report_table

    made = run_gen([lopsided], tmp_path / "t.jsonl", RuleJudge(), n=5,
                   settings={"no_cache": True})
    made.report["seconds"] = 12.0
    text = report_table(made.report)
    assert "茶园.md" in text and "glacier.md" in text and "kept/planned" in text
    assert max(len(line) for line in text.splitlines()) <= 100


def test_a_row_the_judge_answers_otherwise_blind_is_unverified(lopsided: Path,
                                                              tmp_path: Path) -> None:
    judge = RuleJudge(agree=False)
    out = tmp_path / "t.jsonl"
    made = run_gen([lopsided], out, judge, n=3, settings={"no_cache": True})
    assert not [r for r in made.rows if r.kind in ("single", "pair", "colloquial")]
    dropped = [json.loads(x) for x in paths_for(out)["dropped"].read_text("utf-8").splitlines()]
    singles = [d for d in dropped if d["kind"] == "single" and d["dropped"] == "unverified"]
    assert singles and all(d["detail"]["why"] == "another answer" for d in singles)
    assert all(len(d["detail"]["from"]) >= 1 for d in singles)
    # the judge answered from the corpus's top chunks, never shown the reference answer
    corpus = {c["id"]: c["text"] for c in map(json.loads, paths_for(out)["corpus"].read_text(
        "utf-8").splitlines())}
    first = singles[0]
    top = first["detail"]["from"]
    assert 1 < len(top) <= 3 and first["expected_ids"][0] in top  # BM25 finds its chunk ...
    assert {corpus[i] for i in top} != {first["reference_contexts"][0]}  # ... among others
    blind = [r.messages[-1]["content"] for r in judge.requests
             if r.step == "generate_attempt" and r.sample_id.endswith(":blind")
             and first["question"] in r.messages[-1]["content"]]
    assert blind and all(corpus[i] in blind[0] for i in top)
    agree = [r for r in judge.requests if r.step == "generate_agree"]
    assert agree and all("Reference answer:" in r.messages[-1]["content"]
                         or "参考答案" in r.messages[-1]["content"] for r in agree)


def test_an_unanswerable_row_a_kept_row_answers_is_dropped(lopsided: Path,
                                                           tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    made = run_gen([lopsided], out, RuleJudge(crossed=True), n=3, settings={"no_cache": True})
    assert not [r for r in made.rows if r.kind == "unanswerable"]
    assert [r for r in made.rows if r.kind == "single"]
    dropped = [json.loads(x) for x in paths_for(out)["dropped"].read_text("utf-8").splitlines()]
    crossed = [d for d in dropped if d["kind"] == "unanswerable"
               and isinstance(d["detail"], dict) and "a kept row answers it" in d["detail"]]
    assert crossed
    kept = {r.id for r in made.rows}
    assert all(d["detail"]["a kept row answers it"] in kept for d in crossed)


FILM = ("# Heat (1995 film)\n\nHeat is a 1995 American crime film written and directed by "
        "Michael Mann. It follows a group of professional bank robbers in Los Angeles and the "
        "detective who hunts them.\n")
DIRECTOR = ("# Michael Mann\n\nMichael Mann was born on February 5, 1943, in Chicago. He studied "
            "at the London Film School and later wrote for television before directing "
            "feature films.\n")
LINKED_BACK = DIRECTOR.replace("feature films.", "feature films such as Heat.")
"""The director's page naming the film: alone it may tell who "the director of Heat" is (and
it makes a second bridge, from the director's page to the film's)."""
FILM_TO_DIRECTOR = "bridge:heat.md#1+mann.md#1"


class BridgeJudge(RuleJudge):
    """RuleJudge, and a bridge drafted as the director's birth year asked through the film; its
    blind answer is given only when both texts are shown (`alone`: also from the second text
    alone; `names`: the question writes the entity by a part of its name the clue cannot
    replace; `loose`: the role is a description of the film, not a role)."""

    def __init__(self, *, alone: bool = False, names: bool = False, loose: bool = False,
                 **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.alone, self.names, self.loose = alone, names, loose
        self.fingerprint += f"-bridge-{alone}-{names}-{loose}"

    async def complete(self, request):  # type: ignore[no-untyped-def]
        from localeval.judge.interface import JudgeReply

        text = request.messages[-1]["content"]
        if request.step == "generate_clue":
            answer = {"role": "man who made this crime film" if self.loose
                      else "director"}
        elif request.step == "generate_bridge":
            who = "Mann" if self.names else "Michael Mann"
            answer = {"question": f"In which year was {who} born?",
                      "answer": "He was born in 1943."}
        elif request.step == "generate_attempt" and request.sample_id.startswith("bridge:"):
            both = "bank robbers" in text and "Chicago" in text
            answer = {"answer": "He was born in 1943." if both or (
                self.alone and "Chicago" in text) else "none"}
        else:
            return await super().complete(request)
        self.requests.append(request)
        out = json.dumps(answer)
        return JudgeReply(text=out, finish_reason="stop", prompt_tokens=len(text) // 4,
                          prompt_tokens_processed=len(text) // 4, completion_tokens=len(out) // 4)


def folder_of(tmp_path: Path, director: str) -> Path:
    folder = tmp_path / "linked"
    folder.mkdir()
    (folder / "heat.md").write_text(FILM, "utf-8")
    (folder / "mann.md").write_text(director, "utf-8")
    return folder


@pytest.fixture
def linked(tmp_path: Path) -> Path:
    return folder_of(tmp_path, DIRECTOR)


@pytest.fixture
def linked_back(tmp_path: Path) -> Path:
    return folder_of(tmp_path, LINKED_BACK)


def test_a_bridge_needs_both_chunks(linked: Path, tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    made = run_gen([linked], out, BridgeJudge(), n=2, kinds="bridge",
                   settings={"no_cache": True})
    assert [r.kind for r in made.rows] == ["bridge"]
    row = made.rows[0]
    assert row.expected_ids == ["heat.md#1", "mann.md#1"]
    assert row.link == "entity: Michael Mann"
    assert row.question == "In which year was the director of Heat born?"
    assert row.ground_truth == "He was born in 1943."


def test_a_bridge_whose_clue_is_not_the_link_is_dropped(linked: Path, tmp_path: Path) -> None:
    """A role of more than five words is a description, not the link; the judge is not asked
    to check the draft blind."""
    out = tmp_path / "t.jsonl"
    judge = BridgeJudge(loose=True)
    made = run_gen([linked], out, judge, n=2, kinds="bridge", settings={"no_cache": True})
    assert made.rows == []
    dropped = [json.loads(x) for x in paths_for(out)["dropped"].read_text("utf-8").splitlines()]
    assert [(d["dropped"], d["detail"]["subject"]) for d in dropped] == [("loose_clue", "Heat")]
    assert not [r for r in judge.requests if r.step == "generate_attempt"
                and r.sample_id.startswith("bridge:")]


@pytest.mark.parametrize(("question", "entity", "clue", "out"), [
    ("In which year was Leslie Bricusse born?", "Leslie Bricusse",
     "the lyricist of the musical Doctor Dolittle",
     "In which year was the lyricist of the musical Doctor Dolittle born?"),
    ("When was the Fuji-Q Highland opened?", "Fuji-Q Highland", "the park of Eejanaika",
     "When was the park of Eejanaika opened?"),
    ("Robert Dudley died when?", "Robert Dudley, 1st Earl of Leicester",
     "the patron of Sir Roger Williams", "The patron of Sir Roger Williams died when?"),
    ("张艺谋出生在哪座城市？", "张艺谋", "英雄的导演", "英雄的导演出生在哪座城市？"),
    ("Where was Mann born?", "Michael Mann", "the director of Heat", "Where was Mann born?"),
    ("Where was Michael Mann born?", "Michael Mann", "Michael Mann of Heat",
     "Where was Michael Mann born?"),
])
def test_the_entity_s_name_is_written_as_its_clue(question: str, entity: str, clue: str,
                                                  out: str) -> None:
    from localeval.generate.drafting import by_clue

    assert by_clue(question, entity, clue) == out


@pytest.mark.parametrize(("mood", "why"), [({"alone": True}, "one_chunk_suffices"),
                                           ({"names": True}, "one_chunk_suffices"),
                                           ({"agree": False}, "unverified")])
def test_a_bridge_one_chunk_answers_or_the_judge_disputes_is_dropped(
        linked_back: Path, tmp_path: Path, mood: dict, why: str) -> None:
    out = tmp_path / "t.jsonl"
    judge = BridgeJudge(**mood)
    made = run_gen([linked_back], out, judge, n=2, kinds="bridge", settings={"no_cache": True})
    assert [r.id for r in made.rows if r.id == FILM_TO_DIRECTOR] == []
    dropped = [json.loads(x) for x in paths_for(out)["dropped"].read_text("utf-8").splitlines()]
    assert [d["dropped"] for d in dropped if d["task"] == FILM_TO_DIRECTOR] == [why]


def test_a_second_chunk_that_never_names_the_first_s_subject_is_not_asked_alone(
        linked: Path, tmp_path: Path) -> None:
    """The director's page never writes "Heat": alone it cannot tell who "the director of
    Heat" is, whatever a judge shown only that page answers (here: his birth year)."""
    out = tmp_path / "t.jsonl"
    judge = BridgeJudge(alone=True)
    made = run_gen([linked], out, judge, n=2, kinds="bridge", settings={"no_cache": True})
    assert [r.kind for r in made.rows] == ["bridge"]
    shown = [r.messages[-1]["content"] for r in judge.requests
             if r.step == "generate_attempt" and r.sample_id.startswith("bridge:")]
    assert [(("bank robbers" in t), ("Chicago" in t)) for t in shown] == [(True, True),
                                                                            (True, False)]


def test_the_bridge_is_checked_from_each_chunk_alone_and_both(linked_back: Path,
                                                               tmp_path: Path) -> None:
    judge = BridgeJudge()
    run_gen([linked_back], tmp_path / "t.jsonl", judge, n=2, kinds="bridge",
            settings={"no_cache": True})
    shown = [r.messages[-1]["content"] for r in judge.requests
             if r.step == "generate_attempt" and r.sample_id.startswith(FILM_TO_DIRECTOR)]
    texts = [(("bank robbers" in t), ("Chicago" in t)) for t in shown]
    assert texts == [(True, True), (True, False), (False, True)]
    for step, shown, hidden in (("generate_clue", "bank robbers", "Chicago"),
                                ("generate_bridge", "Chicago", "bank robbers")):
        drafted = [r.messages[-1]["content"] for r in judge.requests if r.step == step
                   and r.sample_id == FILM_TO_DIRECTOR]
        assert len(drafted) == 1 and "Michael Mann" in drafted[0]
        assert shown in drafted[0] and hidden not in drafted[0]  # each step sees one text
    assert re.search(r'Subject: "Heat"', drafted_clue(judge))


def drafted_clue(judge: BridgeJudge) -> str:
    return next(r.messages[-1]["content"] for r in judge.requests
                if r.step == "generate_clue" and r.sample_id == FILM_TO_DIRECTOR)
