"""`run --estimate`: request counts equal to a real run's (fake judge), cached requests served,
no model load once the machine is calibrated, the engine's schedule replayed, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from localeval.config import Settings
from localeval.estimate import calibrate
from localeval.estimate.dryrun import placeholder
from localeval.estimate.simulate import Speed, replay
from localeval.estimate.sizing import count_kind, estimate_run
from localeval.estimate.workload import CharVocab, answer_work, build
from localeval.judge.fake import FakeJudge
from localeval.judge.interface import JudgeReply, JudgeRequest
from localeval.judge.schemas import ALL_SCHEMAS, checked_verdicts, question_list, schema_json
from localeval.models.embed import HashEmbedder
from localeval.runner import run
from tests.conftest import EXAMPLE, model_path

LONG = " ".join(f"Sentence {i} says the river station opened in {1900 + i}." for i in range(80))
ROWS = [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines()] + [
    {"id": "long", "question": "When did the station open?", "contexts": [LONG],
     "answer": "The station opened in 1905. It closed in 1950. Who knows why? Trains ran."},
    {"id": "short", "question": "Capital of France?", "contexts": ["Paris is the capital."],
     "answer": "Paris."},
]
METRICS = ["faithfulness", "answer_relevance", "context_precision", "context_recall"]


class SchemaJudge(FakeJudge):
    """A fake judge answering each request by its schema with the *first* enum value (the dry
    run answers the last): the counts must not depend on the answers."""

    def __init__(self) -> None:
        super().__init__([])

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        self.requests.append(request)
        text = json.dumps(placeholder(request.answer_schema, choice=0))
        return JudgeReply(text=text, finish_reason="stop", prompt_tokens=10,
                          prompt_tokens_processed=10)


def _settings(tmp_path: Path, **kw: Any) -> Settings:
    answers = tmp_path / "answers.json"
    answers.write_text("[]", encoding="utf-8")
    return Settings(judge="fake", fake_answers=answers, claims="sentences",
                    **{"metrics": METRICS, "no_cache": True, **kw})


def _real_calls(settings: Settings, rows: list[dict[str, Any]]) -> dict[str, int]:
    outcome = run(rows, None, settings, judge=SchemaJudge(), embedder=HashEmbedder())
    return outcome.summary["judge"]["calls_by_step"]


def test_placeholders_match_every_schema() -> None:
    for model in ALL_SCHEMAS:
        for choice in (0, -1):
            model.model_validate(placeholder(schema_json(model), choice))


def test_request_counts_equal_those_of_a_fake_judge_run(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    estimate = estimate_run(ROWS, settings, parallel=1, calibrate_now=False)
    assert {s: v["requests"] for s, v in estimate["steps"].items()} == _real_calls(settings, ROWS)
    assert estimate["total"]["count"] == "exact"
    assert estimate["time"] is None  # no calibration: counts only


def test_the_floor_is_the_judged_rows_own_tokens_plus_their_decisions(tmp_path: Path) -> None:
    from localeval.estimate.sizing import open_judge

    settings = _settings(tmp_path, metrics=["faithfulness"])
    estimate = estimate_run(ROWS, settings, parallel=1, calibrate_now=False)
    judge = open_judge(settings, 1)
    fields = ("question", "answer", "ground_truth")
    own = sum(len(judge.vocab.tokens(t)) for r in ROWS
              for t in (*r.get("contexts", []), *(r.get(f) for f in fields)) if t)
    judge.close()
    floor = estimate["floor"]
    verdicts = estimate["steps"]["faithfulness_verdicts"]
    assert floor["own_tokens"] == own  # every row has a sentence to judge
    assert floor["decision_tokens"] >= verdicts["requests"]  # at least a verdict per request
    assert floor["floor_tokens"] == own + floor["decision_tokens"]
    work = verdicts["prompt_tokens_processed"] + verdicts["forced_tokens"]
    assert floor["work_over_floor"] == round(work / floor["floor_tokens"], 3)


def test_cached_requests_are_counted_as_served(tmp_path: Path) -> None:
    settings = _settings(tmp_path, no_cache=False, cache=tmp_path / "cache.sqlite")
    first = _real_calls(settings, ROWS[:2])  # these rows' answers are now cached
    estimate = estimate_run(ROWS, settings, parallel=1, calibrate_now=False)
    all_calls = _real_calls(_settings(tmp_path), ROWS)
    for step, n in all_calls.items():
        entry = estimate["steps"][step]
        assert entry["cached"] == first.get(step, 0)
        assert entry["requests"] == n - first.get(step, 0)
    assert sum(first.values()) > 0
    served = estimate_run(ROWS[:2], settings, parallel=1, calibrate_now=False)
    assert served["total"]["requests"] == 0
    assert served["total"]["cached"] == sum(first.values())
    assert served["time"]["seconds"] == 0.0  # the judge would not even load


def test_a_repeated_row_is_served_as_the_run_would_serve_it(tmp_path: Path) -> None:
    rows = [*ROWS, {**ROWS[0], "id": "again"}]
    settings = _settings(tmp_path, no_cache=False, cache=tmp_path / "fresh.sqlite")
    estimate = estimate_run(rows, settings, parallel=1, calibrate_now=False)
    outcome = run(rows, None, settings.model_copy(update={"cache": tmp_path / "real.sqlite"}),
                  judge=SchemaJudge(), embedder=HashEmbedder())
    judge = outcome.summary["judge"]
    assert {s: v["requests"] for s, v in estimate["steps"].items()} == judge["calls_by_step"]
    assert estimate["total"]["cached"] == judge["cached"] > 0


def test_no_model_load_with_a_cached_calibration(tmp_path: Path, monkeypatch: Any,
                                                 capsys: Any) -> None:
    from localeval.cli import main
    from localeval.judge.llamacpp import default_threads

    def refuse(*args: Any, **kw: Any) -> None:
        raise AssertionError("the estimate loaded the judge")

    monkeypatch.setattr(calibrate, "measure", refuse)
    monkeypatch.setattr("localeval.judge.llamacpp.open_engine", refuse)
    monkeypatch.setattr("localeval.judge.llamacpp.llama.LlamaBackend", refuse)
    speed = Speed(chunk_s=0.01, token_s=0.001, step_s=0.01, gen_token_s=0.02, request_s=0.0)
    key = calibrate.calibration_key("fake", default_threads(), 512, -1)
    monkeypatch.setattr(calibrate, "speed_file", lambda _d: tmp_path / "speed.json")
    calibrate.store(tmp_path / "speed.json", key, {"speed": speed.__dict__, "load_s": 2.0,
                                                   "free_tokens": 10})
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    answers = tmp_path / "answers.json"
    answers.write_text("[]", encoding="utf-8")
    argv = ["run", str(data), "--out", str(tmp_path / "out"), "--judge", "fake",
            "--fake-answers", str(answers), "--metrics", ",".join(METRICS), "--no-cache",
            "--claims", "sentences", "--estimate"]
    assert main([*argv, "--json"]) == 0
    estimate = json.loads(capsys.readouterr().out)
    assert estimate["time"]["load_s"] == 2.0 and estimate["time"]["judge_s"] > 0
    assert not (tmp_path / "out").exists()  # an estimate writes nothing
    assert main(argv) == 0
    assert "time: about" in capsys.readouterr().out
    no_out = [a for i, a in enumerate(argv) if "--out" not in (a, argv[i - 1])]
    assert main(no_out) == 0 and "time: about" in capsys.readouterr().out  # no folder needed


@pytest.mark.model
def test_llama_estimate_loads_the_vocabulary_only(tmp_path: Path, monkeypatch: Any) -> None:
    pytest.importorskip("llama_cpp")
    import localeval.judge.llamacpp as llamacpp

    gguf = model_path("tiny")
    if not gguf.exists():
        pytest.skip("tiny judge not pulled")
    real_load = llamacpp.load_model

    def vocab_only(path: Path, n_gpu_layers: int = 0, *, vocab_only: bool = False) -> Any:
        assert vocab_only, "the estimate loaded the judge's weights"
        return real_load(path, n_gpu_layers, vocab_only=True)

    monkeypatch.setattr(llamacpp, "load_model", vocab_only)
    settings = Settings(profile="tiny", metrics=["faithfulness"], no_cache=True)
    estimate = estimate_run(ROWS, settings, parallel=2, calibrate_now=False)
    step = estimate["steps"]["faithfulness_verdicts"]
    assert step["requests"] > 0 and step["prompt_tokens"] > step["prompt_tokens_processed"] > 0


def test_replay_reuses_shared_prefixes_and_prices_every_call() -> None:
    vocab = CharVocab()
    head = "instructions " * 40 + "xx\n\n"  # the break ends a 4-character token: a cut
    schema = schema_json(checked_verdicts(2))
    messages = [[{"role": "user", "content": head + f"row {i}"}] for i in range(3)]
    works = [build(JudgeRequest(step="s", messages=m, answer_schema=schema, max_tokens=64), i,
                   vocab.prompt_tokens(m), vocab, max_chunk=512, free_tokens=10, temperature=0.0)
             for i, m in enumerate(messages)]
    speed = Speed(chunk_s=1.0, token_s=0.0, step_s=0.0, gen_token_s=0.0)
    totals = replay(works, parallel=1, speed=speed)
    n = len(works[0].tokens)
    assert totals.requests == {"s": 3}
    assert totals.prompt_tokens["s"] == 3 * n
    assert totals.processed["s"] < 3 * n  # the instructions are read once
    assert totals.generated["s"] == 0 and totals.forced["s"] > 0
    assert totals.seconds == totals.decode_calls > 0
    no_reuse = replay(works, parallel=1, speed=speed, reuse=False)
    assert no_reuse.processed["s"] == 3 * n


def test_free_strings_are_generated_and_the_rest_read() -> None:
    vocab = CharVocab()
    answer, planned = answer_work(schema_json(question_list(3, True)), vocab, 10, 0.0)
    assert planned and [k for k, _ in answer].count("gen") == 6
    assert sum(n for k, n in answer if k == "gen") == 60
    bare, _ = answer_work(schema_json(checked_verdicts(3)), vocab, 10, 0.0)
    assert [k for k, _ in bare] == ["read"]


def test_a_prompt_only_request_reads_its_continuations() -> None:
    vocab = CharVocab()
    request = JudgeRequest(step="c", messages=[{"role": "user", "content": "Is it?"}],
                           answer_schema="{}", max_tokens=8, continuations=["Yes", "No, never"])
    work = build(request, 0, vocab.prompt_tokens(request.messages), vocab, max_chunk=512,
                 free_tokens=10, temperature=0.0)
    assert work.generated == 0 and work.answer == [("read", 2)]


def test_counts_that_follow_the_answers_are_marked() -> None:
    assert count_kind("faithfulness_verdicts", Settings()) == "exact"
    assert count_kind("faithfulness_verdicts", Settings(claims="statements")) == "estimate"
    assert count_kind("faithfulness_statements", Settings()) == "lower bound"
    assert count_kind("answer_relevance_questions", Settings()) == "exact"


@pytest.mark.parametrize("extra", [["--json"], ["--recalibrate"],
                                   ["--estimate", "--no-calibrate", "--recalibrate"],
                                   ["--estimate", "--ray"]])
def test_bad_flags_give_one_line(tmp_path: Path, extra: list[str], capsys: Any) -> None:
    from localeval.cli import main

    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps(ROWS[-1]) + "\n", encoding="utf-8")
    assert main(["run", str(data), "--out", str(tmp_path / "o"), *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("localeval: error:") and "\n" not in err


@pytest.mark.parametrize("extra", [[], ["--estimate", "--resume"]])
def test_a_run_needs_out(tmp_path: Path, extra: list[str], capsys: Any) -> None:
    from localeval.cli import main

    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps(ROWS[-1]) + "\n", encoding="utf-8")
    assert main(["run", str(data), *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "localeval: error: the following arguments are required: --out"


def test_missing_data_gives_one_line(tmp_path: Path, capsys: Any) -> None:
    from localeval.cli import main

    answers = tmp_path / "a.json"
    answers.write_text("[]", encoding="utf-8")
    code = main(["run", str(tmp_path / "nope.jsonl"), "--out", str(tmp_path / "o"), "--judge",
                 "fake", "--fake-answers", str(answers), "--estimate"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.startswith("localeval: error:") and "\n" not in err


def test_an_unwritable_calibration_cache_warns_and_the_estimate_goes_on(
        tmp_path: Path, monkeypatch: Any) -> None:
    from types import SimpleNamespace

    from localeval.estimate import sizing

    blocker = tmp_path / "not-a-folder"
    blocker.write_text("", encoding="utf-8")
    entry = {"speed": {}, "load_s": 1.0, "free_tokens": 10}
    monkeypatch.setattr(calibrate, "speed_file", lambda _d: blocker / "speed.json")
    monkeypatch.setattr(calibrate, "measure", lambda *a, **kw: entry)
    said: list[str] = []
    judge = SimpleNamespace(fingerprint="f", model_path=tmp_path / "m.gguf")
    got, _ = sizing._calibration(Settings(), judge, True, False, said.append)  # type: ignore[arg-type]
    assert got is entry
    assert len(said) == 2 and said[1].startswith("warning: could not keep the calibration")


def test_an_unusable_answer_cache_is_a_note_and_the_estimate_goes_on(tmp_path: Path) -> None:
    """As a run does (models/backends.py): the cache only makes a run cheaper."""
    bad = tmp_path / "cache.sqlite"
    bad.write_text("not a database", encoding="utf-8")
    settings = _settings(tmp_path, no_cache=False, cache=bad)
    said: list[str] = []
    estimate = estimate_run(ROWS, settings, parallel=1, calibrate_now=False, log=said.append)
    expected = _real_calls(_settings(tmp_path), ROWS)
    assert {s: e["requests"] for s, e in estimate["steps"].items()} == expected
    assert estimate["total"]["cached"] == 0
    assert any("cannot be used" in n and "assumes no cached answer" in n
               for n in estimate["notes"])
    assert any(s.startswith("warning: answer cache") for s in said)


def test_a_conversation_run_counts_the_user_pass(tmp_path: Path) -> None:
    """A conversation's faithfulness judges an unsupported claim again against what the user
    said (conversation.py): the estimate counts that pass (the run makes it where a claim is
    left unsupported, so the count is an upper bound, reached when every turn leaves one)."""
    from tests.test_conversation import DEEPEVAL, RAGAS, VEGETARIAN

    rows = [VEGETARIAN, RAGAS | {"id": "eiffel"}, DEEPEVAL | {"id": "allergy"}]
    settings = _settings(tmp_path, metrics=["faithfulness", "answer_relevance"])
    estimate = estimate_run(rows, settings, parallel=1, calibrate_now=False)
    real = run(rows, None, settings, judge=(judge := SchemaJudge()), embedder=HashEmbedder())
    assert any(r.sample_id.endswith("#user") for r in judge.requests)  # the pass was made
    assert {s: v["requests"] for s, v in estimate["steps"].items()} == \
        real.summary["judge"]["calls_by_step"]
    assert estimate["steps"]["faithfulness_verdicts"]["count"] == "upper bound"
    assert estimate["steps"]["conversation_rewrite"]["count"] == "exact"
    assert estimate["total"]["count"] == "upper bound"


def test_the_shadow_of_a_sample_only_the_meaning_head_flags_is_counted(
        tmp_path: Path, monkeypatch: Any) -> None:
    """The estimate reads the material with the run's embedder where the meaning head applies,
    so a note only the head flags costs the second scoring there as in the run."""
    from localeval.estimate import sizing
    from localeval.models import backends, preflight
    from tests.test_shield_meaning import ROW, StubEmbedder

    clean = dict(ROW, id="clean", contexts=["The Tay Bridge crosses the Firth of Tay at Dundee."])
    rows = [clean, ROW]
    monkeypatch.setattr(sizing, "open_judge", lambda s, p: sizing.VocabJudge(
        "stub", "stub", "stub", CharVocab(), None))
    monkeypatch.setattr(preflight, "check_before_loading", lambda *a, **k: None)
    monkeypatch.setattr(backends, "make_embedder", lambda s: (StubEmbedder(), {}))
    counts = {}
    for shield in ("meaning", "forms"):
        settings = Settings(metrics=["faithfulness"], no_cache=True, claims="sentences",
                            shield=shield)
        estimate = estimate_run(rows, settings, parallel=1, calibrate_now=False)
        counts[shield] = {s: v["requests"] for s, v in estimate["steps"].items()}
        real = run(rows, None, settings, judge=SchemaJudge(), embedder=StubEmbedder())
        assert counts[shield] == real.summary["judge"]["calls_by_step"]
    assert counts["meaning"]["faithfulness_verdicts"] > counts["forms"]["faithfulness_verdicts"]
