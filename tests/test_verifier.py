"""The learned verifier: the head file and its refusals, the client scoring verdicts with it
(and its place in the cache key), τ and P taken from it, fitting, and the fit command's checks.
The activations themselves are read on the 0.5B model (the `model` tests at the end)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import numpy as np
import pytest

from localeval.errors import ConfigError, DatasetError
from localeval.judge.cache import AnswerCache, cache_key, probe_key
from localeval.judge.client import JudgeClient
from localeval.judge.interface import FieldProbs, JudgeReply, JudgeRequest
from localeval.verifier.apply import Verifier, judge_p_yes
from localeval.verifier.fit import Pair, fit, out_of_fold, pair_accuracy
from localeval.verifier.head import Head, load_head, save_head
from localeval.verifier.table import Table

D = 8


def _head(judge: str = "judge-sha", tau: float = 0.5, w: np.ndarray | None = None) -> Head:
    weights = np.zeros(2 * D + 1) if w is None else w
    weights[0] = 3.0 if w is None else weights[0]
    return Head.build(mean=np.zeros(2 * D + 1), scale=np.ones(2 * D + 1), weights=weights,
                      bias=0.0, judge_sha256=judge, layers=[3, -1], n_embd=D,
                      templates={"en/faithfulness_verdicts": "t-en"}, tau={"en": tau, "zh": tau})


def test_a_head_file_round_trips_and_its_id_is_its_content(tmp_path: Path) -> None:
    head = _head()
    save_head(head, tmp_path / "h.json")
    again = load_head(tmp_path / "h.json")
    assert again.id == head.id
    assert _head(tau=0.7).id != head.id
    x = np.zeros(2 * D)
    x[0] = 1.0
    assert head.score(x, 0.5) == pytest.approx(1 / (1 + np.exp(-3.0)), abs=1e-6)
    assert head.score(-x, 0.5) < 0.5


def test_a_head_for_another_judge_or_other_templates_is_refused_in_one_line(
        tmp_path: Path) -> None:
    head = _head()
    head.check("judge-sha", {"en/faithfulness_verdicts": "t-en"})  # its own: accepted
    with pytest.raises(ConfigError, match="made for judge judge-sha") as exc:
        head.check("other-sha", {"en/faithfulness_verdicts": "t-en"})
    assert "\n" not in str(exc.value)
    with pytest.raises(ConfigError, match="other templates"):
        head.check("judge-sha", {"en/faithfulness_verdicts": "changed"})
    (tmp_path / "bad.json").write_text('{"format": "localeval-verifier/1"}')
    with pytest.raises(ConfigError, match="not a head file"):
        load_head(tmp_path / "bad.json")
    with pytest.raises(ConfigError, match="not found"):
        load_head(tmp_path / "missing.json")


class _StatesJudge:
    """Answers one verdict with the judge's P and the states the engine would read."""

    name, fingerprint = "states", "judge-sha"

    def __init__(self, hidden: np.ndarray) -> None:
        self.hidden, self.requests = hidden, []

    def sampling_key(self) -> str:
        return "greedy"

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        self.requests.append(request)
        fp = FieldProbs(field="verdict", probs={"1": 0.3, "0": 0.7},
                        hidden=self.hidden if request.hidden_layers else None)
        return JudgeReply(text='{"verdicts": [{"verdict": 0}]}', finish_reason="stop",
                          field_probs=[fp])

    def close(self) -> None:
        pass


def _request() -> JudgeRequest:
    return JudgeRequest(step="faithfulness_verdicts", messages=[{"role": "user", "content": "x"}],
                        answer_schema="{}", max_tokens=10, probe_fields=["verdict"])


