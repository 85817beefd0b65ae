"""`localeval label`: the labelling page's server, over HTTP (urllib) — a run's claims and
samples marked into the labels file, the two orders, the current interval, the review of a
generated test set, and the bad inputs (a port in use, a run still being written, a test set
still being generated). The page in a real browser: tests/test_label_page_browser.py."""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from localeval.cli import main
from localeval.labels.store import LABELS_FILE, read_labels

# Four English rows; each answer sentence is one claim (--claims sentences, the default).
ROWS = [
    {"id": "eiffel", "question": "Where is the Eiffel Tower and when was it finished?",
     "answer": "The Eiffel Tower is in Paris. It was finished in 1889. It is made of wood.",
     "contexts": ["The Eiffel Tower is a wrought-iron lattice tower in Paris, France. "
                  "It was completed in 1889 for the World's Fair.",
                  "Gustave Eiffel's company designed and built the tower."]},
    {"id": "nile", "question": "How long is the Nile?",
     "answer": "The Nile is about 6,650 km long. It flows into the Mediterranean Sea.",
     "contexts": ["The Nile is a major north-flowing river in northeastern Africa. It is about "
                  "6,650 km long and flows into the Mediterranean Sea."]},
    {"id": "moon", "question": "Who first walked on the Moon?",
     "answer": "I do not know.",
     "contexts": ["Neil Armstrong was the first person to walk on the Moon, in July 1969."]},
    {"id": "tea", "question": "Where does tea come from?",
     "answer": "Tea originated in China. It was first drunk as a medicine.",
     "contexts": ["Tea originated in southwest China, where it was used as a medicinal drink."]},
]


def _verdicts(ps: list[float]) -> dict[str, Any]:
    """A verdicts answer whose probabilities decide (τ = 0.6 in English)."""
    return {"verdicts": [{"verdict": int(p >= 0.5)} for p in ps],
            "_probs": [["verdict", {"1": p, "0": 1 - p}] for p in ps]}


P = {"eiffel": [0.95, 0.7, 0.05], "nile": [0.9, 0.62], "moon": [0.3], "tea": [0.85, 0.55]}
FAKE = {
    "faithfulness_verdicts": [_verdicts(ps) for ps in P.values()],
    "refusal_verdict": [{"refused": r, "_probs": [["refused", {"1": p, "0": 1 - p}]]}
                        for r, p in ((0, 0.1), (0, 0.2), (1, 0.9), (0, 0.45))],
    "rubric_reason": [{"reason": "it answers"}] * 4,
}


def make_run(tmp_path: Path, metrics: str = "faithfulness,refusal") -> Path:
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps(FAKE), encoding="utf-8")
    out = tmp_path / "run"
    assert main(["run", str(data), "--out", str(out), "--judge", "fake", "--fake-answers",
                 str(answers), "--metrics", metrics, "--no-cache", "--quiet"]) == 0
    return out


@pytest.fixture
def run_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    out = make_run(tmp_path)
    capsys.readouterr()
    return out


