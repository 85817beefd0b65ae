"""Issue 53 items 3, 7 and 8: what the labelling page says is saved is on disk (a hand-written
last row without its newline, a short write), every route but the static files needs the
page's token, labels and review decisions are bound to the content they judged, and `generate`
does not replace a reviewed test set without --overwrite."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import Any

import pytest

from localeval.cli import main
from localeval.labels.store import LABELS_FILE, Label, append_label, read_labels
from tests.test_label_page import TESTSET, make_run, open_run, serving


@pytest.fixture
def run_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    out = make_run(tmp_path)
    capsys.readouterr()
    return out


# ---- saved means on disk ----------------------------------------------------------------------


def test_a_mark_after_a_last_row_without_newline_keeps_both(tmp_path: Path) -> None:
    path = tmp_path / LABELS_FILE
    path.write_text('{"id": "s1", "metric": "faithfulness", "label": 1}', encoding="utf-8")
    append_label(path, Label(id="s2", metric="faithfulness", label=0))
    read = read_labels(path)
    assert read.problems == [] and set(read.labels) == {("s1", "faithfulness", None),
                                                          ("s2", "faithfulness", None)}


def test_the_review_decisions_file_without_newline_keeps_both(tmp_path: Path) -> None:
    from localeval.labelpage.review import Decision, append_decision, read_decisions

    path = tmp_path / "t.decisions.jsonl"
    path.write_text('{"id": "g1", "decision": "accept", "input_hash": "a"}', encoding="utf-8")
    append_decision(path, Decision(id="g2", decision="accept", input_hash="b"))
    decided, problems = read_decisions(path, {"g1": "a", "g2": "b"})
    assert problems == [] and set(decided) == {"g1", "g2"}


def _short_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    """os.write as on a disk that fills up: the first call writes 5 bytes, the next fail."""
    real = os.write
    calls = []

    def write(fd: int, data: Any) -> int:
        calls.append(fd)
        if len(calls) > 1:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd, bytes(data[:5]))

    monkeypatch.setattr(os, "write", write)


def test_a_short_write_is_not_saved_and_the_page_says_so(
        run_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = run_dir / LABELS_FILE
    path.write_text('{"id": "x", "metric": "faithfulness", "label": 1, "unbound": true}\n')
    before = path.read_bytes()
    with serving(open_run(run_dir)) as c:
        sid = c.item(0)["id"]
        _short_writes(monkeypatch)
        status, body = c.raw("/api/mark", {"metric": "faithfulness", "order": "random",
                                           "id": sid, "claim": 0, "label": 0})
        monkeypatch.undo()
        assert status == 500, body
        assert json.loads(body)["error"].startswith("not saved: cannot write")
        assert path.read_bytes() == before  # no torn row left
        assert c.get("/api/state?metric=faithfulness")["claims_labelled"] == 0
        c.mark(sid, 0, 0)  # the disk has room again: saved, and reads back whole
    assert len(read_labels(path).labels) == 2 and read_labels(path).problems == []
    js = (Path(__file__).parents[1] / "localeval/labelpage/static/label.js").read_text()
    assert "showError(err)" in js and "data.error" in js  # the page shows the error it gets


def test_a_short_review_write_is_not_saved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                           ) -> None:
    from localeval.labelpage.review import ReviewSession

    testset = tmp_path / "testset.jsonl"
    testset.write_text("".join(json.dumps(r) + "\n" for r in TESTSET), encoding="utf-8")
    with serving(ReviewSession(testset)) as c:
        _short_writes(monkeypatch)
        status, body = c.raw("/api/decide", {"id": "g1", "decision": "accept"})
        monkeypatch.undo()
        assert status == 500 and json.loads(body)["error"].startswith("not saved")
        assert c.get("/api/state")["undecided"] == 4
    path = testset.with_name("testset.decisions.jsonl")
    assert not path.exists() or path.read_bytes() == b""


# ---- the token --------------------------------------------------------------------------------


def test_every_route_but_the_static_files_needs_the_token(run_dir: Path) -> None:
    with serving(open_run(run_dir)) as c:
        assert c.server.url.startswith(f"http://127.0.0.1:{c.server.port}/?token=")
        token = c.server.token
        for path in ("/", "/api/state", "/api/item?pos=0", "/?token=wrong"):
            status, body = c.raw(path, token=False)
            assert status == 403 and token.encode() not in body, path
        status, page = c.raw(f"/?token={token}", token=False)
        assert status == 200 and token.encode() in page  # the page keeps it for its calls
        assert c.raw("/api/state")[0] == 200 and c.raw("/api/item?pos=0")[0] == 200
        assert c.raw("/static/label.js", token=False)[0] == 200
        # an SSH tunnel on another local port names that port: accepted, with the token
        assert c.raw("/api/state", headers={"Host": "localhost:9000"})[0] == 200
        assert c.raw("/api/state", token=False, headers={"Host": "localhost:9000"})[0] == 403
        for host in ("localhost", "[::1]:9000", "127.0.0.1:80"):
            assert c.raw("/api/state", headers={"Host": host})[0] == 200, host
        for host in ("evil.example:9000", "localhost.evil.example", "127.0.0.1:x", ""):
            assert c.raw("/api/state", headers={"Host": host})[0] == 403, host


# ---- bound to the content ---------------------------------------------------------------------


def test_page_labels_are_bound_and_a_changed_run_does_not_count_them(
        run_dir: Path, tmp_path: Path) -> None:
    with serving(open_run(run_dir)) as c:
        shown = c.item(0)
        for i in range(len(shown["claims"])):
            c.mark(shown["id"], i, 1)
    rows = [json.loads(x) for x in (run_dir / LABELS_FILE).read_text().splitlines()]
    record = next(json.loads(x) for x in (run_dir / "results.jsonl").read_text().splitlines()
                  if json.loads(x)["id"] == shown["id"])
    assert all(r["input_hash"] == record["input_hash"] for r in rows)
    assert [r["statement"] for r in rows] == [
        s["statement"] for s in record["details"]["faithfulness"]["statements"]]
    assert open_run(run_dir).state("faithfulness")["random_done"] == 1
    # the same folder run again on edited rows (--overwrite keeps labels.jsonl)
    from tests.test_label_page import FAKE, ROWS

    data = tmp_path / "new.jsonl"
    data.write_text("".join(json.dumps({**r, "question": r["question"] + "?"}) + "\n"
                            for r in ROWS), encoding="utf-8")
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps(FAKE), encoding="utf-8")
    assert main(["run", str(data), "--out", str(run_dir), "--judge", "fake", "--fake-answers",
                 str(answers), "--metrics", "faithfulness,refusal", "--no-cache", "--quiet",
                 "--overwrite"]) == 0
    again = open_run(run_dir)
    state = again.state("faithfulness")
    assert state["random_done"] == 0 and state["claims_labelled"] == 0
    assert any(f"{len(rows)} label(s) judged another version" in n for n in state["notes"])


def test_review_decisions_apply_only_to_the_row_they_decided(tmp_path: Path) -> None:
    from localeval.labelpage.review import ReviewSession

    testset = tmp_path / "testset.jsonl"
    testset.write_text("".join(json.dumps(r) + "\n" for r in TESTSET), encoding="utf-8")
    review = ReviewSession(testset)
    review.decide("g1", "edit", question="Where is the Eiffel Tower, exactly?")
    review.decide("g2", "accept")
    # generated again: g1 is now another question (ids are positional), g2 is unchanged
    rows = [dict(r) for r in TESTSET]
    rows[0] = {**rows[0], "question": "Who built the tower?", "ground_truth": "Eiffel's firm."}
    testset.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    again = ReviewSession(testset)
    assert set(again.decisions) == {"g2"}
    assert any("1 decision(s) were made on another version of their row" in n
               for n in again.notes)
    kept = again.kept_rows(unreviewed=True)
    assert kept[0]["question"] == "Who built the tower?"  # the old edit is not applied to it


def test_a_review_decision_sent_late_is_bound_to_its_row_and_written_once(
        tmp_path: Path) -> None:
    """The page's queue sends a decision with the row's hash it showed and a client id made
    once: sent again (its request timed out yet was written) it is saved, not written twice,
    also by a restarted server; sent to a server whose test set was generated again since
    (the row changed) it is refused, and nothing is written."""
    from localeval.labelpage.review import ReviewSession

    testset = tmp_path / "testset.jsonl"
    testset.write_text("".join(json.dumps(r) + "\n" for r in TESTSET), encoding="utf-8")
    decisions = testset.with_name("testset.decisions.jsonl")
    with serving(ReviewSession(testset)) as c:
        row = c.get("/api/item?pos=0")["row"]
        assert row["id"] == "g1" and len(row["input_hash"]) >= 16
        body = {"id": "g1", "decision": "reject", "reason": "too vague",
                "input_hash": row["input_hash"], "client_id": "d-1"}
        assert "already_saved" not in c.post("/api/decide", body)
        assert c.post("/api/decide", body)["already_saved"] is True
    with serving(ReviewSession(testset)) as c:
        assert c.post("/api/decide", body)["already_saved"] is True
        state = c.post("/api/decide", {**body, "decision": "accept", "client_id": "d-2"})
        assert state["accept"] == 1 and state["reject"] == 0
    assert [json.loads(x)["client_id"] for x in decisions.read_text().splitlines()] == [
        "d-1", "d-2"]
    rows = [dict(r) for r in TESTSET]  # generated again: g1 is another question now
    rows[0] = {**rows[0], "question": "Who built the tower?"}
    testset.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    before = decisions.read_bytes()
    with serving(ReviewSession(testset)) as c:
        refused = c.post("/api/decide", {**body, "client_id": "d-3"}, 400)["error"]
        assert "changed since the page showed it" in refused
        assert c.get("/api/item?pos=0")["row"]["input_hash"] != row["input_hash"]
    assert decisions.read_bytes() == before


def test_generate_does_not_replace_a_test_set_without_overwrite(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.test_generate import DOCS

    out = tmp_path / "testset.jsonl"
    out.write_text(json.dumps(TESTSET[0]) + "\n", encoding="utf-8")
    out.with_name("testset.decisions.jsonl").write_text("", encoding="utf-8")
    before = out.read_bytes()
    answers = tmp_path / "answers.json"
    answers.write_text("[]", encoding="utf-8")
    args = ["generate", str(DOCS / "en" / "tea.md"), "--out", str(out), "--judge", "fake",
            "--fake-answers", str(answers), "--n", "1", "--no-cache", "--quiet"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--overwrite" in err and "testset.decisions.jsonl" in err
    assert out.read_bytes() == before
    assert main([*args, "--overwrite"]) in (0, 1)  # replaced (no judge answer: no row kept)
    assert out.read_bytes() != before


def test_a_refused_write_on_a_kept_alive_connection_is_not_read_as_the_next_request(
        run_dir: Path) -> None:
    """A POST refused before its body is read (a restarted server's new token) closes the
    connection: its body is never parsed as the browser's next request (that turned the page's
    reload into "400 Bad request syntax")."""
    import http.client

    with serving(open_run(run_dir)) as c:
        conn = http.client.HTTPConnection("127.0.0.1", c.server.port, timeout=10)
        body = json.dumps({"metric": "faithfulness", "order": "random", "id": "x", "claim": 0,
                           "label": 1})
        conn.request("POST", "/api/mark", body, {"X-Localeval-Token": "old",
                                                 "Content-Type": "application/json"})
        first = conn.getresponse()
        assert first.status == 403 and first.getheader("Connection") == "close"
        first.read()
        conn.close()
        conn = http.client.HTTPConnection("127.0.0.1", c.server.port, timeout=10)
        conn.request("GET", f"/?token={c.server.token}")
        assert conn.getresponse().status == 200


def test_a_mark_sent_late_for_a_sample_that_changed_is_refused(run_dir: Path) -> None:
    """The page sends the input_hash (and claim text) it showed; a mark resent after a restart
    for content that changed since is refused, never bound to the new content."""
    path = run_dir / LABELS_FILE
    with serving(open_run(run_dir)) as c:
        shown = c.item(0)
        assert shown["input_hash"]
        base = {"metric": "faithfulness", "order": "random", "id": shown["id"], "claim": 0,
                "label": 1}
        for stale in ({"input_hash": "0" * 16},
                      {"input_hash": shown["input_hash"], "statement": "another claim"}):
            err = c.post("/api/mark", {**base, **stale}, 400)["error"]
            assert "changed since the page showed it" in err
        assert not path.exists()
        c.post("/api/mark", {**base, "input_hash": shown["input_hash"],
                             "statement": shown["claims"][0]["text"]})
    assert len(read_labels(path).labels) == 1