@pytest.mark.parametrize("field, value", [
    ("tau", {"en": float("nan")}), ("tau", {"en": float("inf")}), ("tau", {"en": 1.5}),
    ("weights", "not base64!"), ("weights", "AAAA"), ("bias", float("inf")),
])
def test_a_head_file_with_bad_numbers_is_refused_in_one_line(tmp_path: Path, field: str,
                                                             value: object) -> None:
    """A Low item of issue 41: τ NaN or Infinity was accepted (and written into summary.json),
    and bad base64 failed every sample as an internal error with exit 0."""
    data = _head().model_dump()
    data[field] = value
    (tmp_path / "h.json").write_text(json.dumps(data))  # NaN and Infinity as Python writes them
    with pytest.raises(ConfigError, match="not a head file") as exc:
        load_head(tmp_path / "h.json")
    assert "\n" not in str(exc.value)


def test_the_client_scores_verdicts_with_the_head_and_caches_the_score_not_the_states(
        tmp_path: Path) -> None:
    from pydantic import BaseModel

    class Any_(BaseModel):
        verdicts: list[dict]

    hidden = np.zeros(2 * D)
    hidden[0] = 2.0
    head = _head()
    judge = _StatesJudge(hidden)
    cache = AnswerCache(tmp_path / "c.sqlite")
    client = JudgeClient(judge, cache, Verifier(head))
    _, reply = asyncio.run(client.ask_reply(_request(), Any_))
    sent = judge.requests[0]
    assert sent.hidden_layers == [3, -1] and sent.verifier == head.id
    assert reply.field_probs[0].score == head.score(hidden, 0.3)
    assert reply.field_probs[0].score > 0.99  # the head, not the judge's 0.3
    # a second client: served from the cache, the score kept, no states stored
    again = JudgeClient(_StatesJudge(hidden), AnswerCache(tmp_path / "c.sqlite"), Verifier(head))
    _, cached = asyncio.run(again.ask_reply(_request(), Any_))
    assert cached.cached and cached.field_probs[0].score == reply.field_probs[0].score
    assert cached.field_probs[0].hidden is None
    # without a head the request and its key are as they always were
    plain = JudgeClient(_StatesJudge(hidden), None)
    _, raw = asyncio.run(plain.ask_reply(_request(), Any_))
    assert raw.field_probs[0].score is None
    assert probe_key(_request()) == [["verdict"], []]
    assert cache_key("judge-sha", "greedy", sent) != cache_key("judge-sha", "greedy", _request())


def test_p_and_tau_come_from_the_head_only_for_the_steps_it_was_made_for() -> None:
    from types import SimpleNamespace

    from localeval.metrics.claims.verdicts import FITTED, p_yes, threshold

    head = _head(tau=0.8)
    settings = SimpleNamespace(support_threshold=None)
    ctx = SimpleNamespace(settings=settings, language="en",
                          judge=SimpleNamespace(verifier=Verifier(head)))
    assert threshold(ctx, "faithfulness_verdicts") == 0.8  # type: ignore[arg-type]
    assert threshold(ctx, "context_recall_verdicts") == FITTED["en"]  # type: ignore[arg-type]
    settings.support_threshold = 0.3
    assert threshold(ctx, "faithfulness_verdicts") == 0.3  # type: ignore[arg-type]
    scored = FieldProbs(field="verdict", probs={"1": 0.2, "0": 0.8}, score=0.9)
    assert p_yes(scored) == 0.9
    assert p_yes(scored.model_copy(update={"score": None})) == pytest.approx(0.2)
    assert judge_p_yes(scored) == pytest.approx(0.2)


def _table(n: int, seed: int = 0) -> Table:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, D)).astype(np.float32)
    label = (X[:, 0] + 0.3 * rng.normal(size=n) > 0).astype(float)
    rows = [{"id": f"r{i}", "language": "en", "group": f"g{i // 2}", "fixed": []}
            for i in range(n)]
    return Table(X, np.full(n, 0.5), label, np.arange(n), np.zeros(n, bool), rows)


def test_a_head_learns_a_direction_the_judge_s_p_does_not_show() -> None:
    from localeval.meta_eval.stats import auroc

    table = _table(200)
    oof = out_of_fold(table, [], 5, C=1.0, with_p=True)
    assert auroc(list(oof), [int(v) for v in table.label]) > 0.9
    assert auroc(list(table.p), [int(v) for v in table.label]) == 0.5  # P alone: chance


