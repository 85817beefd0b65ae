"""Issue 29.4, the calibration cache `speed.json`: a planted `speed.tmp` link is not written
through; a wrong-shaped, negative or infinite entry is a warning and is not used (no traceback,
no negative or infinite time)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from localeval.estimate import calibrate
from localeval.estimate.simulate import Speed

GOOD = Speed(chunk_s=0.01, token_s=0.001, step_s=0.01, gen_token_s=0.02, request_s=0.0)


def entry(**speed: Any) -> dict[str, Any]:
    return {"speed": {**GOOD.__dict__, **speed}, "load_s": 2.0, "free_tokens": 10}


def test_a_planted_speed_tmp_link_is_not_written_through(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep", encoding="utf-8")
    (tmp_path / "speed.tmp").symlink_to(victim)
    calibrate.store(tmp_path / "speed.json", "k", entry())
    assert victim.read_text(encoding="utf-8") == "keep"
    assert calibrate.load(tmp_path / "speed.json", "k") == entry()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".speed.")]  # no leftovers


@pytest.mark.parametrize("bad", [
    {"speed": 5},
    "not an entry",
    {"speed": {"chunk_s": 0.01}},  # fields missing
    entry(unknown_s=1.0),  # a field Speed does not have
    entry(chunk_s=-1.0),
    entry(token_s=math.inf),
    entry(step_s=float("nan")),
    entry(gen_token_s="fast"),
    entry(small_s=True),
    {**entry(), "free_tokens": -3},
    {**entry(), "free_tokens": None},
])
def test_a_bad_entry_is_a_warning_and_not_used(tmp_path: Path, bad: Any) -> None:
    path = tmp_path / "speed.json"
    path.write_text(json.dumps({"k": bad}), encoding="utf-8")  # Infinity / NaN as JSON allows
    said: list[str] = []
    assert calibrate.load(path, "k", said.append) is None
    assert len(said) == 1 and "warning" in said[0] and str(path) in said[0]


def test_a_deeply_nested_cache_is_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "speed.json"
    path.write_text('{"k": ' + "[" * 100_000 + "]" * 100_000 + "}", encoding="utf-8")
    said: list[str] = []
    assert calibrate.load(path, "k", said.append) is None and said
    calibrate.store(path, "k", entry())  # and it is replaced by a good one
    assert calibrate.load(path, "k") == entry()


def test_the_estimate_warns_and_gives_no_negative_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from localeval.cli import main
    from localeval.judge.llamacpp import default_threads

    key = calibrate.calibration_key("fake", default_threads(), 512, -1)
    monkeypatch.setattr(calibrate, "speed_file", lambda _d: tmp_path / "speed.json")
    (tmp_path / "speed.json").write_text(json.dumps({key: entry(chunk_s=-50.0, token_s=-1.0)}),
                                         encoding="utf-8")
    data = tmp_path / "rows.jsonl"
    row = {"id": "a", "question": "Capital of France?", "contexts": ["Paris is the capital."],
           "answer": "Paris is the capital of France."}
    data.write_text(json.dumps(row) + "\n", encoding="utf-8")
    answers = tmp_path / "answers.json"
    answers.write_text("[]", encoding="utf-8")
    argv = ["run", str(data), "--judge", "fake", "--fake-answers", str(answers), "--metrics",
            "faithfulness", "--no-cache", "--estimate", "--no-calibrate", "--json"]
    assert main(argv) == 0
    out = capsys.readouterr()
    assert "warning" in out.err and "Traceback" not in out.err
    estimate = json.loads(out.out)

    def numbers(value: Any) -> list[float]:
        if isinstance(value, dict):
            return [n for v in value.values() for n in numbers(v)]
        if isinstance(value, list):
            return [n for v in value for n in numbers(v)]
        return [value] if isinstance(value, (int, float)) and not isinstance(value, bool) else []

    assert all(math.isfinite(n) and n >= 0 for n in numbers(estimate["time"] or {}))
