"""scripts/bench/bench_injection.py: a rubrics file that does not load is one line on stderr,
before any model loads."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "bench" / "bench_injection.py"


def test_a_metrics_file_that_does_not_load_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[bad]\ncriteria = 3\n", encoding="utf-8")
    done = subprocess.run([sys.executable, str(SCRIPT), "--tree", str(ROOT), "--out",
                           str(tmp_path / "out"), "--metrics-file", str(bad)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("bench_injection: the metrics of ") and "[bad] criteria" in line