def test_a_head_learns_from_preference_pairs_alone() -> None:
    table = _table(200, seed=1)
    pairs = []
    for i in range(0, 200, 2):  # which of two rows is the supported one; no claim label
        pairs.append(Pair(i, i + 1, "a" if table.X[i, 0] > table.X[i + 1, 0] else "b"))
    unlabelled = Table(table.X, table.p, np.full(200, np.nan), table.row, table.overruled,
                       table.rows)
    model = fit(unlabelled, pairs[:70], C=1.0)
    held = pair_accuracy(unlabelled, pairs[70:], model.predict(unlabelled), {"en": 0.5})
    assert held["weighted"] > 0.85


def test_fit_refuses_data_that_cannot_teach_a_head(tmp_path: Path) -> None:
    from localeval.verifier.learn import read

    row = {"question": "q", "answer": "a.", "contexts": ["c"]}
    few = tmp_path / "few.jsonl"
    few.write_text("\n".join(json.dumps({**row, "id": f"r{i}", "label": i % 2})
                             for i in range(10)))
    with pytest.raises(DatasetError, match="at least 50"):
        read(few)
    same = tmp_path / "same.jsonl"
    same.write_text("\n".join(json.dumps({**row, "id": f"r{i}", "label": 1}) for i in range(60)))
    with pytest.raises(DatasetError, match="same label"):
        read(same)