class Client:
    """Requests to a LabelServer running in a thread."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self.base = server.url.split("?")[0].rstrip("/")  # the printed URL carries the token

    def raw(self, path: str, body: Any = None, *, token: bool = True,
            headers: dict[str, str] | None = None) -> tuple[int, bytes]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data,
                                         method="GET" if body is None else "POST")
        request.add_header("Content-Type", "application/json")
        if token:
            request.add_header("X-Localeval-Token", self.server.token)
        for k, v in (headers or {}).items():
            request.add_header(k, v)
        try:
            with urllib.request.urlopen(request, timeout=30) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()

    def get(self, path: str) -> Any:
        status, body = self.raw(path)
        assert status == 200, body
        return json.loads(body)

    def post(self, path: str, body: Any, status: int = 200) -> Any:
        got, raw = self.raw(path, body)
        assert got == status, raw
        return json.loads(raw)

    def mark(self, sid: str, claim: int | None, label: Any, order: str = "random",
             metric: str = "faithfulness", note: str | None = None, status: int = 200) -> Any:
        return self.post("/api/mark", {"metric": metric, "order": order, "id": sid,
                                       "claim": claim, "label": label, "note": note}, status)

    def item(self, pos: int, order: str = "random", metric: str = "faithfulness") -> Any:
        return self.get(f"/api/item?metric={metric}&order={order}&pos={pos}")


@contextlib.contextmanager
def serving(session: Any) -> Iterator[Client]:
    from localeval.labelpage.server import LabelServer

    server = LabelServer(session, 0)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    try:
        yield Client(server)
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def open_run(run_dir: Path, **kwargs: Any) -> Any:
    from localeval.labelpage.session import RunSession

    return RunSession(run_dir, who="tester", **kwargs)


def label_sample(client: Client, pos: int, values: list[Any], order: str = "random") -> str:
    shown = client.item(pos, order)
    assert len(shown["claims"]) == len(values)
    for i, v in enumerate(values):
        client.mark(shown["id"], i, v, order)
    return shown["id"]


# ---- the page and its assets ------------------------------------------------------------------


def test_the_page_is_served_on_loopback_only_with_its_packaged_assets(run_dir: Path) -> None:
    with serving(open_run(run_dir)) as c:
        assert c.server.server_address[0] == "127.0.0.1" and c.server.port > 0
        status, page = c.raw(f"/?token={c.server.token}", token=False)
        assert status == 200 and c.server.token.encode() in page
        for name in ("label.js", "label.css"):
            status, body = c.raw(f"/static/{name}", token=False)
            assert status == 200 and len(body) > 1000
        assert c.raw("/static/../session.py")[0] == 404  # with the token; 403 without
        # nothing is fetched from elsewhere: every reference is the server's own or data:
        for text in (page.decode(), c.raw("/static/label.js")[1].decode(),
                     c.raw("/static/label.css")[1].decode()):
            assert not re.search(r"(?:https?:)?//[a-z0-9]", text.replace("ws://", "")), text[:80]
        # another Host (DNS rebinding) and a write without the page's token are refused
        assert c.raw("/api/state", headers={"Host": "evil.example:80"})[0] == 403
        status, body = c.raw("/api/mark", {"metric": "faithfulness", "order": "random",
                                           "id": "eiffel", "claim": 0, "label": 1}, token=False)
        assert status == 403 and not (run_dir / LABELS_FILE).exists()


def test_assets_ship_in_the_wheel_package_data() -> None:
    import tomllib

    from tests.conftest import REPO

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "localeval.labelpage" in project["packages"]
    patterns = project["package-data"]["localeval.labelpage.static"]
    static = REPO / "localeval" / "labelpage" / "static"
    for f in static.iterdir():
        assert any(f.match(p) for p in patterns), f"{f.name} is not in the wheel's package data"


# ---- a run: claims, orders, labels file -------------------------------------------------------


def test_a_sample_shows_its_claims_verdicts_p_and_the_marked_evidence(run_dir: Path) -> None:
    with serving(open_run(run_dir)) as c:
        state = c.get("/api/state")
        assert state["metric"] == "faithfulness" and state["claims"] is True
        assert [m["name"] for m in state["metrics"]] == ["faithfulness", "refusal"]
        assert state["total"] == 4
        assert state["seed"] == 0 and state["language"] == "en"
        eiffel = c.item(2, "informative")
        assert eiffel["id"] == "eiffel" and eiffel["question"] == ROWS[0]["question"]
        assert [x["sentence"] for x in eiffel["claims"]] == [1, 2, 3]
        assert "Paris" in eiffel["claims"][0]["text"] and "wood" in eiffel["claims"][2]["text"]
        assert [x["p"] for x in eiffel["claims"]] == pytest.approx([0.95, 0.7, 0.05])
        assert [x["verdict"] for x in eiffel["claims"]] == [1, 1, 0]  # τ 0.6 decided
        assert eiffel["tau"] == pytest.approx(0.6)
        # the contexts come back whole, cut where a claim's closest sentence lies
        contexts = eiffel["contexts"]
        assert ["".join(s["t"] for s in segs) for segs in contexts] == ROWS[0]["contexts"]
        evidence = eiffel["claims"][0]["evidence"]
        assert evidence and eiffel["claims"][0]["evidence_found"]
        assert [s["t"] for s in contexts[0] if 0 in s.get("c", [])] == [evidence]


def _segments_before(text: str, marks: list[tuple[str, int, str]]) -> list[dict[str, Any]]:
    """session.segments as it was before the sweep (each piece scanned every span: quadratic in
    the claims): the reference the sweep must match."""
    import itertools

    spans = []
    for needle, claim, kind in marks:
        needle = needle.strip()
        at = text.find(needle) if needle else -1
        if at >= 0:
            spans.append((at, at + len(needle), claim, kind))
    cuts = sorted({0, len(text), *(s for s, _, _, _ in spans), *(e for _, e, _, _ in spans)})
    out = []
    for start, end in itertools.pairwise(cuts):
        piece: dict[str, Any] = {"t": text[start:end]}
        for kind in ("c", "p"):
            covering = sorted({c for s, e, c, k in spans if k == kind and s <= start and end <= e})
            if covering:
                piece[kind] = covering
        out.append(piece)
    return out


def test_the_contexts_are_cut_as_before_on_varied_evidence() -> None:
    """segments (one sweep over the cuts) gives exactly the pieces of the quadratic version on
    random texts and evidence: nested, overlapping, repeated, touching, not found, blank, one
    claim with several passages, whole-text and empty texts, CJK."""
    import random

    from localeval.labelpage.session import segments

    rng = random.Random(53)
    words = ["the", "tower", "1889", "Paris", "iron", ".", " ", "  ", "\n", "埃菲尔", "铁塔。",
             "a", "b"]
    checked = 0
    for case in range(400):
        text = "".join(rng.choice(words) for _ in range(rng.randint(0, 60)))
        marks: list[tuple[str, int, str]] = []
        for _ in range(rng.randint(0, 25)):
            claim, kind = rng.randint(0, 8), rng.choice("cp")
            roll = rng.random()
            if roll < 0.7 and text:
                a = rng.randint(0, len(text) - 1)
                needle = text[a: a + rng.randint(1, 30)]
                if rng.random() < 0.3:
                    needle = f"  {needle}\n"  # stripped before it is searched
            elif roll < 0.8:
                needle = rng.choice(["", "   ", "\n"])
            elif roll < 0.9:
                needle = "not in the text at all"
            else:
                needle = text  # the whole text
            marks.append((needle, claim, kind))
        if marks and rng.random() < 0.3:
            marks += rng.sample(marks, k=min(3, len(marks)))  # the same evidence again
        got = segments(text, marks)
        assert got == _segments_before(text, marks), (case, text, marks)
        assert "".join(p["t"] for p in got) == text
        checked += any("c" in p or "p" in p for p in got)
    assert checked > 250  # most cases mark something
    many = [(f"Sentence {i} says {i}.", i, "c") for i in range(300)]
    many += [(f"Sentence {i} says {i}. Sentence {i + 1}", i, "p") for i in range(0, 300, 7)]
    text = " ".join(f"Sentence {i} says {i}." for i in range(300))
    assert segments(text, many) == _segments_before(text, many)


def test_cutting_the_contexts_is_not_quadratic_in_the_claims() -> None:
    """The work of segments, counted (not timed): every comparison of a mark's kind is counted;
    the quadratic version compared each piece with every span (a review measured 1.33 s a
    request for 2,000 claims, under the session lock), the sweep a few times per mark."""
    from localeval.labelpage.session import segments

    compared = 0

    class Kind(str):
        __hash__ = str.__hash__

        def __eq__(self, other: object) -> bool:
            nonlocal compared
            compared += 1
            return str.__eq__(self, other)

    sentences = [f"Sentence {i} says {i}." for i in range(200)]
    marks = [(s, i, Kind("c")) for i, s in enumerate(sentences)]
    marks += [(" ".join(sentences[i:i + 3]), i, Kind("p")) for i in range(0, 200, 3)]
    text = " ".join(sentences)
    before = _segments_before(text, marks)
    compared_before, compared = compared, 0
    assert segments(text, marks) == before and len(before) > 300
    assert compared <= 4 * len(marks), compared
    assert compared_before > 100 * len(marks)  # what the count catches


def test_every_mark_is_one_fsynced_row_and_reopening_resumes(run_dir: Path) -> None:
    session = open_run(run_dir, seed=7)
    with serving(session) as c:
        first = c.item(0)
        for i in range(len(first["claims"])):
            state = c.mark(first["id"], i, 1 if i % 2 == 0 else 0,
                           note="checked twice" if i == 0 else None)
        assert state["random_done"] == 1 and state["frontier"] == 1
        second = c.item(1)
        c.mark(second["id"], 0, None)  # unsure
    rows = (run_dir / LABELS_FILE).read_text().splitlines()
    assert len(rows) == len(first["claims"]) + 1
    row = json.loads(rows[0])
    assert row["order"] == "random" and row["seed"] == 7 and row["who"] == "tester"
    assert row["note"] == "checked twice" and row["claim"] == 0 and row["label"] == 1
    assert row["run"] == json.loads((run_dir / "run.json").read_text())["fingerprint"]
    read = read_labels(run_dir / LABELS_FILE)
    assert not read.problems and read.labels[(second["id"], "faithfulness", 0)].label is None
    # reopened without --seed: the random order labelled so far, where it was left
    again = open_run(run_dir)
    assert again.seed == 7
    with serving(again) as c:
        state = c.get("/api/state")
        assert state["random_done"] == 1 and state["frontier"] == 1
        assert c.item(1)["id"] == second["id"]
        assert c.item(1)["marks"] == {"0": {"label": None, "note": None, "order": "random"}}
        assert c.item(1)["status"] == "partial"


def test_a_mark_sent_again_with_its_client_id_is_written_once(run_dir: Path) -> None:
    """A mark whose request timed out although it was written is sent again by the page with the
    same client id: the server answers saved and appends no second row, also after a restart;
    rows without a client id (an older page, by hand) still read and count."""
    labels = run_dir / LABELS_FILE
    old_row = {"id": "nile", "metric": "refusal", "label": 0, "order": "random",
               "input_hash": open_run(run_dir).content["nile"].input_hash}
    labels.write_text(json.dumps(old_row) + "\n", encoding="utf-8")
    with serving(open_run(run_dir, seed=7)) as c:
        sid = c.item(0)["id"]
        body = {"metric": "faithfulness", "order": "random", "id": sid, "claim": 0,
                "label": 1, "note": None, "client_id": "3f9a0c1d2e4b5a6978c0d1e2f3a4b5c6"}
        first = c.post("/api/mark", body)
        again = c.post("/api/mark", body)  # the retry of a request that timed out
        assert "already_saved" not in first and again["already_saved"] is True
        assert again["claims_labelled"] == first["claims_labelled"] == 1
        c.post("/api/mark", {**body, "label": 0, "client_id": "another-mark"})  # a new mark
        assert c.post("/api/mark", {**body, "client_id": ""}, 400)["error"]
    with serving(open_run(run_dir)) as c:  # a restarted server reads the ids from the file
        assert c.post("/api/mark", body)["already_saved"] is True
    rows = [json.loads(x) for x in labels.read_text().splitlines()]
    assert [r.get("client_id") for r in rows] == [
        None, "3f9a0c1d2e4b5a6978c0d1e2f3a4b5c6", "another-mark"]
    read = read_labels(labels)
    assert not read.problems and read.duplicates == 1  # only the changed mark
    assert read.labels[(sid, "faithfulness", 0)].label == 0
    assert read.labels[("nile", "refusal", None)].label == 0  # the row without an id


def test_a_second_page_on_the_same_run_sees_the_marks_of_the_first(run_dir: Path) -> None:
    one, two = open_run(run_dir), open_run(run_dir)
    first = one.view("faithfulness").random_order[0]
    assert two.item("faithfulness", "random", 0)["marks"] == {}
    one.mark("faithfulness", "random", first, 0, 1, None)
    assert two.item("faithfulness", "random", 0)["marks"]["0"]["label"] == 1


def test_the_random_order_is_fixed_by_the_seed_and_labelled_in_sequence(run_dir: Path) -> None:
    def order(seed: int) -> list[str]:
        return open_run(run_dir, seed=seed).view("faithfulness").random_order

    assert order(3) == order(3)
    assert sorted(order(3)) == ["eiffel", "moon", "nile", "tea"]
    assert len({tuple(order(s)) for s in range(8)}) > 1  # the seed decides
    with serving(open_run(run_dir)) as c:
        ahead = c.item(1, "informative")["id"]
        later = c.get("/api/state")
        assert later["frontier"] == 0
        status, body = c.raw("/api/item?metric=faithfulness&order=random&pos=1")
        assert status == 400 and "in sequence" in json.loads(body)["error"]
        second = open_run(run_dir).view("faithfulness").random_order[1]
        c.mark(second, 0, 1, status=400)  # not the next random draw
        assert not (run_dir / LABELS_FILE).exists()
        assert ahead  # the informative order is free to browse


def test_the_informative_order_puts_p_nearest_tau_first_and_keeps_its_labels_apart(
        run_dir: Path) -> None:
    session = open_run(run_dir)
    # min |P − τ| (τ 0.6): nile 0.02 (P 0.62), tea 0.05 (P 0.55), eiffel 0.10, moon 0.30
    assert session.view("faithfulness").informative_order == ["nile", "tea", "eiffel", "moon"]
    with serving(session) as c:
        nile = c.item(0, "informative")
        assert nile["id"] == "nile"
        for i in range(len(nile["claims"])):
            state = c.mark("nile", i, 1, order="informative")
        assert state["informative_done"] == 1 and state["random_done"] == 0
        assert state["interval"]["n_labels"] == 0
        rows = [json.loads(x) for x in (run_dir / LABELS_FILE).read_text().splitlines()]
        assert {r["order"] for r in rows} == {"informative"} and "seed" not in rows[0]
        # the random order reaches it: its marks count only once confirmed there
        random_ids = session.view("faithfulness").random_order
        for pos, sid in enumerate(random_ids):
            shown = c.item(pos)
            if sid == "nile":
                assert shown["status"] == "informative"
                state = c.post("/api/confirm", {"metric": "faithfulness", "id": "nile"})
                assert c.item(pos)["status"] == "random"
                break
            label_sample(c, pos, [1] * len(shown["claims"]))
        assert state["informative_done"] == 0 and state["random_done"] == pos + 1
        # a correction of a random draw from the informative order stays a random label
        c.mark("nile", 0, 0, order="informative")
        assert read_labels(run_dir / LABELS_FILE).labels[("nile", "faithfulness", 0)].order \
            == "random"


def test_the_current_interval_is_the_ppi_estimate_of_the_random_labels(run_dir: Path) -> None:
    from localeval.labels.ppi import ppi_mean
    from localeval.results.folder import load_run

    session = open_run(run_dir)
    values = {"eiffel": [1, 1, 0], "nile": [1, 0], "tea": [None, 0], "moon": [None]}
    with serving(session) as c:
        assert "mean" not in c.get("/api/state")["interval"]
        for pos, sid in enumerate(session.view("faithfulness").random_order):
            label_sample(c, pos, values[sid])
        interval = c.get("/api/state")["interval"]
    scores = {r.id: r.scores["faithfulness"] for r in load_run(run_dir).records}
    humans = {"eiffel": 2 / 3, "nile": 0.5}  # a sample with an unsure claim has no label
    order = [i for i in session.view("faithfulness").random_order if i in humans]
    want = ppi_mean([scores[i] for i in scores], [scores[i] for i in order],
                    [humans[i] for i in order])
    assert interval["n_labels"] == 2 and interval["n_rows"] == 4
    assert interval["unsure"] == 2  # tea and moon: drawn, marked unsure, left out (issue 53)
    assert interval["mean"] == pytest.approx(want.mean)
    assert interval["ci"] == pytest.approx(list(want.ci))
    assert interval["labels_only_ci"] == pytest.approx(list(want.labels_only_ci))
    assert interval["judge_mean"] == pytest.approx(sum(scores.values()) / 4)


def test_a_metric_without_claims_is_graded_per_sample(run_dir: Path) -> None:
    with serving(open_run(run_dir)) as c:
        state = c.get("/api/state?metric=refusal")
        assert state["claims"] is False and state["total"] == 4
        shown = c.item(0, metric="refusal")
        assert shown["claims"] == [] and shown["answer"]
        c.mark(shown["id"], 0, 1, metric="refusal", status=400)  # no claims here
        c.mark(shown["id"], None, 0.7, metric="refusal", status=400)  # 0, 0.5, 1 or unsure
        state = c.mark(shown["id"], None, 0.5, metric="refusal", note="hedged")
        assert state["random_done"] == 1
    (row,) = read_labels(run_dir / LABELS_FILE).labels.values()
    assert (row.id, row.metric, row.claim, row.label, row.note) == (
        shown["id"], "refusal", None, 0.5, "hedged")


def test_a_bad_mark_is_one_line_and_writes_nothing(run_dir: Path) -> None:
    with serving(open_run(run_dir)) as c:
        first = c.item(0)["id"]
        for body in ({"metric": "faithfulness", "order": "random", "id": first, "claim": 0,
                      "label": 2},
                     {"metric": "faithfulness", "order": "random", "id": first, "claim": 99,
                      "label": 1},
                     {"metric": "faithfulness", "order": "sideways", "id": first, "claim": 0,
                      "label": 1},
                     {"metric": "nope", "order": "random", "id": first, "claim": 0, "label": 1},
                     {"metric": "faithfulness", "order": "random", "id": "ghost", "claim": 0,
                      "label": 1},
                     {"metric": "faithfulness", "order": "random", "id": first, "claim": True,
                      "label": 1}):
            answer = c.post("/api/mark", body, status=400)
            assert "\n" not in answer["error"] and answer["error"]
        assert c.raw("/api/mark", body=None)[0] == 404  # a GET of a write
    assert not (run_dir / LABELS_FILE).exists()


def test_contexts_of_a_changed_dataset_row_are_not_shown(run_dir: Path, tmp_path: Path) -> None:
    changed = tmp_path / "changed.jsonl"
    rows = [dict(r) for r in ROWS]
    rows[0]["contexts"] = ["Something else entirely."]
    changed.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    session = open_run(run_dir, data=changed)
    shown = session.item("faithfulness", "informative",
                         session.view("faithfulness").informative_order.index("eiffel"))
    assert shown["contexts"] is None and "changed" in shown["context_note"]
    assert any("changed since the run" in n for n in session.state("faithfulness")["notes"])


# ---- bad input, through the CLI: one line each -------------------------------------------------


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert err.startswith("localeval: error: ") and "\n" not in err, err
    assert "Traceback" not in err
    return err


def test_a_port_in_use_is_one_line(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["label", str(run_dir), "--port", str(port)]) == 2
    err = _one_line(capsys)
    assert f"port {port}" in err and "in use" in err and "--port 0" in err
    assert main(["label", str(run_dir), "--port", "70000"]) == 2
    assert "0 to 65535" in _one_line(capsys)


def test_a_run_folder_still_being_written_is_refused(
        run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from localeval.results.folder import _lock

    fd = _lock(run_dir)  # what a run holds while it writes the folder
    try:
        assert main(["label", str(run_dir)]) == 2
        err = _one_line(capsys)
        assert "still being written" in err and "finished" in err
    finally:
        import os

        os.close(fd)
    from localeval.labelpage.session import writer_pid

    assert writer_pid(run_dir) is None  # released: the page opens
    assert open_run(run_dir).metrics


def test_an_interrupted_run_opens_with_a_note(run_dir: Path) -> None:
    """Its samples are there, but more may come with --resume: the page says so, once."""
    summary = json.loads((run_dir / "summary.json").read_text())
    assert open_run(run_dir).state("faithfulness")["notes"] == []
    (run_dir / "summary.json").write_text(json.dumps({**summary, "complete": False}))
    notes = open_run(run_dir).state("faithfulness")["notes"]
    assert len(notes) == 1 and "interrupted" in notes[0] and "--resume" in notes[0]


def test_other_bad_targets_are_one_line(run_dir: Path, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["label", str(tmp_path / "missing")]) == 2
    assert "not found" in _one_line(capsys)
    assert main(["label", str(run_dir), "--metric", "answer_similarity"]) == 2
    assert "faithfulness, refusal" in _one_line(capsys)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["label", str(empty)]) == 2
    assert "not a run folder" in _one_line(capsys)
    (run_dir / LABELS_FILE).symlink_to(tmp_path / "elsewhere.jsonl")
    assert main(["label", str(run_dir)]) == 2
    assert "symbolic link" in _one_line(capsys)


def test_a_bad_row_in_the_labels_file_is_said_once_and_the_others_count(
        run_dir: Path) -> None:
    first = open_run(run_dir).view("faithfulness").random_order[0]
    (run_dir / LABELS_FILE).write_text(
        json.dumps({"id": first, "metric": "faithfulness", "claim": 0, "label": 1,
                    "unbound": True}) + "\n"
        + '{"id": "x", "metric": "faithfulness", "label": 3}\n', encoding="utf-8")
    session = open_run(run_dir)
    state = session.state("faithfulness")
    assert any(":2:" in n and "label" in n for n in state["notes"])
    assert session.item("faithfulness", "random", 0)["marks"]["0"]["label"] == 1


# ---- review of a generated test set ----------------------------------------------------------

TESTSET = [
    {"id": "g1", "question": "When was the tower finished?", "ground_truth": "In 1889.",
     "reference_contexts": ["It was completed in 1889."], "expected_ids": ["c1"],
     "kind": "single", "language": "en", "source": "tower.txt"},
    {"id": "g2", "question": "Who designed it?", "ground_truth": "{\"answer\": Eiffel",
     "reference_contexts": ["Gustave Eiffel's company designed it."], "expected_ids": ["c2"],
     "kind": "single", "language": "en", "source": "tower.txt"},
    {"id": "g3", "question": "Is the Nile long?", "ground_truth": "About 6,650 km.",
     "reference_contexts": ["It is about 6,650 km long."], "expected_ids": ["c3"],
     "kind": "single", "language": "en", "source": "nile.txt"},
    {"id": "g4", "question": "What is unanswerable here?", "ground_truth": "Not stated.",
     "reference_contexts": [], "expected_ids": [], "kind": "unanswerable", "language": "en",
     "source": "nile.txt"},
]


@pytest.fixture
def testset(tmp_path: Path) -> Path:
    path = tmp_path / "testset.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in TESTSET), encoding="utf-8")
    return path


def test_review_keeps_every_decision_and_writes_the_kept_set(testset: Path) -> None:
    from localeval.labelpage.review import ReviewSession

    with serving(ReviewSession(testset, who="tester")) as c:
        state = c.get("/api/state")
        assert state["kind"] == "review" and state["total"] == 4 and state["start"] == 0
        assert c.get("/api/item?pos=1")["row"]["ground_truth"] == "{\"answer\": Eiffel"
        c.post("/api/decide", {"id": "g1", "decision": "accept"})
        c.post("/api/decide", {"id": "g2", "decision": "reject"}, status=400)  # no reason
        c.post("/api/decide", {"id": "g2", "decision": "reject",
                               "reason": "JSON debris in the answer"})
        c.post("/api/decide", {"id": "g3", "decision": "edit",
                               "question": "How long is the Nile?"})
        c.post("/api/decide", {"id": "g3", "decision": "edit", "question": "  "}, status=400)
        state = c.post("/api/decide", {"id": "g1", "decision": "reject", "reason": "dup"})
        state = c.post("/api/decide", {"id": "g1", "decision": "accept"})  # later wins
        assert (state["accept"], state["reject"], state["edit"], state["undecided"]) == (
            1, 1, 1, 1)
        assert state["start"] == 3
        wrote = c.post("/api/write", {"unreviewed": False})
        assert wrote["rows"] == 2
        kept = [json.loads(x) for x in (testset.with_name("testset.kept.jsonl")
                                        .read_text().splitlines())]
        assert [r["id"] for r in kept] == ["g1", "g3"]
        assert kept[1]["question"] == "How long is the Nile?"
        assert kept[1]["ground_truth"] == "About 6,650 km." and kept[1]["kind"] == "single"
        wrote = c.post("/api/write", {"unreviewed": True})
        assert wrote["rows"] == 3  # g4 not reviewed yet, kept on request
    decisions = testset.with_name("testset.decisions.jsonl").read_text().splitlines()
    assert [json.loads(d)["decision"] for d in decisions] == [
        "accept", "reject", "edit", "reject", "accept"]  # every one, append-only
    assert json.loads(decisions[1])["reason"] == "JSON debris in the answer"
    assert testset.read_text().splitlines()[2] == json.dumps(TESTSET[2])  # never rewritten
    # reopened: the decisions read back
    from localeval.labelpage.review import ReviewSession as Again

    assert Again(testset).state()["undecided"] == 1


def test_review_from_the_cli_writes_the_kept_set(
        testset: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from localeval.labelpage.review import ReviewSession

    ReviewSession(testset).decide("g2", "reject", reason="wrong event")
    assert main(["label", str(testset), "--write-kept", "--unreviewed"]) == 0
    assert "wrote 3 row(s)" in capsys.readouterr().err
    assert main(["label", str(testset), "--write-kept"]) == 2
    assert "no row is kept" in _one_line(capsys)


def test_a_test_set_still_being_generated_or_malformed_is_one_line(
        testset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import os

    from localeval.generate.pipeline import claim

    fd = claim(testset, overwrite=True)  # what a generation into it holds while it runs
    try:
        assert main(["label", str(testset)]) == 2
        err = _one_line(capsys)
        assert "still being generated" in err and f"pid {os.getpid()}" in err
    finally:
        os.close(fd)
    work = testset.with_name("testset.work.jsonl")
    work.write_text('{"fingerprint": "x"}\n', encoding="utf-8")
    assert main(["label", str(testset)]) == 2
    assert "still being generated" in _one_line(capsys)
    testset.unlink()  # a first generation, killed before it wrote the test set
    assert main(["label", str(testset)]) == 2
    assert "still being generated" in _one_line(capsys)
    testset.write_text("".join(json.dumps(r) + "\n" for r in TESTSET), encoding="utf-8")
    work.unlink()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "question": "q"}\n{"id": "a", "question": "q"}\n')
    assert main(["label", str(bad)]) == 2
    assert "bad.jsonl:2" in _one_line(capsys)
    assert main(["label", str(testset), "--seed", "3"]) == 2
    assert "run folder" in _one_line(capsys)


def test_the_core_never_imports_the_page() -> None:
    """A plug-in: only cli/label.py (loaded by name when `label` is the command) reaches it."""
    import ast

    from tests.conftest import REPO

    root = REPO / "localeval"
    for path in root.rglob("*.py"):
        if path.parent.name == "labelpage" or path == root / "cli" / "label.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [
                node.module or ""] if isinstance(node, ast.ImportFrom) else []
            assert not any(n.startswith("localeval.labelpage") for n in names), path


@pytest.mark.model
def test_a_real_judges_claims_show_their_p_and_their_evidence_marked(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """What the 0.5B judge writes in results.jsonl is what the page shows: each claim's P
    against τ, and the context sentence closest to it found and marked in the contexts."""
    from tests.conftest import _need, model_path

    pytest.importorskip("llama_cpp")
    _need(model_path("tiny"))
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    out = tmp_path / "run"
    assert main(["run", str(data), "--out", str(out), "--profile", "tiny", "--metrics",
                 "faithfulness", "--no-cache", "--quiet"]) == 0
    capsys.readouterr()
    session = open_run(out)
    view = session.view("faithfulness")
    assert view.claims and sorted(view.ids) == sorted(r["id"] for r in ROWS)
    closeness = {}
    for pos, sid in enumerate(view.informative_order):
        shown = session.item("faithfulness", "informative", pos)
        assert shown["id"] == sid and shown["tau"] == pytest.approx(0.6)
        for claim in shown["claims"]:
            p = claim["p"]
            assert p is not None and 0.0 <= p <= 1.0
            if claim["rule"] == "judge":
                assert claim["verdict"] == int(p >= shown["tau"])
            assert claim["evidence"] and claim["evidence_found"]
            marked = ["".join(s["t"] for s in segs if claim["i"] in s.get("c", []))
                      for segs in shown["contexts"]]
            assert claim["evidence"] in marked
        closeness[sid] = min(abs(c["p"] - shown["tau"]) for c in shown["claims"])
    assert list(closeness.values()) == sorted(closeness.values())


def add_diagnosis(run_dir: Path) -> None:
    """Give the eiffel sample a diagnosis metric's details: its first claim supported, its
    third a hallucination (as metrics/diagnosis.py writes them), the second not classed."""
    results = run_dir / "results.jsonl"
    records = [json.loads(x) for x in results.read_text(encoding="utf-8").splitlines()]
    for r in records:
        if r["id"] == "eiffel":
            claims = [s["statement"] for s in r["details"]["faithfulness"]["statements"]]
            r["details"]["hallucination"] = {"answer_claims": [
                {"statement": claims[0], "sentence": 1, "class": "supported"},
                {"statement": claims[2], "sentence": 3, "class": "hallucination"}]}
    results.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def test_a_claim_shows_its_diagnosis_class_when_the_run_has_one(run_dir: Path) -> None:
    """Issue 50: a run with the diagnosis metrics' details (answer_claims / truth_claims, each
    claim with its class) shows each claim's class beside it, matched by the claim's text; a
    claim the diagnosis did not class, and a run without it, show none."""
    add_diagnosis(run_dir)
    with serving(open_run(run_dir)) as c:
        order = [c.item(p, "informative")["id"] for p in range(4)]
        shown = c.item(order.index("eiffel"), "informative")
        assert [x["class"] for x in shown["claims"]] == ["supported", None, "hallucination"]
        other = c.item(order.index("nile"), "informative")
        assert {x["class"] for x in other["claims"]} == {None}
    from tests.conftest import REPO

    js = (REPO / "localeval/labelpage/static/label.js").read_text(encoding="utf-8")
    assert "c.class" in js and "hallucination:" in js
