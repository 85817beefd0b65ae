"""`localeval generate` end to end with a rule judge (answers decided by each request's own
text, so they do not depend on the order requests arrive in): rows `run` reads, the corpus,
filters and their counts, the same bytes for a seed, a free rerun, resuming a killed run."""

from __future__ import annotations

import asyncio
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from localeval.config import Settings
from localeval.data import dataset
from localeval.generate.assemble import retype
from localeval.generate.pipeline import GenerateOptions, GenerationInterrupted, generate
from localeval.generate.store import paths_for
from localeval.generate.subjects import document_names, document_titles
from localeval.judge.interface import JudgeReply, JudgeRequest
from localeval.models.embed import HashEmbedder
from localeval.text import split_sentences

DOCS = Path(__file__).parent / "data" / "generate_docs"


def first_sentence(text: str) -> str:
    body = text.strip().splitlines()[-1]
    return re.split(r"(?<=[.。])\s*", body)[0]


class RuleJudge:
    """Drafts from the sentence a single-chunk prompt asks about: it is the answer, the
    subject its document's title, the question names the sentence's first words (a pair joins
    two such questions); a question rewritten to name its subject gets the name after its
    words ("… of Keeping Honeybees?"). A
    verdict is `verdict` for a statement its context holds, else 0 (a chunk's own sentence is
    supported as a quote without a request); every rating is `rating`.
    `jitter` sleeps a random while before each answer, so requests finish out of order;
    `stop_after` raises KeyboardInterrupt at that request (a killed run); `invent` adds a
    detail the chunk lacks to each answer; `rename_adds`: words a rewrite adds beside the name;
    asked to answer an "unanswerable" question, it says "none", or with `knows` the first
    sentence of the chunks it is shown."""

    name = "rule"

    def __init__(self, *, verdict: int = 1, rating: int = 1, jitter: bool = False,
                 stop_after: int | None = None, question: str | None = None,
                 invent: bool = False, prefix: str = "", covered: int = 1,
                 stated: bool = False, rename_adds: str = "", knows: bool = False,
                 agree: bool = True, crossed: bool = False) -> None:
        self.verdict, self.rating, self.jitter, self.invent = verdict, rating, jitter, invent
        self.stop_after, self.question, self.prefix = stop_after, question, prefix
        self.covered = covered  # the verdict on each part of a question the answer gives
        self.stated = stated  # the casual form states the fact (as the 1.5B judge often does)
        self.rename_adds = f" {rename_adds}" if rename_adds else ""  # words a rewrite adds
        self.knows = knows  # it answers an "unanswerable" question from its nearest chunks
        self.agree = agree  # its blind answer agrees with the reference answer
        self.crossed = crossed  # a kept row answers every "unanswerable" question
        self.fingerprint = (f"rule-{verdict}-{rating}-{invent}-{question}-{prefix}-"
                            f"{covered}-{stated}-{rename_adds}-{knows}-{agree}-"
                            f"{crossed}")  # the cache's key
        self.requests: list[JudgeRequest] = []

    def sampling_key(self) -> str:
        return "rule"

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        if self.stop_after is not None and len(self.requests) >= self.stop_after:
            raise KeyboardInterrupt
        self.requests.append(request)
        if self.jitter:
            await asyncio.sleep(random.random() / 200)
        text = request.messages[-1]["content"]
        schema = json.loads(request.answer_schema)
        if request.step == "generate_single":
            fact = re.split(r"\n(?:Sentence:|句子：)\n", text)[-1].split("\n\n")[0].strip()
            words = " ".join(fact.split()[:6]) if fact.isascii() else fact[:8]
            asked = f"Which fact is stated about {words}?" if fact.isascii() else \
                f"关于{words}说了什么？"
            title = re.findall(r"(?:Document:|文档标题：)\n(.+)", text)
            answer: dict[str, Any] = {
                "subject": title[0] if title else words,
                "question": self.question or self.prefix + asked,
                "answer": fact.rstrip(".。") + " in 1700." if self.invent else fact,
                "casual": fact if self.stated else
                f"Which fact about {words}?" if fact.isascii() else f"{words}是什么",
                "missing": "who paid", "unanswerable": f"Who paid for {words}?"}
        elif request.step == "generate_rename":  # the name put after the question's words
            name, asked = re.findall(r"\n(?:Name:|Question:|名称：|问题：)\n(.+)", text)[:2]
            answer = {"question": f"{asked.rstrip('?')} of {name}{self.rename_adds}?"
                      if asked.isascii() else name + asked}
        elif request.step == "generate_attempt":  # "none", or the texts' first sentence
            texts = re.sub(r"(?m)^#.*$", "", re.split(r"\n(?:Texts:|文字：)\n", text)[-1]).strip()
            said = [s for s in re.split(r"(?<=[.。])\s*", texts) if s]
            if request.sample_id.endswith(":blind"):  # a blind answer: the sentence asked of
                asked = re.split(r"\n(?:Question:|问题：)\n", text)[-1].split("\n")[0]
                hits = [s for s in said if (" ".join(s.split()[:6]) if s.isascii() else s[:8])
                        in asked]
                answer = {"answer": (hits or said or ["none"])[0]}
            else:
                answer = {"answer": said[0] if self.knows and said else "none"}
        elif request.step == "generate_agree":
            answer = {"verdict": int(self.agree)}
        elif request.step == "generate_answers":
            answer = {"verdict": int(self.crossed)}
        elif "parts" in schema.get("properties", {}):  # what the question asks: one part
            answer = {"count": 1, "parts": ["what is asked"]}
        elif "verdicts" in schema.get("properties", {}) and re.search(r"\n(?:Parts:|各项：)\n",
                                                                      text):
            n = schema["properties"]["verdicts"]["minItems"]
            answer = {"verdicts": [{"verdict": self.covered}] * n}
        elif "verdicts" in schema.get("properties", {}):
            n = schema["properties"]["verdicts"]["minItems"]
            context = text.split("Context:")[-1].split("Statements:")[0]
            said = re.findall(r"^\d+\. (.+)$", text.split("Statements:")[-1], re.MULTILINE)
            answer = {"verdicts": [{"verdict": self.verdict if s.rstrip(".。") in context else 0}
                                   for s in (said + [""] * n)[:n]]}
        else:
            answer = {"reason": "as rated", "rating": self.rating}  # a run's schema: a reason
            answer = {k: v for k, v in answer.items() if k in schema["properties"]}
        out = json.dumps(answer, ensure_ascii=False)
        return JudgeReply(text=out, finish_reason="stop", prompt_tokens=len(text) // 4,
                          prompt_tokens_processed=len(text) // 4, completion_tokens=len(out) // 4)

    def close(self) -> None:
        pass


CHEAP = ("not_a_question", "self_contained", "two_things", "unnamed_subject", "names_outside",
         "answer_in_question", "long_answer")


def cheap(counts: dict[str, int], but: str = "") -> int:
    """Candidates of a kind the filters before the judge's checks dropped (less `but`)."""
    return sum(counts[f] for f in CHEAP if f != but)


def run_gen(docs: list[Path], out: Path | None, judge: RuleJudge, **opts: Any) -> Any:
    settings = Settings(judge="fake", **opts.pop("settings", {}))
    overwrite = opts.pop("overwrite", False)
    options = GenerateOptions(**{"n": 3, "min_tokens": 10, **opts})
    return generate(docs, out, settings, options, judge=judge, embedder=HashEmbedder(),
                    overwrite=overwrite)


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in ("bees.md", "bridge.md", "tea.md"):
        (folder / name).write_text((DOCS / "en" / name).read_text("utf-8"), "utf-8")
    (folder / "熊猫.md").write_text((DOCS / "zh" / "熊猫.md").read_text("utf-8"), "utf-8")
    return folder


def test_rows_are_what_run_reads_and_name_corpus_chunks(docs: Path, tmp_path: Path) -> None:
    out = tmp_path / "set" / "testset.jsonl"
    result = run_gen([docs], out, RuleJudge(), n=8)
    corpus = {c["id"]: c for c in map(json.loads, paths_for(out)["corpus"].read_text(
        "utf-8").splitlines())}
    assert all(re.fullmatch(r"(bees|bridge|tea|熊猫)\.md#\d+", cid) for cid in corpus)
    loaded = dataset.load(out)
    assert not loaded.problems and len(loaded.samples) == len(result.rows) > 0
    kinds = {r.kind for r in result.rows}
    assert kinds == {"single", "pair", "unanswerable", "colloquial"}
    for row in result.rows:
        assert [corpus[i]["text"] for i in row.expected_ids] == row.reference_contexts
        assert row.language == corpus[(row.expected_ids or row.topic_ids)[0]]["language"]
        if row.kind == "unanswerable":
            assert row.expected_ids == [] and row.ground_truth.startswith(("The documents", "文档"))
        if row.kind == "colloquial":
            assert not row.question.endswith(("?", "？")) and row.parent
    pair = next(r for r in result.rows if r.kind == "pair")
    assert len(pair.expected_ids) == 2 and pair.link
    first, second = pair.reference_contexts  # its answer: a sentence of each, neither alone
    said = split_sentences(pair.ground_truth)
    assert len(said) == 2 and said[0] in first and said[1] in second
    assert pair.ground_truth not in first and pair.ground_truth not in second
    assert {r.language for r in result.rows} == {"en", "zh"}
    report = json.loads(paths_for(out)["report"].read_text("utf-8"))
    assert report["kept"] == len(result.rows)
    assert all(k["kept"] <= 8 for k in report["by_kind"].values())


def test_same_bytes_for_a_seed_whatever_the_timing(docs: Path, tmp_path: Path) -> None:
    a, b, c = (tmp_path / x / "t.jsonl" for x in "abc")
    run_gen([docs], a, RuleJudge(), settings={"no_cache": True})
    run_gen([docs], b, RuleJudge(jitter=True), settings={"no_cache": True, "parallel": 4})
    assert a.read_bytes() == b.read_bytes()
    assert paths_for(a)["corpus"].read_bytes() == paths_for(b)["corpus"].read_bytes()
    run_gen([docs], c, RuleJudge(), seed=7, settings={"no_cache": True})
    assert c.read_bytes() != a.read_bytes()  # another seed asks about other chunks


def test_a_rerun_is_served_by_the_answer_cache(docs: Path, tmp_path: Path) -> None:
    cache = {"cache": tmp_path / "cache.sqlite"}
    first = RuleJudge()
    run_gen([docs], tmp_path / "a.jsonl", first, settings=cache)
    again = RuleJudge()
    run_gen([docs], tmp_path / "b.jsonl", again, settings=cache)
    assert first.requests and again.requests == []
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()


def test_a_killed_generation_goes_on_where_it_stopped(docs: Path, tmp_path: Path) -> None:
    whole = tmp_path / "whole.jsonl"
    full = RuleJudge()
    run_gen([docs], whole, full, settings={"no_cache": True})
    out = tmp_path / "killed.jsonl"
    with pytest.raises(GenerationInterrupted, match="run the same command again"):
        run_gen([docs], out, RuleJudge(stop_after=30), settings={"no_cache": True})
    work = paths_for(out)["work"]
    assert work.name == "killed.work.jsonl"
    kept = work.read_text("utf-8").splitlines()[1:]
    assert kept and not out.exists()
    rest = RuleJudge()
    run_gen([docs], out, rest, settings={"no_cache": True})
    assert 0 < len(rest.requests) < len(full.requests)  # the finished candidates not asked again
    assert out.read_bytes() == whole.read_bytes() and not work.exists()


def test_filters_drop_and_are_counted(docs: Path, tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    result = run_gen([docs], out, RuleJudge(verdict=0, rating=3, invent=True))
    counts = result.report["by_kind"]
    assert counts["single"]["kept"] == 0 and counts["colloquial"]["kept"] == 0
    for kind, judged in (("unanswerable", "answerable"), ("pair", "unsupported")):
        mine = counts[kind]
        assert mine["kept"] == 0 and mine[judged] > 0  # every one the judge saw was dropped
        assert mine[judged] + cheap(mine) == mine["candidates"]
    dropped = [json.loads(x) for x in paths_for(out)["dropped"].read_text("utf-8").splitlines()]
    assert {d["dropped"] for d in dropped} >= {"unsupported", "answerable"}
    pointer = run_gen([docs], None, RuleJudge(question="What does the passage say?"))
    single = pointer.report["by_kind"]["single"]
    assert single["self_contained"] == single["candidates"] and single["kept"] == 0


def test_an_unanswerable_question_the_judge_answers_from_its_nearest_chunks_is_dropped(
        docs: Path) -> None:
    """rerank_relevancy rating every chunk 0 keeps the "unanswerable" questions; the judge's own
    answer from the nearest chunks drops them when faithfulness supports it (`knows`), and
    when it says "none" no faithfulness request is made for it."""
    declining = RuleJudge(rating=0)
    kept = run_gen([docs], None, declining, n=40, kinds="unanswerable",
                   settings={"no_cache": True})
    attempts = [r for r in declining.requests if r.step == "generate_attempt"]
    assert kept.report["by_kind"]["unanswerable"]["kept"] > 0 and attempts
    assert not any(r.sample_id.endswith(":attempt") for r in declining.requests
                   if r.step.startswith("faithfulness"))
    knowing = RuleJudge(rating=0, knows=True)
    dropped = run_gen([docs], None, knowing, n=40, kinds="unanswerable",
                      settings={"no_cache": True})
    counts = dropped.report["by_kind"]["unanswerable"]
    assert counts["kept"] == 0 and counts["answerable"] > 0
    assert any(r.sample_id.endswith(":attempt") for r in knowing.requests
               if r.step.startswith("faithfulness"))


def test_a_judge_failure_in_a_check_is_counted_named_and_the_others_go_on(docs: Path,
                                                                          tmp_path: Path) -> None:
    """The judge's answer to an "unanswerable" question cut at max_tokens: that candidate is
    dropped as judge_error, its line in dropped.jsonl says what to do (raise --max-tokens),
    and the other candidates are still made — its own draft's single and colloquial
    questions too."""
    failing = RuleJudge(rating=0)
    failing.fingerprint += "-cut"

    async def complete(request: JudgeRequest) -> JudgeReply:
        reply = await RuleJudge.complete(failing, request)
        if request.step == "generate_attempt" and not request.sample_id.endswith(":blind"):
            reply = reply.model_copy(update={"finish_reason": "length"})  # not a verification
        return reply

    failing.complete = complete  # type: ignore[method-assign]
    out = tmp_path / "t.jsonl"
    result = run_gen([docs], out, failing, n=40, settings={"no_cache": True})
    counts = result.report["by_kind"]
    assert counts["unanswerable"]["judge_error"] > 0 and counts["unanswerable"]["kept"] == 0
    assert counts["pair"]["kept"] > 0  # pairs never ask the failing step
    for kind in ("single", "colloquial"):
        assert counts[kind]["judge_error"] == 0 and counts[kind]["kept"] > 0
    dropped = [json.loads(x) for x in paths_for(out)["dropped"].read_text("utf-8").splitlines()]
    errors = [d for d in dropped if d["dropped"] == "judge_error"]
    assert errors and all("raise --max-tokens" in str(d["detail"]) for d in errors)


def test_near_duplicates_are_dropped(docs: Path, tmp_path: Path) -> None:
    english = sorted(docs.glob("*.md"))[:3]  # the English ones: a duplicate is within a language
    assert all(p.name.isascii() for p in english)
    result = run_gen(english, None, RuleJudge(question="What was said of the bridge of bees "
                                                       "and tea?"), kinds="single")
    single = result.report["by_kind"]["single"]
    assert single["kept"] == 1 and single["duplicate"] > 0
    assert single["duplicate"] == single["candidates"] - 1 - cheap(single)


def test_bad_inputs_are_named_and_the_others_go_on(docs: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from localeval.cli import main

    (docs / "blob.txt").write_bytes(b"\x00\x01binary")
    (docs / "empty.md").write_text("   \n", "utf-8")
    (docs / "short.md").write_text("Too short.", "utf-8")
    (docs / "scan.pdf").write_bytes(b"%PDF-1.4 not really")
    (tmp_path / "nothing").mkdir()
    chunks = tmp_path / "chunks.jsonl"
    chunks.write_text('{"id": "c1", "text": "The Kestrel Bay ferry began in 1923 with a steam '
                      'launch called the Puffin, carrying forty passengers."}\nnot json\n', "utf-8")
    answers = tmp_path / "answers.json"
    answers.write_text("[]", "utf-8")
    code = main(["generate", str(docs), str(chunks), str(tmp_path / "nothing"), "--out",
                 str(tmp_path / "t.jsonl"), "--judge", "fake", "--fake-answers", str(answers),
                 "--n", "1", "--quiet", "--estimate"])
    err = capsys.readouterr().err
    assert code == 0
    for needle in ("blob.txt: a binary file", "empty.md: empty", "short.md: too short",
                   "chunks.jsonl line 2: not JSON", "nothing: no .txt"):
        assert needle in err, needle
    try:
        import pypdf  # noqa: F401
    except ImportError:
        assert "scan.pdf: a PDF needs pypdf: pip install 'localeval[pdf]'" in err
    else:
        assert "scan.pdf: unreadable PDF" in err
    assert main(["generate", str(tmp_path / "nothing"), "--out", str(tmp_path / "x.jsonl"),
                 "--quiet"]) == 2
    assert "no document to generate from" in capsys.readouterr().err


def test_estimate_counts_the_requests_without_a_judge(docs: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from localeval.cli import main

    answers = tmp_path / "answers.json"
    answers.write_text("[]", "utf-8")
    code = main(["generate", str(docs), "--judge", "fake", "--fake-answers", str(answers),
                 "--n", "2", "--estimate", "--json", "--no-cache"])
    found = json.loads(capsys.readouterr().out)
    singles = found["steps"]["generate_single"]["requests"]
    assert code == 0
    # placeholders keep nothing, so all is drafted: one draft per sentence asked about, which
    # the pairs share with the single tasks
    assert 0 < singles <= found["samples"]
    assert found["total"]["prompt_tokens"] > 0
    # a range: the drafts alone, and every draft checked in full (placeholder drafts, which a
    # rule drops, still count their checks: support, parts and coverage, the unanswerable one)
    assert found["total"]["at_least"] == singles < found["total"]["requests"]
    checks = {"faithfulness_verdicts", "answer_relevance_parts", "answer_relevance_coverage",
              "rerank_relevancy_rating"}
    assert checks <= set(found["steps"])
    assert all(found["steps"][s]["count"] == "at most" for s in checks)


def test_api_returns_the_rows(docs: Path) -> None:
    import localeval

    result = localeval.generate_testset([docs], n=1, kinds="single", judge=RuleJudge(),
                                embedder=HashEmbedder(), no_cache=True)
    assert [r["kind"] for r in result.rows] == ["single"]
    assert result.rows[0]["expected_ids"][0] in {c["id"] for c in result.corpus}


def test_an_unanswerable_question_equal_to_the_answered_one_is_dropped(docs: Path) -> None:
    same = RuleJudge()
    same.fingerprint += "-same"

    async def complete(request: JudgeRequest) -> JudgeReply:
        reply = await RuleJudge.complete(same, request)
        if request.step == "generate_single":  # the unanswerable question = the question
            data = json.loads(reply.text)
            data["unanswerable"] = data["question"]
            reply = reply.model_copy(update={"text": json.dumps(data, ensure_ascii=False)})
        return reply

    same.complete = complete  # type: ignore[method-assign]
    result = run_gen([docs], None, same, kinds="unanswerable,single,colloquial")
    unans = result.report["by_kind"]["unanswerable"]
    assert unans["kept"] == 0 and unans["answerable"] > 0
    assert unans["answerable"] == unans["candidates"] - cheap(unans)
    assert result.report["by_kind"]["single"]["kept"] > 0


def test_a_colloquial_row_goes_with_its_single_question(docs: Path) -> None:
    result = run_gen([docs], None, RuleJudge(prefix="According to the passage, "),
                     kinds="single,colloquial")
    colloquial = result.report["by_kind"]["colloquial"]
    assert colloquial["kept"] == 0 and colloquial["self_contained"] > 0
    assert colloquial["self_contained"] == colloquial["candidates"] - cheap(colloquial,
                                                                            "self_contained")


def test_drafting_stops_at_n_kept_or_at_max_drafts(docs: Path) -> None:
    few = RuleJudge()
    some = run_gen([docs], None, few, n=1, kinds="single", settings={"no_cache": True})
    everything = run_gen([docs], None, RuleJudge(), n=50, kinds="single",
                         settings={"no_cache": True})
    drafted = some.report["candidates_drafted"]
    assert some.report["by_kind"]["single"]["kept"] == 1
    assert 0 < drafted < everything.report["candidates_drafted"]  # stopped once enough kept
    capped = run_gen([docs], None, RuleJudge(), n=50, kinds="single", max_drafts=5,
                     settings={"no_cache": True})
    assert everything.report["candidates_drafted"] > 8
    assert capped.report["candidates_drafted"] == 8  # one batch of eight: past 5 it stops


def test_an_answer_that_misses_part_of_its_question_is_dropped(docs: Path) -> None:
    result = run_gen([docs], None, RuleJudge(covered=0))
    counts = result.report["by_kind"]
    for kind in ("single", "pair", "colloquial"):
        mine = counts[kind]
        assert mine["kept"] == 0 and mine["unanswered"] > 0, kind
    single = counts["single"]
    assert single["unanswered"] == single["candidates"] - cheap(single) - single["unsupported"]
    assert counts["unanswerable"]["kept"] > 0  # its check is another one


def test_an_unanswerable_question_a_chunk_answers_in_part_is_dropped(docs: Path) -> None:
    kept = run_gen([docs], None, RuleJudge(rating=1), kinds="unanswerable")
    assert kept.report["by_kind"]["unanswerable"]["kept"] > 0
    part = run_gen([docs], None, RuleJudge(rating=2), kinds="unanswerable")
    unans = part.report["by_kind"]["unanswerable"]
    assert unans["kept"] == 0 and unans["answerable"] == unans["candidates"] - cheap(unans)


def test_a_colloquial_draft_that_states_its_answer_gives_way_to_its_question_retyped(
        docs: Path) -> None:
    result = run_gen([docs], None, RuleJudge(stated=True), n=8, kinds="single,colloquial")
    counts = result.report["by_kind"]["colloquial"]
    singles = {r.id: r for r in result.rows if r.kind == "single"}
    colloquial = [r for r in result.rows if r.kind == "colloquial"]
    assert colloquial and counts["retyped"] == counts["kept"] == len(colloquial)
    for row in colloquial:
        single = singles[row.parent]
        assert row.retyped in ("not_a_question", "answer_in_question", "long_answer")
        assert row.question == retype(single.question, row.id.split(":", 1)[1], row.language)
        assert row.ground_truth == single.ground_truth
        assert row.expected_ids == single.expected_ids
        assert row.ground_truth not in row.question  # it asks; it never states its answer
    # with a casual form that asks, a row is retyped only when its casual form names no
    # subject and its single question was rewritten to name one
    plain = run_gen([docs], None, RuleJudge(), n=8, kinds="single,colloquial")
    assert {r.retyped for r in plain.rows if r.kind == "colloquial"} <= {None, "unnamed_subject"}


def test_a_short_form_of_a_documents_name_is_asked_in_full(docs: Path) -> None:
    result = run_gen([docs], None, RuleJudge(question="Who designed the bridge?"),
                     kinds="single")
    bridge = [r.question for r in result.rows if r.source.endswith("bridge.md")]
    assert bridge == ["Who designed the Severn Gate Bridge?"]
    assert result.report["by_kind"]["single"]["duplicate"] > 0


def test_a_question_naming_no_subject_is_rewritten_to_name_it(docs: Path) -> None:
    """A draft whose question names none of its document's subject terms is rewritten by the
    judge to hold its subject's name (one request each, only for such questions); a rewrite
    that adds more than the name (two words the question lacks) is refused, and its question
    dropped as unnamed_subject."""
    judge = RuleJudge()
    result = run_gen([docs], None, judge, n=40, kinds="single", settings={"no_cache": True})
    asked = [r for r in judge.requests if r.step == "generate_rename"]
    renamed = [r for r in result.rows if " of " in r.question]
    assert asked and renamed
    assert any(r.question.endswith(" of Keeping Honeybees?") for r in renamed)
    drafts = [r for r in judge.requests if r.step == "generate_single"]
    named_already = [r for r in drafts if "Severn" in " ".join(  # its question's 6 words
        r.messages[-1]["content"].split("Sentence:")[-1].split()[:6])]
    assert named_already
    assert not any("Severn" in r.messages[-1]["content"].split("Question:")[-1].split(
        "Write")[0] for r in asked)
    told = RuleJudge(rename_adds="in summer 1889")
    refused = run_gen([docs], None, told, n=40, kinds="single", settings={"no_cache": True})
    assert not any("1889" in r.question for r in refused.rows)
    assert refused.report["by_kind"]["single"]["unnamed_subject"] > \
        result.report["by_kind"]["single"]["unnamed_subject"]


def test_a_question_naming_only_another_name_of_its_document_is_rewritten(
        tmp_path: Path) -> None:
    """In a document with a name, a question that passes every filter but names only another
    name of its body ("the Sun": which comet?) is rewritten to hold the document's name; one
    naming the document is not sent to the judge."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "observatory.md").write_text((DOCS / "en" / "observatory.md").read_text("utf-8"),
                                           "utf-8")
    comet = RuleJudge(question="When did the comet pass closest to the Sun?")
    result = run_gen([folder], None, comet, kinds="single", settings={"no_cache": True})
    assert [r.question for r in result.rows] == [
        "When did the comet pass closest to the Sun of Hallam Hill Observatory?"]
    named = RuleJudge(question="When did the Hallam Hill Observatory open?")
    run_gen([folder], None, named, kinds="single", settings={"no_cache": True})
    assert not [r for r in named.requests if r.step == "generate_rename"
                and "Observatory open?" in r.messages[-1]["content"]]


def test_every_draft_is_shown_its_documents_title(docs: Path) -> None:
    """A chunk past the first lacks the heading that names its subject: the draft prompt
    shows the document's title (its heading; the Chinese document without a heading, its
    name) so that the question can name it."""
    judge = RuleJudge()
    run_gen([docs], None, judge, kinds="single", n=40, chunk_tokens=64, per_chunk=3,
            settings={"no_cache": True})
    drafts = [r.messages[-1]["content"] for r in judge.requests if r.step == "generate_single"]
    bridge = [t for t in drafts if "Construction took four years" in t.split("Sentence:")[-1]]
    assert bridge and all("Document:\nThe Severn Gate Bridge\n\nText:\n" in t for t in bridge)
    assert not any("# The Severn Gate Bridge" in t for t in bridge)  # a later chunk
    panda = [t for t in drafts if "文字：" in t and "大熊猫的食物" in t.split("句子：")[-1]]
    assert panda and all("文档标题：\n卧龙大熊猫保护区\n\n文字：" in t for t in panda)


def test_a_document_without_heading_is_titled_by_its_name() -> None:
    texts = {"cafe.txt": "海湾书店开在厦门市中山路上。海湾书店每天上午十点开门。",
             "notes.txt": "the ferry sails four times a day. fares rose in 2020.",
             "bridge.md": "# The Severn Gate Bridge\n\nIt opened in 1998."}
    assert document_titles(texts, document_names(texts)) == {
        "cafe.txt": "海湾书店", "bridge.md": "The Severn Gate Bridge"}


def test_an_unanswerable_question_is_rated_with_and_without_reasons(docs: Path) -> None:
    """The check that no chunk answers an "unanswerable" question asks rerank_relevancy twice,
    as a run asks it (a reason before each rating) and bare: the 1.5B judge misses answers
    either way, not the same ones; a chunk either rates as answering drops the question."""
    judge = RuleJudge()
    run_gen([docs], None, judge, kinds="unanswerable", settings={"no_cache": True})
    rated = [json.loads(r.answer_schema) for r in judge.requests
             if r.step == "rerank_relevancy_rating"]
    reasoned = sum("reason" in s["properties"] for s in rated)
    assert rated and reasoned * 2 == len(rated)


def test_a_second_generation_into_the_same_out_is_refused_at_once(docs: Path,
                                                                   tmp_path: Path) -> None:
    """Issue 41 item 9: two generations into one --out both reported success."""
    import os

    from localeval.errors import UsageError
    from localeval.results.folder import hold_lock

    out = tmp_path / "t.jsonl"
    held = hold_lock(paths_for(out)["lock"], "held (pid {pid})")
    try:
        judge = RuleJudge()
        with pytest.raises(UsageError, match="being written by another generation"):
            run_gen([docs], out, judge)
        assert judge.requests == [] and not out.exists()
    finally:
        assert held is not None
        os.close(held)
    run_gen([docs], out, RuleJudge())  # the lock is gone with its holder
    assert out.exists()


def test_an_out_that_is_a_folder_is_refused_before_any_judging(docs: Path,
                                                               tmp_path: Path) -> None:
    from localeval.errors import UsageError

    judge = RuleJudge()
    with pytest.raises(UsageError, match="is a folder"):
        run_gen([docs], tmp_path, judge)
    assert judge.requests == []


def test_a_killed_generation_leaves_the_old_set_beside_its_own_corpus(docs: Path,
                                                                      tmp_path: Path) -> None:
    """Issue 41 item 9: a second run killed early left the old test set beside a new corpus."""
    out = tmp_path / "t.jsonl"
    run_gen([docs], out, RuleJudge(), settings={"no_cache": True})
    old_set, old_corpus = out.read_bytes(), paths_for(out)["corpus"].read_bytes()
    (docs / "bees.md").unlink()
    with pytest.raises(GenerationInterrupted):
        run_gen([docs], out, RuleJudge(stop_after=5), settings={"no_cache": True},
                overwrite=True)
    assert out.read_bytes() == old_set
    assert paths_for(out)["corpus"].read_bytes() == old_corpus


def test_a_work_file_torn_inside_a_character_is_read_past(docs: Path, tmp_path: Path) -> None:
    """Low item of issue 41: a torn UTF-8 character in the work file crashed the next start."""
    out = tmp_path / "t.jsonl"
    with pytest.raises(GenerationInterrupted):
        run_gen([docs], out, RuleJudge(stop_after=30), settings={"no_cache": True})
    work = paths_for(out)["work"]
    with work.open("ab") as fh:
        fh.write('{"task": "single:熊'.encode()[:-1])
    run_gen([docs], out, RuleJudge(), settings={"no_cache": True})
    assert out.exists() and not work.exists()


def test_a_work_file_line_that_is_no_record_is_drafted_again(docs: Path, tmp_path: Path) -> None:
    """A line edited by hand (valid JSON, not a task's record) was a pydantic traceback."""
    whole = tmp_path / "whole.jsonl"
    run_gen([docs], whole, RuleJudge(), settings={"no_cache": True})
    out = tmp_path / "e.jsonl"
    with pytest.raises(GenerationInterrupted):
        run_gen([docs], out, RuleJudge(stop_after=30), settings={"no_cache": True})
    work = paths_for(out)["work"]
    lines = work.read_text("utf-8").splitlines()
    first = json.loads(lines[1])
    lines[1] = json.dumps({"task": first["task"], "draft": "not a draft"})
    work.write_text("\n".join(lines) + "\n", encoding="utf-8")
    run_gen([docs], out, RuleJudge(), settings={"no_cache": True})
    assert out.read_bytes() == whole.read_bytes() and not work.exists()


def test_a_non_utf8_file_name_and_a_surrogate_chunk_id_are_written_escaped(
        docs: Path, tmp_path: Path) -> None:
    """Issue 41 item 10: both crashed `generate` with a traceback and left a .tmp file."""
    import os

    named = os.path.join(os.fsencode(docs), b"caf\xe9.md")
    with open(named, "wb") as fh:
        fh.write((DOCS / "en" / "tea.md").read_bytes())
    chunks = tmp_path / "chunks.jsonl"
    text = (DOCS / "en" / "bees.md").read_text("utf-8")
    chunks.write_text(json.dumps({"id": "c\ud800", "text": text}) + "\n", "utf-8")
    out = tmp_path / "t.jsonl"
    run_gen([docs, chunks], out, RuleJudge(), settings={"no_cache": True})
    ids = [json.loads(line)["id"] for line in paths_for(out)["corpus"].read_text(
        "utf-8").splitlines()]
    assert any(i.startswith("caf\\xe9.md#") for i in ids) and "c\\ud800" in ids
    assert not list(tmp_path.glob("*.tmp"))


def test_files_not_read_and_links_out_of_the_folder_are_named(docs: Path, tmp_path: Path) -> None:
    """Issue 41 item 15 and a Low item: a .docx was ignored silently, and a link to a file outside
    the folder (passwd.txt -> /etc/passwd) landed in the corpus."""
    from localeval.generate.documents import read_documents

    (docs / "notes.docx").write_bytes(b"PK\x03\x04")
    (docs / "photo.png").write_bytes(b"\x89PNG")
    secret = tmp_path / "secret.txt"
    secret.write_text("A secret outside the folder. " * 20, "utf-8")
    (docs / "passwd.txt").symlink_to(secret)
    read = read_documents([docs])
    assert "passwd.txt" not in {d.source for d in read.documents}
    assert any("passwd.txt" in p and "outside" in p for p in read.problems)
    assert any("2 file(s) not read (.docx, .png)" in p for p in read.problems)


def test_a_generation_that_kept_nothing_does_not_exit_0(docs: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A Low item of issue 41: every judge call failed and `generate` exited 0."""
    from localeval.cli import main

    answers = tmp_path / "answers.json"
    answers.write_text("[]", "utf-8")  # the fake judge has no answer: every request fails
    code = main(["generate", str(docs), "--out", str(tmp_path / "t.jsonl"), "--judge", "fake",
                 "--fake-answers", str(answers), "--n", "1", "--quiet", "--no-cache"])
    assert code == 1
    assert "no question kept" in capsys.readouterr().err
