"""Issue 53 (items 3 and 8, "what we say is saved is on disk"): the labelling page in a real
headless Chromium when saving fails. (a) The server is killed while the page is open and started
again on the same port; (b) the connection drops (Chromium offline) and the server stops
answering (SIGSTOP: a timeout); (c) the disk is full on the server's side (its os.write on the
labels file writes 5 bytes, then ENOSPC). In each case a mark made meanwhile is shown "not saved"
(never "saved"), is kept in the page and in localStorage, and is sent again once the server is
back (or, after a restart, when the new address is opened, as the page asks); every mark the page
called saved is in labels.jsonl on disk, whole.

With LOCALEVAL_SCREENSHOTS=DIR the page's states are kept there as PNGs (label-*.png)."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from localeval.labels.store import LABELS_FILE, read_labels
from tests.conftest import REPO
from tests.test_browser import Page, chromium_page
from tests.test_label_page import make_run
from tests.test_label_page_browser import click, key, screenshot, wait_for

pytestmark = pytest.mark.browser
READY = "document.body && document.body.dataset.ready === '1' && item !== null"

# A server whose os.write on labels.jsonl fails as on a full disk while the file FULL exists
# beside it: 5 bytes written, then ENOSPC (write_all must cut the torn row back).
FULL_DISK_SERVER = """
import errno, os, sys
real = os.write
flag = sys.argv[1]
def write(fd, data):
    if os.path.exists(flag) and os.readlink(f"/proc/self/fd/{fd}").endswith("labels.jsonl"):
        if getattr(write, "torn", False):
            raise OSError(errno.ENOSPC, "No space left on device")
        write.torn = True
        return real(fd, bytes(data[:5]))
    write.torn = False
    return real(fd, data)
os.write = write
from localeval.cli import main
sys.exit(main(["label", *sys.argv[2:]]))
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def server(target: Path, port: int, *, full_flag: Path | None = None
           ) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """`localeval label TARGET --port PORT` in its own process (or the full-disk one); the
    printed URL. A run folder with seed 5: the random order opens on a sample with three
    claims; a test set: its review."""
    argv = ["-c", FULL_DISK_SERVER, str(full_flag)] if full_flag else ["-m", "localeval",
                                                                        "label"]
    seed = ["--seed", "5"] if target.is_dir() else []
    proc = subprocess.Popen([sys.executable, *argv, str(target), "--port", str(port),
                             "--who", "browser", *seed], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout], daemon=True).start()
    try:
        line = lines.get(timeout=60)
        found = re.search(r"http://127\.0\.0\.1:\d+/\?token=[\w-]+", line)
        assert found, line
        yield proc, found.group(0)
    finally:
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.pid, signal.SIGCONT)
            proc.kill()
        proc.wait()


def open_page(page: Page, url: str) -> None:
    page.call("Emulation.setDeviceMetricsOverride", width=1300, height=900,
              deviceScaleFactor=1, mobile=False)
    page.events.clear()
    page.call("Page.navigate", url=url)
    page.wait_event("Page.loadEventFired")
    try:
        wait_for(page, READY)
    except TimeoutError:
        raise AssertionError(page.evaluate("document.body.innerText.slice(0, 500)")) from None
    # quick attempts, so that the test does not wait out the page's defaults (8 s, 2 s)
    page.evaluate("requestTimeout = 1500; retryEvery = 250; 1")


def status(page: Page) -> dict[str, Any]:
    return page.evaluate("""(() => {
        const box = document.getElementById('save');
        return {status: box.dataset.status || null, hidden: box.hidden, text: box.textContent,
                pending: pending.length,
                stored: JSON.parse(localStorage.getItem(pendingKey()) || '[]').length,
                saved: savedMarks.map(m => [m.id, m.claim, m.label]),
                claims: [...document.querySelectorAll('#claims li')].map(li => li.className)};
    })()""")


def wait_status(page: Page, want: str, timeout: float = 30.0) -> dict[str, Any]:
    wait_for(page, f"document.getElementById('save').dataset.status === {want!r}", timeout)
    return status(page)


def on_disk(run_dir: Path) -> dict[tuple[str, int | None], float | None]:
    path = run_dir / LABELS_FILE
    if not path.exists():
        return {}
    read = read_labels(path)
    assert not read.problems, read.problems  # no torn or glued row
    return {(k[0], k[2]): v.label for k, v in read.labels.items()}


