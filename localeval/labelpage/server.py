"""The labelling page's HTTP server: 127.0.0.1 only, the page's three files from the package
(static/), and a small JSON API over a RunSession or a ReviewSession.

GET  /                       the page
GET  /static/label.{js,css}  its script and style
GET  /api/state[?metric=M]   progress (run: labels so far and the current interval)
GET  /api/item?pos=N[&metric=M&order=random|informative]
POST /api/mark     {metric, order, id, claim, label, note[, input_hash, statement,
                    turn_text, client_id]}                      (run)
POST /api/confirm  {metric, id}                                (run)
POST /api/decide   {id, decision, reason, question, ground_truth[, input_hash, client_id]}
                                                                (review)
POST /api/write    {unreviewed}                                (review)

Every route but the static files needs the server's token: the page is opened at the printed
URL, `http://127.0.0.1:PORT/?token=…` (as Jupyter does), and its script sends the token in a
header on every API call; without it the answer is 403, so another local user or process that
finds the port reads and writes nothing. A request naming a host other than 127.0.0.1,
localhost or [::1] (DNS rebinding) is refused; any port is accepted with them, so an SSH tunnel
on another local port works (`ssh -L 9000:127.0.0.1:PORT`; the token still guards it). A bad
request is answered 400 with {"error": one line}.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

from localeval.errors import LocalevalError, UsageError
from localeval.labelpage.review import ReviewSession
from localeval.labelpage.session import RunSession

HOST = "127.0.0.1"
ASSETS = {"label.js": "text/javascript; charset=utf-8", "label.css": "text/css; charset=utf-8"}
MAX_BODY = 1 << 20
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
       "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
TOKEN_HEADER = "X-Localeval-Token"


def asset(name: str) -> bytes:
    return (resources.files("localeval.labelpage") / "static" / name).read_bytes()


class LabelServer(ThreadingHTTPServer):
    """Serves one session on 127.0.0.1:`port` (0: a free port the OS picks); a port in use is
    one UsageError."""

    daemon_threads = True
    # SO_REUSEADDR where it only lets a restarted server bind past the old one's closed
    # connections (TIME_WAIT): on Windows it would let two servers share the port
    allow_reuse_address = os.name != "nt"

    def __init__(self, session: RunSession | ReviewSession, port: int = 0) -> None:
        self.session = session
        self.token = secrets.token_urlsafe(18)
        try:
            super().__init__((HOST, port), Handler)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise UsageError(f"port {port} on {HOST} is in use; give another --port, or "
                                 "--port 0 for a free one") from None
            if exc.errno == errno.EACCES:
                raise UsageError(f"port {port} on {HOST} needs privileges; give a port above "
                                 "1023, or --port 0 for a free one") from None
            raise UsageError(f"cannot listen on {HOST}:{port}: {exc.strerror or exc}") from None

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        """The page's address, with its token: the one to open."""
        return f"http://{HOST}:{self.port}/?token={self.token}"


