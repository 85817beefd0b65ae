"""The --out folder (issue 18, items 6 and 7): a run writes only into a folder that is new, empty
or one of its own runs; `--overwrite` never deletes someone else's files or the dataset being
read; no file in the folder is written through a symbolic link. Every refusal is one line that
says what to do, and leaves the folder as it was."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from localeval.cli import main
from tests.conftest import fake_run_args
from tests.test_resume import answers, rows, write_inputs


def snapshot(folder: Path) -> dict[str, bytes | str]:
    """Every entry of a folder: a file's bytes, a link's target."""
    return {
        p.name: f"-> {os.readlink(p)}" if p.is_symlink() else p.read_bytes()
        for p in sorted(folder.iterdir())
    }


def refused(capsys: pytest.CaptureFixture[str], code: int) -> str:
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.count("\n") == 0 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("flag", [(), ("--overwrite",), ("--resume",)],
                         ids=["plain", "overwrite", "resume"])
def test_folder_with_other_files_is_refused_untouched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: tuple[str, ...]
) -> None:
    data, ans = write_inputs(tmp_path, 2)
    out = tmp_path / "mine"
    out.mkdir()
    (out / "report.md").write_text("my own notes")
    (out / "summary.json").write_text('{"mine": true}')
    (out / "results.jsonl").write_text(data.read_text())  # a dataset that has this name
    before = snapshot(out)
    err = refused(capsys, main(fake_run_args(data, ans, out, *flag)))
    assert "is not a localeval run folder" in err and "choose another --out" in err
    assert "--overwrite" not in err
    assert snapshot(out) == before  # not even a lock file was added


@pytest.mark.parametrize("name", ["summary.json", "run.json", "results.jsonl", "report.md"])
@pytest.mark.parametrize("flag", [(), ("--overwrite",)], ids=["plain", "overwrite"])
def test_dataset_inside_out_under_a_name_localeval_writes_is_never_destroyed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, flag: tuple[str, ...]
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    data = out / name
    data.write_text("".join(json.dumps(r) + "\n" for r in rows(2)), encoding="utf-8")
    ans = tmp_path / "answers.json"
    ans.write_text(json.dumps(answers(2)))
    before = snapshot(out)
    refused(capsys, main(fake_run_args(data, ans, out, *flag)))
    assert snapshot(out) == before


def test_dataset_that_is_a_file_of_an_own_run_is_refused_even_with_overwrite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, ans = write_inputs(tmp_path, 2)
    out = tmp_path / "out"
    assert main(fake_run_args(data, ans, out)) == 0
    os.replace(data, out / "results.jsonl")  # the run's results.jsonl used as the dataset
    os.link(out / "results.jsonl", data)
    before = snapshot(out)
    err = refused(capsys, main(fake_run_args(data, ans, out, "--overwrite")))
    assert f"the dataset {data} is {out / 'results.jsonl'}" in err and "another --out" in err
    assert snapshot(out) == before


def test_new_empty_and_own_folders_are_used(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, ans = write_inputs(tmp_path, 2)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(fake_run_args(data, ans, empty)) == 0
    run_file = json.loads((empty / "run.json").read_text())
    assert run_file["written_by"] == "localeval"
    (empty / "notes.txt").write_text("a note the user added to a run folder")
    assert main(fake_run_args(data, ans, empty, "--overwrite")) == 0  # its own run: allowed
    assert (empty / "notes.txt").read_text().startswith("a note")
    err = refused(capsys, main(fake_run_args(data, ans, empty)))
    assert "already holds results" in err and "--resume" in err and "--overwrite" in err
    del run_file["written_by"]  # a run.json of an earlier version: known by its fingerprint
    (empty / "run.json").write_text(json.dumps(run_file))
    assert main(fake_run_args(data, ans, empty, "--resume")) == 0
    only_lock = tmp_path / "only-lock"  # a run that stopped before writing anything
    only_lock.mkdir()
    (only_lock / ".localeval.lock").write_text("123")
    assert main(fake_run_args(data, ans, only_lock)) == 0
    assert main(fake_run_args(data, ans, tmp_path / "new" / "deep")) == 0


@pytest.mark.parametrize(
    "name", [".localeval.lock", "results.jsonl", "summary.json", "run.json", "report.html"]
)
def test_planted_link_is_refused_and_its_target_untouched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    data, ans = write_inputs(tmp_path, 2)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    out = tmp_path / "shared"
    assert main(fake_run_args(data, ans, out)) == 0  # a run folder in a shared place
    (out / name).unlink()
    (out / name).symlink_to(victim)
    before = snapshot(out)
    for flag in ((), ("--overwrite",), ("--resume",)):
        err = refused(capsys, main(fake_run_args(data, ans, out, *flag)))
        assert f"{out / name} is a symbolic link" in err and "remove the link" in err
    assert victim.read_text() == "precious" and snapshot(out) == before


def test_temporary_files_have_fresh_names_and_never_follow_links(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, ans = write_inputs(tmp_path, 2)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    out = tmp_path / "shared"
    assert main(fake_run_args(data, ans, out)) == 0
    for name in ("summary.json.tmp", "run.json.tmp", "results.jsonl.tmp", "report.html.tmp"):
        (out / name).symlink_to(victim)  # the fixed names older versions wrote through
    assert main(fake_run_args(data, ans, out, "--overwrite")) == 0
    assert main(["report", str(out)]) == 0
    assert victim.read_text() == "precious"
    for name in ("summary.json", "run.json", "results.jsonl", "report.html", "report.md"):
        assert not (out / name).is_symlink()


def test_report_command_writes_only_into_a_run_folder_and_never_through_a_link(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, ans = write_inputs(tmp_path, 2)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    out = tmp_path / "shared"
    assert main(fake_run_args(data, ans, out)) == 0
    (out / "report.md").unlink()
    (out / "report.md").symlink_to(victim)
    err = refused(capsys, main(["report", str(out)]))
    assert "report.md is a symbolic link" in err and victim.read_text() == "precious"

    other = tmp_path / "other"  # someone's folder: a dataset named results.jsonl, a report
    other.mkdir()
    (other / "results.jsonl").write_text(data.read_text())
    (other / "report.md").write_text("my report")
    before = snapshot(other)
    err = refused(capsys, main(["report", str(other)]))
    assert "is not a localeval run folder" in err and snapshot(other) == before