def test_the_cli_says_a_bad_fit_in_one_line(tmp_path: Path) -> None:
    import subprocess
    import sys

    few = tmp_path / "few.jsonl"
    few.write_text("\n".join(json.dumps({"id": f"r{i}", "question": "q", "answer": "a.",
                                         "contexts": ["c"], "label": i}) for i in (0, 1)))
    out = tmp_path / "head.json"
    done = subprocess.run([sys.executable, "-m", "localeval", "verifier", "fit", str(few),
                           "--out", str(out)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "at least 50" in done.stderr
    assert not out.exists()


def test_show_prints_a_head_file(tmp_path: Path) -> None:
    import subprocess
    import sys

    save_head(_head(), tmp_path / "h.json")
    done = subprocess.run([sys.executable, "-m", "localeval", "verifier", "show",
                           str(tmp_path / "h.json")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    assert shown["id"] == _head().id and shown["layers"] == [3, -1]


def test_a_run_naming_a_head_file_loads_the_verifier_plug_in(tmp_path: Path) -> None:
    """The core never imports the verifier: the CLI does when --verifier names a head file, and
    the run's fingerprint holds the file's sha256 (`auto`, the default: the hash of no bytes)."""
    import hashlib
    import subprocess
    import sys

    from localeval import prompts

    template = prompts.template_sha256("en", "faithfulness_verdicts")
    head = _head(judge="fake").model_copy(
        update={"templates": {"en/faithfulness_verdicts": template}})
    save_head(head, tmp_path / "h.json")
    data, answers = tmp_path / "d.jsonl", tmp_path / "a.json"
    data.write_text(json.dumps({"id": "1", "question": "Where is the tower?",
                                "answer": "The tower is in Paris.",
                                "contexts": ["The tower stands in Paris."]}) + "\n")
    answers.write_text(json.dumps([{"verdicts": [{"verdict": 1}]}]))

    def run(out: str, *extra: str) -> dict:
        done = subprocess.run(
            [sys.executable, "-m", "localeval", "run", str(data), "--out", str(tmp_path / out),
             "--metrics", "faithfulness", "--judge", "fake", "--fake-answers", str(answers),
             "--language", "en", "--no-cache", "--quiet", *extra],
            capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        summary = json.loads((tmp_path / out / "summary.json").read_text())
        inputs = json.loads((tmp_path / out / "run.json").read_text())["inputs"]
        return {"verifier": summary["models"]["verifier"], "sha": inputs["verifier_sha256"]}

    named = run("head", "--verifier", str(tmp_path / "h.json"))
    assert named["verifier"]["id"] == head.id and named["verifier"]["head"] == "h.json"
    assert named["sha"] == hashlib.sha256((tmp_path / "h.json").read_bytes()).hexdigest()
    plain = run("plain")
    assert plain["verifier"]["head"] == "none: raw P(supported)"
    assert plain["sha"] == hashlib.sha256(b"").hexdigest()
    assert run("none", "--verifier", "none")["sha"] is None


API_WITH_HEAD = """
import sys
import localeval
from localeval.judge.fake import FakeJudge
row = {"id": "1", "question": "Where is the tower?", "answer": "The tower is in Paris.",
       "contexts": ["The tower stands in Paris."]}
judge = FakeJudge([{"verdicts": [{"verdict": 1}]}])
results = localeval.evaluate([row], metrics=["faithfulness"], language="en", no_cache=True,
                             judge=judge, verifier=sys.argv[1])
print(results.summary["models"]["verifier"]["id"])
"""


def test_the_python_api_loads_the_verifier_plug_in_for_a_head_file(tmp_path: Path) -> None:
    import subprocess
    import sys

    from localeval import prompts

    template = prompts.template_sha256("en", "faithfulness_verdicts")
    head = _head(judge="fake").model_copy(
        update={"templates": {"en/faithfulness_verdicts": template}})
    save_head(head, tmp_path / "h.json")
    done = subprocess.run([sys.executable, "-c", API_WITH_HEAD, str(tmp_path / "h.json")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [head.id]


def test_the_core_asks_for_the_plug_in_when_a_head_is_named_without_it() -> None:
    from localeval.config import Settings
    from localeval.models import backends

    kept = list(backends._head_loader)
    backends._head_loader.clear()
    try:
        with pytest.raises(ConfigError, match="needs the verifier plug-in"):
            backends._verifier(Settings(verifier="h.json"), "fake")
        assert backends._verifier(Settings(), "fake")[0] is None
    finally:
        backends._head_loader[:] = kept


@pytest.mark.model
def test_the_states_at_a_verdict_do_not_depend_on_what_runs_beside_it() -> None:
    from conftest import _need, model_path
    from test_engine import FACTS, _verdicts

    from localeval.judge.llamacpp import open_engine

    path = _need(model_path("tiny"))
    requests = [_verdicts(a, [q.rstrip("?") + " is unknown.", a]) for q, a in FACTS[:4]]
    requests = [r.model_copy(update={"hidden_layers": [5, -1]}) for r in requests]

    async def gather(engine, batch: list[JudgeRequest]) -> list[JudgeReply]:  # type: ignore[no-untyped-def]
        return list(await asyncio.gather(*(engine.complete(r) for r in batch)))

    def run(parallel: int, batch: list[JudgeRequest]) -> list[JudgeReply]:
        engine = open_engine(path, "t", n_ctx=1024, parallel=parallel, hidden_layers=[5, -1])
        try:
            return asyncio.run(gather(engine, batch))
        finally:
            engine.close()

    alone = [run(1, [r])[0] for r in requests]
    together = run(4, requests)
    for a, b in zip(alone, together, strict=True):
        assert a.text == b.text
        assert [f.probs for f in a.field_probs] == [f.probs for f in b.field_probs]
        for fa, fb in zip(a.field_probs, b.field_probs, strict=True):
            assert fa.hidden is not None and fa.hidden.shape == (2 * 896,)
            assert fa.hidden.tobytes() == fb.hidden.tobytes()
    # and the tap changes no answer: the same requests on an engine without it
    plain = open_engine(path, "t", n_ctx=1024, parallel=4)
    try:
        bare = asyncio.run(gather(plain, [r.model_copy(update={"hidden_layers": []})
                                          for r in requests]))
    finally:
        plain.close()
    assert [(r.text, [f.probs for f in r.field_probs]) for r in bare] == [
        (r.text, [f.probs for f in r.field_probs]) for r in alone]


@pytest.mark.parametrize("extra, says", [
    (["--folds", "1"], "--folds must be at least 2"),
    (["--layers", "17,x"], "--layers: expected comma-separated integers"),
    (["<out is a folder>"], "is a folder"),
])
def test_the_fit_command_s_bad_options_are_one_line(tmp_path: Path, extra: list[str],
                                                     says: str) -> None:
    import subprocess
    import sys

    data = tmp_path / "rows.jsonl"
    data.write_text("\n".join(json.dumps({"id": f"r{i}", "question": "q", "answer": "a.",
                                          "contexts": ["c"], "label": i % 2}) for i in range(60)))
    out = tmp_path / "head.json"
    if extra == ["<out is a folder>"]:
        out.mkdir()
        extra = []
    done = subprocess.run([sys.executable, "-m", "localeval", "verifier", "fit", str(data),
                           "--out", str(out), *extra], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and says in done.stderr


def test_fit_s_folders_and_stored_rows_that_cannot_serve_are_one_line_or_judged_again(
        tmp_path: Path) -> None:
    """Low items of issue 41: `verifier fit` gave tracebacks for --store naming a file and --out
    under a file, and a corrupt stored row was never judged again."""
    from localeval.config import Settings
    from localeval.verifier.extract import _stored
    from localeval.verifier.learn import learn

    data = tmp_path / "rows.jsonl"
    data.write_text("\n".join(json.dumps({"id": f"r{i}", "question": "q", "answer": "a.",
                                          "contexts": ["c"], "label": i % 2}) for i in range(60)))
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    with pytest.raises(ConfigError, match=r"--store .* name a folder"):
        learn(data, tmp_path / "h.json", Settings(judge="fake"), store=a_file)
    with pytest.raises(ConfigError, match="a folder above it is a file"):
        learn(data, a_file / "h.json", Settings(judge="fake"))
    torn = tmp_path / "row.npz"
    torn.write_bytes(b"PK\x03\x04 torn")
    assert _stored(torn) is None and not torn.exists()


def test_fitted_taus_are_plain_strings_and_floats() -> None:
    """τ per language as plain str keys and floats (fit printed np.str_, a Low item of issue
    41)."""
    from types import SimpleNamespace

    from localeval.verifier.fit import taus_for

    table = SimpleNamespace(language=np.array(["en", "en", "zh", "zh"]),
                            label=np.array([1, 0, 1, 0]))
    taus = taus_for(table, np.array([0.9, 0.1, 0.8, 0.2]))  # type: ignore[arg-type]
    assert taus and all(type(k) is str and type(v) is float for k, v in taus.items())


@pytest.mark.parametrize("change, words", [
    ({"layers": [3, -2]}, "layers are -1 (the final state) or a layer number"),
    ({"layers": [3, 3]}, "layers are -1 (the final state) or a layer number"),
    ({"n_embd": 0}, "n_embd must be at least 1"),
    ({"n_embd": D + 1}, f"the arrays hold {2 * D + 1} features; 2 layers of n_embd {D + 1}"),
    ({"layers": [3]}, f"the arrays hold {2 * D + 1} features; 1 layers of n_embd {D}"),
    ({"with_p": False}, f"the arrays hold {2 * D + 1} features; 2 layers of n_embd {D} "
                        f"make {2 * D}"),
])
def test_a_head_whose_layers_do_not_fit_its_arrays_is_refused_in_one_line(
        tmp_path: Path, change: dict, words: str) -> None:
    """Issue 53, Low: out-of-range layers, or arrays of one consistent wrong length, passed
    the load check and failed at the first verdict."""
    (tmp_path / "h.json").write_text(json.dumps(_head().model_dump() | change))
    with pytest.raises(ConfigError, match="not a head file") as exc:
        load_head(tmp_path / "h.json")
    assert words in str(exc.value) and "\n" not in str(exc.value), exc.value