def saved_are_on_disk(page: Page, run_dir: Path, called_saved: set[tuple[str, int, float]]
                      ) -> None:
    """Every mark the page called saved (its savedMarks) is on disk with that label."""
    called_saved |= {tuple(m) for m in status(page)["saved"]}  # type: ignore[misc]
    disk = on_disk(run_dir)
    for sid, claim, _ in called_saved:
        assert (sid, claim) in disk, (sid, claim, disk)
    # the latest label per key is what the page last saved for it
    latest = {(sid, claim): label for sid, claim, label in status(page)["saved"]}
    for k, label in latest.items():
        assert disk[k] == label, (k, label, disk[k])


def mark_by_key(page: Page, name: str) -> tuple[str, int]:
    before = page.evaluate("[item.id, focus]")
    key(page, name)
    wait_for(page, f"pending.length > 0 || item.marks[{str(before[1])!r}] !== undefined")
    return before[0], before[1]


def not_saved_shown(page: Page, claim: int) -> dict[str, Any]:
    """The page says not saved, and the claim's mark carries "not saved yet"."""
    got = status(page)
    assert got["status"] in ("unsaved", "restarted") and not got["hidden"], got
    assert "Not saved" in got["text"] and "Saved:" not in got["text"], got
    assert got["pending"] >= 1 and got["stored"] == got["pending"], got
    assert "m-pending" in got["claims"][claim], got
    text = page.evaluate(f"document.querySelector('#claims li[data-claim=\"{claim}\"]')"
                         ".textContent")
    assert "not saved yet" in text
    return got


