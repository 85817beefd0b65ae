"""scripts/ppi_coverage.py on a small made-up meta-eval folder: coverage per set and pooled,
resampled populations, and τ fitted out of fold against the shipped one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from localeval.results.records import SampleRecord

ROOT = Path(__file__).resolve().parent.parent


def test_coverage_script(tmp_path: Path) -> None:
    pairs, records = [], []
    for i in range(30):
        pid = f"p{i}"
        pairs.append({"pair_id": pid, "language": "en", "preferred": "a", "a": {}, "b": {}})
        for side, p in (("a", 0.9 - 0.01 * i), ("b", 0.2 + 0.02 * i)):  # the judge errs late
            verdict = int(p >= 0.6)
            records.append(SampleRecord(
                id=f"{pid}/{side}", line=len(records) + 1, language="en",
                scores={"faithfulness": float(verdict)},
                details={"faithfulness": {"statements": [
                    {"statement": "c", "verdict": verdict, "rule": "judge", "p_supported": p}]}}))
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps(p) + "\n" for p in pairs), encoding="utf-8")
    run = tmp_path / "run"
    run.mkdir()
    (run / "results.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in records),
                                       encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "ppi_coverage.py"), "--set",
         f"toy={run}:{data}", "--n", "10,25,100", "--draws", "200", "--resample", "200",
         "--tau", "toy", "--tau-labels", "30", "--tau-draws", "20"],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    rows = out["sets"]["toy"]["rows"]
    assert rows["n_rows"] == 60 and rows["true_mean"] == 0.5
    assert rows["judge_bias"] == pytest.approx(rows["judge_mean"] - 0.5, abs=1e-4)
    assert 0.85 <= rows["by_n"]["25"]["coverage"] <= 1.0
    assert rows["by_n"]["25"]["width_share_of_labels_only"] < 1.0
    before = rows["by_n"]["25"]["before"]  # the plug-in interval on the same draws
    assert 0.5 <= before["coverage"] <= 1.0 and 0.0 < before["width_share_of_labels_only"] <= 1.0
    assert "not drawn" in rows["by_n"]["100"]
    assert out["sets"]["toy"]["resampled"]["by_n"]["100"]["draws"] == 200
    assert out["sets"]["pooled"]["sets"] == ["toy"]
    tau = out["tau"]
    rules = tau["rules"]
    assert tau["draws"] > 0 and set(rules) == {"agreement", "agreement-gap", "mean", "platt",
                                               "shipped"}
    assert all(0.05 <= rules[r]["tau"]["mean"] <= 0.95 for r in rules if r != "shipped")
    assert all(0.0 <= rules[r]["held_out_mean_abs_gap"] <= 1.0 for r in rules)
