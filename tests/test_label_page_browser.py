"""The labelling page in a real headless Chromium (the harness of tests/test_browser.py): five
claims labelled by keys and clicks, the server killed mid-way and started again, every mark found
in the page and in the labels file; no console error, no request beyond the server. Screenshots at
1300 and 800 px wide (kept in $LOCALEVAL_SCREENSHOTS when set)."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from localeval.labels.store import LABELS_FILE, read_labels
from tests.conftest import REPO
from tests.test_browser import Page, _keep, chromium_page
from tests.test_label_page import make_run

pytestmark = pytest.mark.browser

KEYS = {"y": ("KeyY", 89), "n": ("KeyN", 78), "u": ("KeyU", 85), "Enter": ("Enter", 13),
        "ArrowRight": ("ArrowRight", 39), "a": ("KeyA", 65), "r": ("KeyR", 82),
        "e": ("KeyE", 69)}


@contextlib.contextmanager
def label_server(target: Path, *extra: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """`python -m localeval label TARGET --port 0` in a process of its own; its printed URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "localeval", "label", str(target), "--port", "0", *extra],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout], daemon=True).start()
    try:
        line = lines.get(timeout=60)
        found = re.search(r"http://127\.0\.0\.1:\d+/\?token=[\w-]+", line)  # as printed
        assert found, line
        yield proc, found.group(0)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def key(page: Page, name: str) -> None:
    code, vk = KEYS[name]
    text = {"Enter": "\r"}.get(name, name if len(name) == 1 else "")
    page.call("Input.dispatchKeyEvent", type="keyDown", key=name, code=code, text=text,
              windowsVirtualKeyCode=vk, nativeVirtualKeyCode=vk)
    page.call("Input.dispatchKeyEvent", type="keyUp", key=name, code=code,
              windowsVirtualKeyCode=vk, nativeVirtualKeyCode=vk)


def click(page: Page, selector: str) -> None:
    """A real mouse click in the middle of the element."""
    box = page.evaluate(f"""(() => {{
        const e = document.querySelector({selector!r});
        e.scrollIntoView({{block: "center"}});
        const r = e.getBoundingClientRect();
        return [r.x + r.width / 2, r.y + r.height / 2];
    }})()""")
    for kind in ("mousePressed", "mouseReleased"):
        page.call("Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1], button="left",
                  clickCount=1)


