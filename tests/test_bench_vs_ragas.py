"""scripts/bench/bench_vs_ragas.py: a ragas server that dies while ragas runs stops the bench
with the server's log, instead of printing a ratio over failed calls (no model, no ragas)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "bench" / "bench_vs_ragas.py"
FAKE_PYTHON = """#!{python}
import http.server, json, os, sys
script = os.path.basename(sys.argv[1])
if script == "ragas_server.py":  # answer /v1/models once, then die as the real one did
    port = int(sys.argv[sys.argv.index("--port") + 1])
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200); self.end_headers(); self.wfile.write(b"{{}}")
        def log_message(self, *a):
            pass
    server = http.server.HTTPServer(("127.0.0.1", port), Handler)
    server.handle_request()
    sys.stderr.write("Segmentation fault in llama_decode\\n")
    sys.exit(139)
rows_file, out = sys.argv[2], sys.argv[5]
rows = json.load(open(rows_file))
import time; time.sleep(1.0)
json.dump([{{"id": r["id"], "seconds": 0.1, "scores": {{"faithfulness": None}}, "judge_calls": 1,
            "prompt_tokens": 0, "repair_calls": 0, "failed_calls": 1, "parse_failures": 0}}
           for r in rows], open(out, "w"))
"""


def load():
    spec = importlib.util.spec_from_file_location("bench_vs_ragas", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_server_that_dies_while_ragas_runs_stops_the_bench(tmp_path: Path) -> None:
    python = tmp_path / "python"
    python.write_text(FAKE_PYTHON.format(python=sys.executable), encoding="utf-8")
    python.chmod(0o755)
    rows = [{"id": "1", "question": "q", "answer": "a", "contexts": ["c"],
             "answer_kind": "right"}]
    with pytest.raises(SystemExit) as stopped:
        load().run_ragas(rows, ["faithfulness"], tmp_path / "m.gguf", tmp_path / "e", python,
                         4096)
    message = str(stopped.value)
    assert "llama_cpp.server stopped (exit status 139) while ragas ran" in message
    assert "Segmentation fault in llama_decode" in message