class Handler(BaseHTTPRequestHandler):
    server: LabelServer
    protocol_version = "HTTP/1.1"
    server_version = "localeval-label"

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the terminal is the user's
        return

    # -- plumbing --

    def _send(self, status: int, body: bytes, kind: str, *, cache: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "max-age=60" if cache else "no-store")
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, data: Any) -> None:
        self._send(status, json.dumps(data, ensure_ascii=False).encode("utf-8"),
                   "application/json; charset=utf-8")

    def _error(self, status: int, message: str) -> None:
        if self.command == "POST":  # its body may be unread: never parse it as the next request
            self.close_connection = True
        self._json(status, {"error": message})

    def _host_ok(self) -> bool:
        """The Host is a loopback name, any port (an SSH tunnel may use another one)."""
        host = (self.headers.get("Host") or "").lower()
        if host.startswith("["):  # an IPv6 literal: [::1] or [::1]:PORT
            name, _, rest = host.partition("]")
            name, port = name + "]", rest.removeprefix(":")
        else:
            name, _, port = host.partition(":")
        return name in (HOST, "localhost", "[::1]") and (not port or port.isdigit())

    def _token_ok(self, query: dict[str, str]) -> bool:
        given = self.headers.get(TOKEN_HEADER) or query.get("token") or ""
        return secrets.compare_digest(given.encode(), self.server.token.encode())

    def _body(self) -> dict[str, Any]:
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            raise UsageError("bad Content-Length") from None
        if not 0 < length <= MAX_BODY:
            raise UsageError("the request body must be a JSON object of at most 1 MiB")
        try:
            data = json.loads(self.rfile.read(length))
        except (ValueError, RecursionError):
            raise UsageError("the request body is not JSON") from None
        if not isinstance(data, dict):
            raise UsageError("the request body must be a JSON object")
        return data

    def _answer(self, work: Any) -> None:
        try:
            self._json(200, work())
        except UsageError as exc:
            self._error(400, str(exc))
        except LocalevalError as exc:  # the labels file cannot be written: said on the page
            self._error(500, str(exc))
        except Exception as exc:  # a bug: one line on the page and on stderr, server lives on
            print(f"localeval label: {type(exc).__name__}: {exc}", file=sys.stderr)
            self._error(500, f"{type(exc).__name__}: {exc}")

    # -- routes --

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        if not self._host_ok():
            self._error(403, "wrong Host: open the page at the address localeval printed")
            return
        url = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        if url.path.startswith("/static/") and url.path[8:] in ASSETS:
            name = url.path[8:]
            self._send(200, asset(name), ASSETS[name], cache=True)
            return
        if not self._token_ok(query):
            self._error(403, "this page needs its token: open the address `localeval label` "
                        "printed (http://127.0.0.1:PORT/?token=…)")
            return
        if url.path == "/":
            page = asset("label.html").decode("utf-8").replace("{{TOKEN}}", self.server.token)
            self._send(200, page.encode("utf-8"), "text/html; charset=utf-8")
        elif url.path == "/api/state":
            self._answer(lambda: self._state(query))
        elif url.path == "/api/item":
            self._answer(lambda: self._item(query))
        else:
            self._error(404, f"no such page: {url.path}")

    def do_POST(self) -> None:
        if not self._host_ok():
            self._error(403, "wrong Host: open the page at the address localeval printed")
            return
        if not secrets.compare_digest((self.headers.get(TOKEN_HEADER) or "").encode(),
                                      self.server.token.encode()):
            self._error(403, "a write needs the page's token: reload the page")
            return
        path = urlsplit(self.path).path
        routes = {"/api/mark": self._mark, "/api/confirm": self._confirm,
                  "/api/decide": self._decide, "/api/write": self._write}
        if path not in routes:
            self._error(404, f"no such call: {path}")
            return
        self._answer(lambda: routes[path](self._body()))

    # -- API --

    def _run(self) -> RunSession:
        if not isinstance(self.server.session, RunSession):
            raise UsageError("this page reviews a test set; there is nothing to label")
        return self.server.session

    def _review(self) -> ReviewSession:
        if not isinstance(self.server.session, ReviewSession):
            raise UsageError("this page labels a run; there is no test set to review")
        return self.server.session

    def _state(self, query: dict[str, str]) -> dict[str, Any]:
        session = self.server.session
        if isinstance(session, ReviewSession):
            return session.state()
        return session.state(query.get("metric") or session.metrics[0])

    def _item(self, query: dict[str, str]) -> dict[str, Any]:
        try:
            pos = int(query.get("pos", "0"))
        except ValueError:
            raise UsageError("pos must be a whole number") from None
        session = self.server.session
        if isinstance(session, ReviewSession):
            return session.item(pos)
        return session.item(query.get("metric") or session.metrics[0],
                            query.get("order", "random"), pos)

    def _mark(self, body: dict[str, Any]) -> dict[str, Any]:
        claim = body.get("claim")
        if claim is not None and (isinstance(claim, bool) or not isinstance(claim, int)):
            raise UsageError("claim must be a whole number or null")
        seen = {k: _optional(body, k) for k in ("input_hash", "statement", "turn_text")}
        return self._run().mark(_text(body, "metric"), _text(body, "order"), _text(body, "id"),
                                claim, body.get("label"), _optional(body, "note"), seen=seen,
                                client_id=_optional(body, "client_id"))

    def _confirm(self, body: dict[str, Any]) -> dict[str, Any]:
        return self._run().confirm(_text(body, "metric"), _text(body, "id"))

    def _decide(self, body: dict[str, Any]) -> dict[str, Any]:
        return self._review().decide(
            _text(body, "id"), _text(body, "decision"), reason=_optional(body, "reason"),
            question=_optional(body, "question"), ground_truth=_optional(body, "ground_truth"),
            seen=_optional(body, "input_hash"), client_id=_optional(body, "client_id"))

    def _write(self, body: dict[str, Any]) -> dict[str, Any]:
        return self._review().write_kept(unreviewed=bool(body.get("unreviewed")))


def _text(body: dict[str, Any], key: str) -> str:
    value = body.get(key)
    if not isinstance(value, str) or not value:
        raise UsageError(f"{key} must be a non-empty string")
    return value


def _optional(body: dict[str, Any], key: str) -> str | None:
    value = body.get(key)
    if value is not None and not isinstance(value, str):
        raise UsageError(f"{key} must be a string or null")
    return value
