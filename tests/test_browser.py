"""report.html, compare.html and meta_eval.html in a real headless Chromium: they load offline
with no console error, no failed request and no CSP violation, and the charts are drawn (SVG
bars with a height, the mean line, the CI band). Talks to Chromium over the DevTools protocol
with a small stdlib websocket client. Skips when /usr/bin/chromium is absent, except in CI
(CI=true), where scripts/test.sh installs it (scripts/install_chromium.sh).

Set LOCALEVAL_SCREENSHOTS=DIR to keep the screenshots for a look.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import queue
import re
import shutil
import socket
import struct
import subprocess
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from localeval.cli import main
from tests.conftest import EXAMPLE, fake_run_args, true_to_sentences

CHROMIUM = Path(os.environ.get("LOCALEVAL_CHROMIUM", "/usr/bin/chromium"))
pytestmark = pytest.mark.browser

# In the order the example's rows ask (seed-roe: 7 sentences in 4 groups, en-eiffel: 3 in 2,
# then one sentence each); the same answers again for the second run.
YES, NO = {"verdict": 1}, {"verdict": 0}
FAKE_ANSWERS = {
    "faithfulness_statements": true_to_sentences([
        {"statements": [["sa", "sb"], ["sc"]]}, {"statements": [["sd"], ["se"]]},
        {"statements": [["sf"], ["sg"]]}, {"statements": [["<b>sh</b>"]]},
        {"statements": [["sa"], ["sb"]]}, {"statements": [["sc"]]},
        {"statements": [["sa"]]},
        {"statements": [["sa", "sb"]]},
    ])
    * 2,
    "faithfulness_verdicts": [
        {"verdicts": [YES, NO] * 4},
        {"verdicts": [YES, YES, NO]},
        {"verdicts": [YES]},
        {"verdicts": [NO, NO]},
    ]
    * 2,
}


def _chromium() -> Path:
    if not CHROMIUM.exists():
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(
                f"{CHROMIUM} is missing in CI; scripts/test.sh runs scripts/install_chromium.sh"
            )
        pytest.skip("chromium not installed (bash scripts/install_chromium.sh)")
    return CHROMIUM


# ---- a minimal websocket client (RFC 6455, text frames, client masking) -----------------------


class WebSocket:
    def __init__(self, url: str, timeout: float = 30.0) -> None:
        m = re.match(r"ws://([^:/]+):(\d+)(/.*)", url)
        assert m, url
        host, port, path = m.group(1), int(m.group(2)), m.group(3)
        self.sock = socket.create_connection((host, port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            (
                f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                "Sec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ConnectionError("websocket handshake: connection closed")
            head += chunk
        status = head.split(b"\r\n", 1)[0]
        assert b" 101 " in status, status
        self.buffer = head.split(b"\r\n\r\n", 1)[1]

    def _read(self, n: int) -> bytes:
        while len(self.buffer) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("websocket closed")
            self.buffer += chunk
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    def send(self, text: str) -> None:
        payload = text.encode()
        head = bytearray([0x81])
        n = len(payload)
        if n < 126:
            head.append(0x80 | n)
        elif n < 65536:
            head += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            head += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        self.sock.sendall(
            bytes(head) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        )

    def recv(self) -> str:
        message = b""
        while True:
            b1, b2 = self._read(2)
            n = b2 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            data = self._read(n)
            opcode = b1 & 0x0F
            if opcode == 0x8:
                raise ConnectionError("websocket closed by the browser")
            if opcode in (0x9, 0xA):  # ping/pong: ignore
                continue
            message += data
            if b1 & 0x80:
                return message.decode()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


class Page:
    """One DevTools page session: send commands, collect events."""

    def __init__(self, ws: WebSocket) -> None:
        self.ws = ws
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        my_id = self.next_id
        self.ws.send(json.dumps({"id": my_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == my_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)

    def wait_event(self, method: str, timeout: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        for event in self.events:
            if event["method"] == method:
                return event
        while time.monotonic() < deadline:
            msg = json.loads(self.ws.recv())
            if "method" in msg:
                self.events.append(msg)
                if msg["method"] == method:
                    return msg
        raise TimeoutError(method)

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(result["exceptionDetails"])
        return result["result"].get("value")


@contextlib.contextmanager
def chromium_page() -> Iterator[Page]:
    binary = _chromium()
    profile = tempfile.mkdtemp(prefix="localeval-chromium-")
    proc = subprocess.Popen(
        [
            str(binary),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--disable-default-apps",
            "--no-first-run",
            "--no-default-browser-check",
            "--mute-audio",
            f"--user-data-dir={profile}",
            "--remote-debugging-port=0",
            "--remote-debugging-address=127.0.0.1",
            "--window-size=1200,900",
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    ws = None
    try:
        # drain stderr in a thread (a full pipe would block chromium) and find the DevTools port
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=lambda: [lines.put(x) for x in proc.stderr], daemon=True).start()
        port = None
        deadline = time.monotonic() + 60
        while port is None and time.monotonic() < deadline:
            try:
                line = lines.get(timeout=1)
            except queue.Empty:
                if proc.poll() is not None:
                    raise RuntimeError(f"chromium exited with {proc.returncode}") from None
                continue
            m = re.search(r"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line)
            port = int(m.group(1)) if m else None
        assert port, "chromium did not open its DevTools port within 60 s"
        targets = []
        for _ in range(50):
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as r:
                targets = [t for t in json.load(r) if t.get("type") == "page"]
            if targets:
                break
            time.sleep(0.1)
        ws = WebSocket(targets[0]["webSocketDebuggerUrl"])
        page = Page(ws)
        for domain in ("Page", "Runtime", "Log", "Network"):
            page.call(f"{domain}.enable")
        yield page
    finally:
        if ws is not None:
            ws.close()
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(profile, ignore_errors=True)


def load_and_check(page: Page, path: Path, shot: Path) -> dict[str, Any]:
    """Open a local HTML file; fail on any console error, exception or network request."""
    problems = open_page(page, path)
    assert not problems, problems
    return screenshot(page, shot)


def open_page(page: Page, path: Path) -> list[str]:
    """Navigate to a local file; every console error/warning, exception and fetch, as text."""
    page.events.clear()
    page.call("Page.navigate", url=path.resolve().as_uri())
    page.wait_event("Page.loadEventFired")
    time.sleep(0.3)  # let late console messages arrive
    page.call("Runtime.evaluate", expression="1")  # drains pending events into page.events
    problems = []
    for e in page.events:
        p = e.get("params", {})
        if e["method"] == "Runtime.consoleAPICalled" and p.get("type") in (
            "error",
            "assert",
            "warning",
        ):
            problems.append(f"console.{p['type']}: {p.get('args')}")
        elif e["method"] == "Runtime.exceptionThrown":
            problems.append(f"exception: {p.get('exceptionDetails')}")
        elif e["method"] == "Log.entryAdded" and p.get("entry", {}).get("level") in (
            "error",
            "warning",
        ):
            problems.append(f"log {p['entry']['level']}: {p['entry'].get('text')}")
        elif e["method"] == "Network.requestWillBeSent":
            url = p.get("request", {}).get("url", "")
            if not url.startswith(("file:", "data:")):
                problems.append(f"network request: {url}")
        elif e["method"] == "Network.loadingFailed":
            problems.append(f"failed load: {p}")
    return problems


def screenshot(page: Page, shot: Path) -> dict[str, Any]:
    page.call(
        "Emulation.setDeviceMetricsOverride",
        width=1200,
        height=900,
        deviceScaleFactor=1,
        mobile=False,
    )
    height = page.evaluate("document.documentElement.scrollHeight")
    shot_data = page.call(
        "Page.captureScreenshot",
        format="png",
        captureBeyondViewport=True,
        clip={"x": 0, "y": 0, "width": 1200, "height": min(int(height), 4000), "scale": 1},
    )
    png = base64.b64decode(shot_data["data"])
    assert png.startswith(b"\x89PNG") and len(png) > 10_000
    shot.write_bytes(png)
    return {"height": height}


def _keep(shot: Path) -> None:
    keep = os.environ.get("LOCALEVAL_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / shot.name)


def _run_example(tmp_path: Path, out: Path) -> None:
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps(FAKE_ANSWERS), encoding="utf-8")
    args = fake_run_args(EXAMPLE, answers, out, metrics="faithfulness,answer_similarity")
    assert main(args) == 0


def test_example_report_renders_in_chromium_without_errors(tmp_path: Path) -> None:
    out = tmp_path / "run"
    _run_example(tmp_path, out)
    with chromium_page() as page:
        load_and_check(page, out / "report.html", tmp_path / "report.png")
        charts = page.evaluate("""(() => {
            const hist = [...document.querySelectorAll('svg.chart.hist')];
            return {
              hist: hist.map(s => ({
                key: s.dataset.key,
                width: s.getBoundingClientRect().width,
                bars: [...s.querySelectorAll('rect.bar')].filter(
                          r => r.getBoundingClientRect().height > 0).length,
                mean: s.querySelectorAll('line.mean').length,
                ci: s.querySelectorAll('rect.ci').length})),
              forestDots: document.querySelectorAll('svg.forest circle.dot').length,
              title: document.title,
              verdictMarks: document.querySelectorAll('.ok, .bad').length,
              injected: document.querySelectorAll('td b').length,
            };
        })()""")
    _keep(tmp_path / "report.png")
    keys = {h["key"]: h for h in charts["hist"]}
    assert set(keys) == {"faithfulness", "faithfulness.all_supported", "answer_similarity",
                         "answer_similarity.cosine"}
    for h in keys.values():
        assert h["width"] > 100 and h["bars"] >= 1 and h["mean"] == 1 and h["ci"] == 1
    assert charts["forestDots"] == 4
    assert charts["verdictMarks"] >= 4  # ✓/✗ of the lowest samples' statements
    assert charts["injected"] == 0  # the judge's text is escaped, never markup
    assert "localeval report" in charts["title"]


def test_compare_page_renders_in_chromium(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    _run_example(tmp_path, a)
    _run_example(tmp_path, b)
    assert main(["compare", str(a), str(b), "--out", str(tmp_path / "cmp")]) == 0
    capsys.readouterr()
    with chromium_page() as page:
        load_and_check(page, tmp_path / "cmp" / "compare.html", tmp_path / "compare.png")
        dots = page.evaluate("document.querySelectorAll('svg.forest.diff circle.dot').length")
    _keep(tmp_path / "compare.png")
    # faithfulness, .all_supported, answer_similarity and .cosine (the .greedy twin not shown)
    assert dots == 4


def test_meta_eval_page_renders_in_chromium(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """meta_eval.html is laid out on the report's page kit: same CSS, verdict marks, no fetch."""
    from tests.test_meta_eval import PAIRS, all_verdicts, fake_answers, pairs_file

    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps(fake_answers(all_verdicts(PAIRS))), encoding="utf-8")
    out = tmp_path / "meta"
    assert main(["meta-eval", str(pairs_file(tmp_path)), "--metrics", "faithfulness",
                 "--out", str(out), "--judge", "fake", "--fake-answers", str(answers),
                 "--no-cache", "--quiet", "--claims", "statements"]) == 0
    capsys.readouterr()
    with chromium_page() as page:
        load_and_check(page, out / "meta_eval.html", tmp_path / "meta_eval.png")
        got = page.evaluate("""(() => ({
            cases: document.querySelectorAll('section.case').length,
            marks: document.querySelectorAll('.ok, .bad').length,
            numeric: document.querySelectorAll('td.num').length,
            injected: document.querySelectorAll('td b').length,
        }))()""")
    _keep(tmp_path / "meta_eval.png")
    assert got["cases"] == 2 and got["marks"] >= 2 and got["numeric"] > 0
    assert got["injected"] == 0