def wait_for(page: Page, expression: str, timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = page.evaluate(expression)
        if value:
            return value
        time.sleep(0.05)
    raise TimeoutError(expression)


def open_at(page: Page, url: str, width: int) -> None:
    page.call("Emulation.setDeviceMetricsOverride", width=width, height=900,
              deviceScaleFactor=1, mobile=False)
    page.events.clear()
    page.call("Page.navigate", url=url)
    page.wait_event("Page.loadEventFired")
    wait_for(page, "document.body.dataset.ready === '1' && item !== null")


def shown(page: Page) -> dict[str, Any]:
    """The sample on the page: id, focused claim, marks, the classes its claims carry."""
    return page.evaluate("""(() => ({
        id: item.id, focus: focus, marks: item.marks, status: item.status,
        classes: [...document.querySelectorAll('#claims li')].map(li => li.className),
        error: document.getElementById('error').hidden ? null
               : document.getElementById('error').textContent,
    }))()""")


def rows(run_dir: Path) -> int:
    path = run_dir / LABELS_FILE
    return len(path.read_text().splitlines()) if path.exists() else 0


def mark(page: Page, run_dir: Path, how: str, value: float | None,
         expected: dict[tuple[str, int], float | None]) -> None:
    """Mark the focused claim by a key ("y", "n", "u") or a click on its button ("click:yes",
    "click:no", "click:unsure"); wait for the row; go on to the next sample when all are
    marked."""
    before = shown(page)
    n = rows(run_dir)
    if how.startswith("click:"):
        click(page, f'#claims li[data-claim="{before["focus"]}"] button.mark.{how[6:]}')
    else:
        key(page, how)
    deadline = time.monotonic() + 20
    while rows(run_dir) == n:
        assert time.monotonic() < deadline, shown(page)
        time.sleep(0.05)
    expected[(before["id"], before["focus"])] = value
    wait_for(page, f"item.marks[{str(before['focus'])!r}] !== undefined")
    after = shown(page)
    if after["status"] == "random":  # every claim marked: the next sample, by the key
        key(page, "Enter")
        wait_for(page, f"item === null || item.id !== {before['id']!r}")


def problems(page: Page, port_url: str) -> list[str]:
    page.call("Runtime.evaluate", expression="1")  # drain the events
    out = []
    for e in page.events:
        p = e.get("params", {})
        if e["method"] == "Runtime.consoleAPICalled" and p.get("type") in ("error", "warning"):
            out.append(f"console.{p['type']}: {p.get('args')}")
        elif e["method"] == "Runtime.exceptionThrown":
            out.append(f"exception: {p.get('exceptionDetails')}")
        elif e["method"] == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            out.append(f"log: {p['entry'].get('text')}")
        elif e["method"] == "Network.requestWillBeSent":
            url = p.get("request", {}).get("url", "")
            if not url.startswith((port_url.split("?")[0], "data:")):
                out.append(f"request beyond the server: {url}")
    return out


def screenshot(page: Page, width: int, shot: Path) -> None:
    page.call("Emulation.setDeviceMetricsOverride", width=width, height=900,
              deviceScaleFactor=1, mobile=False)
    page.evaluate("window.scrollTo(0, 0)")  # the sticky header where a reader sees it
    time.sleep(0.2)
    height = page.evaluate("document.documentElement.scrollHeight")
    overflow = page.evaluate("document.documentElement.scrollWidth")
    assert overflow <= width, f"the page is {overflow} px wide at a {width} px window"
    data = page.call("Page.captureScreenshot", format="png", captureBeyondViewport=True,
                     clip={"x": 0, "y": 0, "width": width, "height": min(int(height), 3000),
                           "scale": 1})
    png = base64.b64decode(data["data"])
    assert png.startswith(b"\x89PNG") and len(png) > 10_000
    shot.write_bytes(png)
    _keep(shot)


def test_five_claims_by_keys_and_clicks_survive_a_killed_server(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = make_run(tmp_path)
    capsys.readouterr()
    expected: dict[tuple[str, int], float | None] = {}
    plan = [("y", 1.0), ("click:no", 0.0), ("u", None), ("click:yes", 1.0), ("n", 0.0)]
    with chromium_page() as page:
        with label_server(run_dir, "--who", "browser") as (proc, url):
            open_at(page, url, 1300)
            assert page.evaluate("document.querySelectorAll('#contexts .ev-c').length") > 0
            screenshot(page, 1300, tmp_path / "label-1300.png")
            screenshot(page, 800, tmp_path / "label-800.png")
            page.call("Emulation.setDeviceMetricsOverride", width=1300, height=900,
                      deviceScaleFactor=1, mobile=False)
            for how, value in plan[:3]:
                mark(page, run_dir, how, value, expected)
            assert not problems(page, url)
            proc.kill()  # mid-way: SIGKILL, nothing flushed on the way out
            proc.wait()
        assert rows(run_dir) == 3
        with label_server(run_dir, "--who", "browser") as (_, url):
            open_at(page, url, 1300)
            # every mark made before the kill is on the page again
            now = shown(page)
            for (sid, claim), value in expected.items():
                if sid == now["id"]:
                    assert now["marks"][str(claim)]["label"] == value
                    cls = {1.0: "m-yes", 0.0: "m-no", None: "m-unsure"}[value]
                    assert cls in now["classes"][claim]
            marked_here = {c for sid, c in expected if sid == now["id"]}
            assert now["focus"] == min(set(range(len(now["classes"]))) - marked_here)
            progress = page.evaluate("document.getElementById('progress').textContent")
            done = len({sid for sid, _ in expected if sid != now["id"]})
            assert f"{done} of 4" in progress
            for how, value in plan[3:]:
                mark(page, run_dir, how, value, expected)
            page.call("Runtime.evaluate", expression="document.getElementById('lang').click()")
            wait_for(page, "document.documentElement.lang === 'zh-CN'")
            screenshot(page, 800, tmp_path / "label-800-zh.png")
            assert not problems(page, url)
    read = read_labels(run_dir / LABELS_FILE)
    assert not read.problems
    got = {(k[0], k[2]): v.label for k, v in read.labels.items()}
    assert got == expected and len(got) == 5
    assert {(v.order, v.who, v.seed) for v in read.labels.values()} == {("random", "browser", 0)}


def test_the_review_page_accepts_rejects_and_edits_by_keys(tmp_path: Path) -> None:
    import json

    from tests.test_label_page import TESTSET

    testset = tmp_path / "testset.jsonl"
    testset.write_text("".join(json.dumps(r) + "\n" for r in TESTSET), encoding="utf-8")
    decisions = testset.with_name("testset.decisions.jsonl")

    def n_decisions() -> int:
        return len(decisions.read_text().splitlines()) if decisions.exists() else 0

    def until(n: int) -> None:
        deadline = time.monotonic() + 20
        while n_decisions() < n:
            assert time.monotonic() < deadline
            time.sleep(0.05)

    with chromium_page() as page, label_server(testset) as (_, url):
        page.call("Emulation.setDeviceMetricsOverride", width=1300, height=900,
                  deviceScaleFactor=1, mobile=False)
        page.events.clear()
        page.call("Page.navigate", url=url)
        page.wait_event("Page.loadEventFired")
        wait_for(page, "document.body.dataset.ready === '1'")
        key(page, "a")  # g1 accepted
        until(1)
        wait_for(page, "item.row.id === 'g2'")
        key(page, "r")  # g2 rejected with a reason typed in
        wait_for(page, "document.activeElement.id === 'reason'")
        page.call("Input.insertText", text="JSON debris in the answer")
        key(page, "Enter")
        until(2)
        wait_for(page, "item.row.id === 'g3'")
        key(page, "e")  # g3: the question edited
        wait_for(page, "document.activeElement.id === 'equestion'")
        page.evaluate("document.getElementById('equestion').value = 'How long is the Nile?'")
        click(page, "#edit-save")
        until(3)
        wait_for(page, "item.row.id === 'g4'")
        screenshot(page, 1300, tmp_path / "review-1300.png")
        screenshot(page, 800, tmp_path / "review-800.png")
        click(page, "#write")
        wait_for(page, "document.getElementById('written').textContent !== ''")
        assert not problems(page, url)
    made = [json.loads(x) for x in decisions.read_text().splitlines()]
    assert [(d["id"], d["decision"]) for d in made] == [
        ("g1", "accept"), ("g2", "reject"), ("g3", "edit")]
    assert made[1]["reason"] == "JSON debris in the answer"
    kept = [json.loads(x) for x in testset.with_name("testset.kept.jsonl").read_text()
            .splitlines()]
    assert [(r["id"], r["question"]) for r in kept] == [
        ("g1", TESTSET[0]["question"]), ("g3", "How long is the Nile?")]


def test_a_conversations_turn_is_shown_with_the_conversation_before_it(tmp_path: Path) -> None:
    """Issue 51 item 4: the page labels one assistant turn of a conversation, the conversation
    before it drawn as a chat above the question; each mark is bound to the turn."""
    from tests.test_label_page import open_run
    from tests.test_labels_turns import make_conversation_run

    run_dir = make_conversation_run(tmp_path)
    seed = next(s for s in range(50) if open_run(run_dir, seed=s).view("faithfulness")
                .random_order[0].endswith("#turn4"))
    with chromium_page() as page, label_server(run_dir, "--seed", str(seed)) as (_, url):
        open_at(page, url, 1300)
        got = page.evaluate("""(() => ({
            id: item.id, hidden: document.getElementById('history-box').hidden,
            head: document.getElementById('history-head').textContent,
            messages: [...document.querySelectorAll('#history li')].map(li => li.className),
            claims: item.claims.length,
            interval: document.getElementById('interval').textContent}))()""")
        conversation = got["id"].split("#")[0]
        assert not got["hidden"] and got["head"].startswith(f"Conversation {conversation}, "
                                                           "before its turn 4")
        assert got["messages"] == ["msg user", "msg assistant", "msg user"]
        assert got["interval"].endswith("over 7 turns")
        screenshot(page, 1300, tmp_path / "label-turn-1300.png")
        expected: dict[tuple[str, int], float | None] = {}
        for _ in range(got["claims"]):
            mark(page, run_dir, "y", 1.0, expected)
        assert not problems(page, url)
    rows = [json.loads(x) for x in (run_dir / LABELS_FILE).read_text().splitlines()]
    assert {(r["id"], r["turn"]) for r in rows} == {(conversation, 4)}
    assert len(rows) == got["claims"] and all(r["turn_text"] for r in rows)