def test_a_mark_made_while_the_server_is_down_is_not_saved_then_resent_after_restart(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = make_run(tmp_path)
    capsys.readouterr()
    port = free_port()
    called_saved: set[tuple[str, int, float]] = set()
    with chromium_page() as page:
        with server(run_dir, port) as (proc, url):
            open_page(page, url)
            assert status(page)["hidden"]  # nothing said before the first mark
            screenshot(page, 1300, tmp_path / "label-normal-1300.png")
            sid, c0 = mark_by_key(page, "y")
            got = wait_status(page, "saved")
            assert got["pending"] == 0 and "on disk" in got["text"]
            assert on_disk(run_dir) == {(sid, c0): 1.0}
            screenshot(page, 1300, tmp_path / "label-saved-1300.png")
            saved_are_on_disk(page, run_dir, called_saved)
            proc.kill()  # the server goes away with the page open
            proc.wait()
        sid1, c1 = mark_by_key(page, "n")
        assert sid1 == sid
        wait_status(page, "unsaved")
        got = not_saved_shown(page, c1)
        assert "cannot be reached" in got["text"] and f"{sid}, claim {c1 + 1}" in got["text"]
        assert on_disk(run_dir) == {(sid, c0): 1.0}  # nothing claimed that is not there
        screenshot(page, 1300, tmp_path / "label-not-saved-1300.png")
        # the next sample is refused while a mark waits (the random order is in sequence)
        key(page, "Enter")
        wait_for(page, "!document.getElementById('error').hidden")
        assert page.evaluate("item.id") == sid
        with server(run_dir, port) as (_, url2):
            # the page retries: the new server refuses its old token, and it says what to do
            got = wait_status(page, "restarted")
            not_saved_shown(page, c1)
            assert "Open the address it printed" in got["text"]
            screenshot(page, 1300, tmp_path / "label-restarted-1300.png")
            assert on_disk(run_dir) == {(sid, c0): 1.0}
            open_page(page, url2)  # as asked: the marks kept in this browser are sent
            got = wait_status(page, "reconnected")
            assert "1 mark(s) made while the server was away are saved" in got["text"]
            assert got["pending"] == 0 and got["stored"] == 0
            assert on_disk(run_dir) == {(sid, c0): 1.0, (sid, c1): 0.0}
            saved_are_on_disk(page, run_dir, called_saved)
            shown = page.evaluate("item.marks")
            assert shown[str(c1)]["label"] == 0.0  # the page shows the server's copy now
            screenshot(page, 1300, tmp_path / "label-reconnected-1300.png")
            page.events.clear()
            page.call("Page.reload")  # after a reload: what it called saved is on disk
            page.wait_event("Page.loadEventFired")
            wait_for(page, READY)
            assert status(page)["pending"] == 0
            assert page.evaluate("item.marks")[str(c1)]["label"] == 0.0
    assert len(called_saved) == 2


def test_a_dropped_connection_or_a_server_that_does_not_answer_is_not_saved(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = make_run(tmp_path)
    capsys.readouterr()
    called_saved: set[tuple[str, int, float]] = set()
    with chromium_page() as page, server(run_dir, 0) as (proc, url):
        open_page(page, url)
        sid, c0 = mark_by_key(page, "y")
        wait_status(page, "saved")
        # the network drops: every request fails
        page.call("Network.emulateNetworkConditions", offline=True, latency=0,
                  downloadThroughput=-1, uploadThroughput=-1)
        _, c1 = mark_by_key(page, "n")
        wait_status(page, "unsaved")
        not_saved_shown(page, c1)
        assert on_disk(run_dir) == {(sid, c0): 1.0}
        page.call("Network.emulateNetworkConditions", offline=False, latency=0,
                  downloadThroughput=-1, uploadThroughput=-1)
        got = wait_status(page, "reconnected")  # sent again by itself
        assert got["pending"] == 0
        assert on_disk(run_dir) == {(sid, c0): 1.0, (sid, c1): 0.0}
        saved_are_on_disk(page, run_dir, called_saved)
        # the server stops answering (stopped, not gone): the call times out
        os.kill(proc.pid, signal.SIGSTOP)
        try:
            _, c2 = mark_by_key(page, "u")
            got = wait_status(page, "unsaved")
            assert "no answer from the labelling server within 1.5 s" in got["text"]
            not_saved_shown(page, c2)
        finally:
            os.kill(proc.pid, signal.SIGCONT)
        got = wait_status(page, "reconnected")
        assert got["pending"] == 0
        # the timed-out requests were written once the server woke, and the one that answered
        # was one of them: the mark's client id makes it one row
        assert on_disk(run_dir) == {(sid, c0): 1.0, (sid, c1): 0.0, (sid, c2): None}
        rows = [json.loads(x) for x in (run_dir / LABELS_FILE).read_text().splitlines()]
        assert [r["claim"] for r in rows] == [c0, c1, c2]
        assert len({r["client_id"] for r in rows}) == 3
        saved_are_on_disk(page, run_dir, called_saved)
    assert len(called_saved) == 3


def test_a_full_disk_on_the_server_is_not_saved_and_nothing_torn_is_left(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = make_run(tmp_path)
    capsys.readouterr()
    full = tmp_path / "FULL"
    labels = run_dir / LABELS_FILE
    called_saved: set[tuple[str, int, float]] = set()
    with chromium_page() as page, server(run_dir, 0, full_flag=full) as (_, url):
        open_page(page, url)
        sid, c0 = mark_by_key(page, "y")
        wait_status(page, "saved")
        before = labels.read_bytes()
        full.touch()  # the disk fills up
        click(page, '#claims li[data-claim="1"] button.mark.no')
        got = wait_status(page, "unsaved")
        not_saved_shown(page, 1)
        assert "No space left on device" in got["text"] and "cannot write" in got["text"]
        assert "Free the disk" in got["text"] and "same --port" not in got["text"]
        screenshot(page, 1300, tmp_path / "label-disk-full-1300.png")
        # it keeps failing while the disk is full, and never leaves part of a row
        tried = page.evaluate("attempts")
        wait_for(page, f"attempts >= {tried + 2}")
        wait_status(page, "unsaved")
        assert labels.read_bytes() == before
        full.unlink()  # room again: the next attempt writes it
        wait_status(page, "reconnected")
        assert on_disk(run_dir) == {(sid, c0): 1.0, (sid, 1): 0.0}
        saved_are_on_disk(page, run_dir, called_saved)
    assert len(called_saved) == 2


def test_each_claim_shows_its_diagnosis_class(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 50: with the diagnosis metrics' details in the run, the class is beside the claim."""
    from tests.test_label_page import add_diagnosis

    run_dir = make_run(tmp_path)
    capsys.readouterr()
    add_diagnosis(run_dir)
    with chromium_page() as page, server(run_dir, 0) as (_, url):
        open_page(page, url)
        chips = page.evaluate("""[...document.querySelectorAll('#claims li')].map(li => {
            const c = li.querySelector('.dclass');
            return c ? [c.dataset.class, c.textContent] : null; })""")
        screenshot(page, 1300, tmp_path / "label-diagnosis-1300.png")
    assert chips[1] is None
    assert chips[0][0] == "supported" and chips[2][0] == "hallucination"
    assert "hallucination: wrong, and no context entails it" in chips[2][1]


def test_review_decisions_made_while_the_server_is_away_are_kept_bound_and_sent_once(
        tmp_path: Path) -> None:
    """The review page queues its decisions as the labelling page queues marks: one made with
    the server down is shown "not saved" on its row, kept in localStorage and sent when the
    restarted server's address is opened; one whose row changed meanwhile (the test set
    generated again) is refused and never applied; one whose request timed out (the server
    stopped) is written once, though the request that timed out was written too."""
    from localeval.labelpage.review import row_hash
    from tests.test_label_page import TESTSET

    testset = tmp_path / "testset.jsonl"
    testset.write_text("".join(json.dumps(r) + "\n" for r in TESTSET), encoding="utf-8")
    decisions = testset.with_name("testset.decisions.jsonl")

    def written() -> list[dict[str, Any]]:
        return [json.loads(x) for x in decisions.read_text().splitlines()] \
            if decisions.exists() else []

    port = free_port()
    with chromium_page() as page:
        with server(testset, port) as (proc, url):
            open_page(page, url)
            assert page.evaluate("item.row.id") == "g1" and status(page)["hidden"]
            key(page, "a")
            got = wait_status(page, "saved")
            assert "the decision is on disk" in got["text"]
            wait_for(page, "item.row.id === 'g2'")
            proc.kill()
            proc.wait()
        key(page, "r")  # g2 rejected with a reason, the server away
        wait_for(page, "document.activeElement.id === 'reason'")
        page.call("Input.insertText", text="the answer is JSON debris")
        key(page, "Enter")
        got = wait_status(page, "unsaved")
        assert "Not saved: 1 decision(s) wait to be sent" in got["text"], got
        assert "cannot be reached" in got["text"] and "row g2: Rejected" in got["text"]
        assert got["pending"] == got["stored"] == 1
        banner = page.evaluate("document.getElementById('rdecision').textContent")
        assert page.evaluate("item.row.id") == "g2" and "not saved yet" in banner
        assert [d["id"] for d in written()] == ["g1"]
        screenshot(page, 1300, tmp_path / "review-not-saved-1300.png")
        with server(testset, port) as (proc, url):
            wait_status(page, "restarted")
            open_page(page, url)  # as asked: the decision kept in this browser is sent
            got = wait_status(page, "reconnected")
            assert "1 decision(s) made while the server was away are saved" in got["text"]
            assert got["pending"] == got["stored"] == 0
            assert [(d["id"], d["decision"], d.get("reason")) for d in written()] == [
                ("g1", "accept", None), ("g2", "reject", "the answer is JSON debris")]
            assert page.evaluate("item.row.id") == "g3"  # the first row not decided
            proc.kill()
            proc.wait()
        key(page, "a")  # g3 accepted, the server away; then the test set changes under it
        wait_status(page, "unsaved")
        rows = [dict(r) for r in TESTSET]
        rows[2] = {**rows[2], "question": "How long is the Nile, in miles?"}
        testset.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        with server(testset, port) as (proc, url):
            open_page(page, url)
            got = wait_status(page, "refused")
            assert "row 'g3' changed since the page showed it" in got["text"], got
            assert got["pending"] == got["stored"] == 0
            assert len(written()) == 2  # never applied to the new row
            assert page.evaluate("[item.row.id, item.row.question]") == [
                "g3", "How long is the Nile, in miles?"]
            os.kill(proc.pid, signal.SIGSTOP)  # the server stops answering: a timeout
            try:
                key(page, "a")
                got = wait_status(page, "unsaved")
                assert "no answer from the labelling server within 1.5 s" in got["text"]
            finally:
                os.kill(proc.pid, signal.SIGCONT)
            wait_status(page, "reconnected")
            made = written()
            assert [(d["id"], d["decision"]) for d in made] == [
                ("g1", "accept"), ("g2", "reject"), ("g3", "accept")]  # once
            assert made[2]["input_hash"] == row_hash(rows[2], 3)  # the row as it is now
            assert len({d["client_id"] for d in made}) == 3
