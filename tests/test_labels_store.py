"""The labels file: valid rows read, the later row winning, every bad row one line naming it."""

from __future__ import annotations

import json
from pathlib import Path

from localeval.labels.store import Label, append_label, read_labels


def _write(path: Path, rows: list[object]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows),
                    encoding="utf-8")
    return path


def test_sample_and_claim_labels_are_read_and_the_later_wins(tmp_path: Path) -> None:
    path = _write(tmp_path / "labels.jsonl", [
        {"id": "s1", "metric": "faithfulness", "label": 1},
        {"id": 7, "metric": "faithfulness", "claim": 0, "label": 0.0, "order": "random"},
        {"id": "s1", "metric": "faithfulness", "label": 0, "order": "random"},
        {"id": "s2", "metric": "faithfulness", "label": None, "order": "informative"},
    ])
    read = read_labels(path)
    assert read.problems == []
    assert read.labels[("s1", "faithfulness", None)].label == 0
    assert read.labels[("7", "faithfulness", 0)].claim == 0
    assert read.duplicates == 1 and read.unordered == 1
    assert not read.labels[("s2", "faithfulness", None)].random
    notes = read.notes(path)
    assert any("later one wins" in n for n in notes) and any("vouches" in n for n in notes)


def test_each_bad_row_is_one_line_naming_file_and_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "labels.jsonl", [
        {"id": "a", "metric": "faithfulness", "label": 1.5},
        {"id": "b", "metric": "faithfulness", "label": 1, "lable": 1},
        "id,metric,label",
        [1, 2],
        {"id": "c", "metric": "faithfulness", "label": 1, "run": "other"},
        {"id": "d", "metric": "faithfulness", "label": 1, "run": "mine"},
    ])
    read = read_labels(path, fingerprint="mine")
    assert list(read.labels) == [("d", "faithfulness", None)]
    assert len(read.problems) == 5
    for n, problem in enumerate(read.problems, 1):
        assert problem.startswith(f"{path}:{n}:") and "\n" not in problem
    assert "[0, 1]" in read.problems[0] and "lable" in read.problems[1]
    assert "fingerprint" in read.problems[4]


def test_appended_labels_read_back(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    for i in range(3):
        append_label(path, Label(id=f"s{i}", metric="faithfulness", claim=i, label=i % 2,
                                 order="random", seed=1))
    read = read_labels(path)
    assert read.problems == [] and len(read.labels) == 3
    assert all(json.loads(line)["order"] == "random" for line in path.read_text().splitlines())