def test_the_check_itself_catches_errors_and_fetches(tmp_path: Path) -> None:
    """The browser check must be able to fail: a console error, an exception and a fetch."""
    bad = tmp_path / "bad.html"
    bad.write_text(
        "<!DOCTYPE html><html><head><title>x</title></head><body>"
        "<script>console.error('boom'); undefinedFunction();</script>"
        '<img src="http://127.0.0.1:9/x.png"></body></html>',
        encoding="utf-8",
    )
    with chromium_page() as page:
        problems = open_page(page, bad)
    kinds = {p.split(":", 1)[0] for p in problems}
    assert {"console.error", "exception", "network request"} <= kinds, problems


@pytest.mark.parametrize("width", [1285, 800])
def test_the_report_fits_the_window(tmp_path: Path, width: int) -> None:
    """Issue 41 item 14: the per-sample tables were 1,509 px wide in a 1,285 px window, and at
    800 px the reason column (what explains a score) was off screen."""
    out = tmp_path / "run"
    _run_example(tmp_path, out)
    with chromium_page() as page:
        assert not open_page(page, out / "report.html")
        page.call("Emulation.setDeviceMetricsOverride", width=width, height=900,
                  deviceScaleFactor=1, mobile=False)
        time.sleep(0.2)
        fit = page.evaluate("""(() => ({
            page: document.documentElement.scrollWidth,
            right: Math.max(...[...document.querySelectorAll('table')].map(
                t => t.getBoundingClientRect().right)),
            tables: document.querySelectorAll('table').length}))()""")
    assert fit["tables"] > 0
    assert fit["page"] <= width and fit["right"] <= width, fit
