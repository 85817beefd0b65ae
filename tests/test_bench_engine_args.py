"""scripts/bench/bench_engine.py refuses settings it cannot measure with one line on stderr,
before loading any model."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "bench" / "bench_engine.py"


def test_no_samples_without_the_chunk_sweep_is_one_line_and_exit_2(tmp_path: Path) -> None:
    model = tmp_path / "judge.gguf"
    model.write_bytes(b"")  # only its existence is checked before the arguments
    done = subprocess.run([sys.executable, str(SCRIPT), "--samples", "0", "--model", str(model)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "--samples must be 1 or more (0 only with --chunk-sweep: the sweep alone)"]
