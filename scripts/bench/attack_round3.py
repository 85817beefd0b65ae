"""Issue 29's edges tried again from outside: each attack runs `python -m localeval` (or the API)
in a fresh temporary folder and checks that nothing is forged, nothing lost, nothing hangs and
no traceback is shown. Prints one JSON object: per attack `ok` and what was seen.

    python scripts/bench/attack_round3.py [--only NAME,...] [--big-mb 50]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
ESC = "\x1b[2J\x1b]0;owned\x07\u202e"
ROW = {"id": "a", "question": "Capital of France?", "contexts": ["Paris is the capital."],
       "answer": "Paris is the capital of France."}
ATTACKS: dict[str, Callable[[Path], dict[str, Any]]] = {}


def attack(fn: Callable[[Path], dict[str, Any]]) -> Callable[[Path], dict[str, Any]]:
    ATTACKS[fn.__name__] = fn
    return fn


def cli(tmp: Path, *argv: str, fake: bool = True, timeout: float = 120,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k != "LOCALEVAL_ALLOW_FAKE_JUDGE"}
    base.update({"PYTHONPATH": str(REPO), "LOCALEVAL_CACHE_DIR": str(tmp / "cache"),
                 **({"LOCALEVAL_ALLOW_FAKE_JUDGE": "1"} if fake else {}), **(env or {})})
    return subprocess.run([sys.executable, "-m", "localeval", *argv], capture_output=True,
                          text=True, timeout=timeout, cwd=tmp, env=base)


def clean(done: subprocess.CompletedProcess[str]) -> bool:
    both = done.stdout + done.stderr
    return "Traceback" not in both and not any(c in both for c in "\x1b\x07\u202e\x9b")


def rows(tmp: Path, items: list[dict[str, Any]], name: str = "d.jsonl") -> Path:
    path = tmp / name
    path.write_text("".join(json.dumps(r) + "\n" for r in items), encoding="utf-8")
    return path


def fake_answers(tmp: Path, n: int = 8) -> Path:
    path = tmp / "fake.json"
    path.write_text(json.dumps([{"verdicts": [{"reason": "[y]: https://e.vil", "verdict": 0}]}]
                               * n), encoding="utf-8")
    return path


# ---- what reaches a reader ----------------------------------------------------------------------

@attack
def link_definition_in_report(tmp: Path) -> dict[str, Any]:
    data = rows(tmp, [{**ROW, "answer": "[x]: https://e.vil/p\nParis is in [x]."}])
    done = cli(tmp, "run", str(data), "--out", "o", "--judge", "fake", "--fake-answers",
               str(fake_answers(tmp)), "--metrics", "faithfulness", "--no-cache", "--quiet")
    md = (tmp / "o" / "report.md").read_text(encoding="utf-8")
    defs = re.findall(r"^[ \t]*(?:(?:[-*+]|\d+[.)]|>)\s+)*\[(?:[^\]\\]|\\.)+\]:.*$", md, re.M)
    return {"ok": done.returncode == 0 and clean(done) and not defs, "definitions": defs}


@attack
def retrieval_per_query_escapes(tmp: Path) -> dict[str, Any]:
    qid = ("q" + ESC).replace(" ", "")
    (tmp / "q.txt").write_text(f"{qid} 0 d1 1\n", encoding="utf-8")
    (tmp / "r.txt").write_text(f"{qid} Q0 d1 1 2.0 t\n", encoding="utf-8")
    done = cli(tmp, "retrieval", "--qrels", "q.txt", "--run", "r.txt", "--per-query")
    return {"ok": done.returncode == 0 and clean(done) and "q\\x1b" in done.stdout}


@attack
def meta_eval_table_and_surrogates(tmp: Path) -> dict[str, Any]:
    pair = {"a": {"question": "q", "answer": "x y"}, "b": {"question": "q", "answer": "z"},
            "preferred": "a"}
    lines = [json.dumps({**pair, "pair_id": "p1", "language": "en" + ESC}),
             json.dumps({**pair, "pair_id": "PID", "language": "en"}).replace("PID", "p\\ud800"),
             json.dumps({**pair, "pair_id": "p3", "language": "LNG"}).replace("LNG", "e\\udc80"),
             json.dumps({**pair, "pair_id": "p4", "language": "en"})]
    (tmp / "pairs.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = cli(tmp, "meta-eval", "pairs.jsonl", "--metrics", "response_length", "--out", "me",
               "--quiet")
    judged = json.loads((tmp / "me" / "meta_eval.json").read_text(encoding="utf-8"))
    return {"ok": done.returncode == 0 and clean(done)
            and done.stderr.count("not valid Unicode") == 2 and "p4" in json.dumps(judged)}


@attack
def assert_scores_message(tmp: Path) -> dict[str, Any]:
    code = ("import localeval.testing as t\n"
            "from localeval.models.embed import HashEmbedder\n"
            f"rows=[{{'id': f's{{i}}' + {ESC!r}, 'answer': 'w ' * 40}} for i in range(20000)]\n"
            "try:\n"
            "    t.assert_scores(rows, response_length=0.9, embedder=HashEmbedder(),"
            " no_cache=True, metric_options={'response_length': {'max_words': 10}})\n"
            "except AssertionError as e:\n"
            "    m = str(e); print(len(m), m.count('\\nsample '), m.splitlines()[-1][:80])\n")
    env = {**os.environ, "PYTHONPATH": str(REPO), "LOCALEVAL_CACHE_DIR": str(tmp / "c")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, env=env, cwd=tmp)
    size, shown = [*done.stdout.split(), "0", "0"][:2]
    return {"ok": clean(done) and 0 < int(size) < 40_000 and int(shown) == 20,
            "message_chars": int(size), "samples_shown": int(shown),
            "last_line": done.stdout.strip()[-80:]}


@attack
def assert_scores_fake_judge_outside_tests(tmp: Path) -> dict[str, Any]:
    code = ("from localeval.testing import assert_scores\n"
            "from localeval.judge.fake import FakeJudge\n"
            "from localeval.models.embed import HashEmbedder\n"
            "row = {'id': 'a', 'question': 'Who?', 'contexts': ['B found it.'],"
            " 'answer': 'B found it.'}\n"
            "j = FakeJudge({'faithfulness_verdicts': [{'verdicts': [{'reason': 'r',"
            " 'verdict': 1}]}] * 4})\n"
            "try:\n"
            "    assert_scores([row], faithfulness=0.5, judge=j, embedder=HashEmbedder(),"
            " no_cache=True)\n"
            "    print('PASSED')\n"
            "except AssertionError as e:\n"
            "    print('REFUSED', str(e)[:60])\n")
    env = {k: v for k, v in os.environ.items() if k != "LOCALEVAL_ALLOW_FAKE_JUDGE"}
    env.update({"PYTHONPATH": str(REPO), "LOCALEVAL_CACHE_DIR": str(tmp / "c")})
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env=env, cwd=tmp)
    return {"ok": clean(done) and done.stdout.startswith("REFUSED"), "said": done.stdout[:90]}


# ---- models and the calibration cache -----------------------------------------------------------

def _models_home(tmp: Path) -> tuple[Path, bytes]:
    import hashlib

    payload = bytes(range(256)) * 64
    home = tmp / "models"
    home.mkdir()
    (home / "manifest.toml").write_text(
        '[profiles.tiny]\njudge = "j"\nembedder = "e"\n'
        f'[models.j]\nrole = "judge"\nfile = "j.gguf"\nsize = {len(payload)}\n'
        f'sha256 = "{hashlib.sha256(payload).hexdigest()}"\nsources = []\n'
        '[models.e]\nrole = "embedder"\ndir = "e"\nsize = 0\nsha256 = ""\nsources = []\n',
        encoding="utf-8")
    return home, payload


@attack
def models_pull_and_stamp(tmp: Path) -> dict[str, Any]:
    home, payload = _models_home(tmp)
    env = {"LOCALEVAL_MODELS_DIR": str(home), "LOCALEVAL_OFFLINE": "1"}
    src = tmp / "src"
    (src / "e").mkdir(parents=True)
    (src / "e" / "config.json").write_text("{}")
    (src / "e" / "usr").symlink_to("/usr", target_is_directory=True)
    link = cli(tmp, "models", "pull", "e", "--from", str(src), env=env)
    (src / "j.gguf").write_bytes(payload + b"x")
    size = cli(tmp, "models", "pull", "j", "--from", str(src), env=env)
    outside = tmp / "outside.json"
    outside.write_text("{}")
    (home / ".verified.json").symlink_to(outside)
    (src / "j.gguf").write_bytes(payload)
    ok_pull = cli(tmp, "models", "pull", "j", "--from", str(src), env=env)
    st = (home / "j.gguf").stat()
    forged = bytearray(payload)
    forged[3] ^= 1
    (home / "j.gguf").write_bytes(bytes(forged))
    os.utime(home / "j.gguf", ns=(st.st_atime_ns, st.st_mtime_ns))
    again = cli(tmp, "models", "pull", "j", "--from", str(src), env=env)
    return {"ok": all(clean(d) for d in (link, size, ok_pull, again))
            and link.returncode != 0 and "link to a folder" in link.stderr + link.stdout
            and not (home / "e").exists()
            and "not copied" in size.stderr + size.stdout and ok_pull.returncode == 0
            and outside.read_text() == "{}" and not (home / ".verified.json").is_symlink()
            and "already present" not in again.stdout + again.stderr
            and (home / "j.gguf").read_bytes() == payload}


@attack
def speed_json(tmp: Path) -> dict[str, Any]:
    code = ("import json, sys\nfrom pathlib import Path\n"
            "from localeval.estimate import calibrate\n"
            "d = Path(sys.argv[1]); v = d / 'victim'; v.write_text('keep')\n"
            "(d / 'speed.tmp').symlink_to(v)\n"
            "good = {'speed': {'chunk_s': .01, 'token_s': .001, 'step_s': .01,"
            " 'gen_token_s': .02}, 'free_tokens': 10}\n"
            "calibrate.store(d / 'speed.json', 'k', good)\n"
            "said = []\n"
            "for bad in ({'speed': 5}, {**good, 'speed': {**good['speed'], 'chunk_s': -1}},"
            " {**good, 'speed': {**good['speed'], 'token_s': float('inf')}}):\n"
            "    (d / 'speed.json').write_text(json.dumps({'k': bad}))\n"
            "    said.append(calibrate.load(d / 'speed.json', 'k', lambda m: None))\n"
            "print(json.dumps([v.read_text(), said]))\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", code, str(tmp)], capture_output=True,
                          text=True, timeout=60, env=env)
    got = json.loads(done.stdout or "null")
    return {"ok": clean(done) and got == ["keep", [None, None, None]], "seen": got}


# ---- one line, not a traceback; nothing hangs ---------------------------------------------------

@attack
def settings_and_folders(tmp: Path) -> dict[str, Any]:
    data = rows(tmp, [ROW])
    deep = "[" * 100_000
    (tmp / "deep.toml").write_text("metrics = " + deep, encoding="utf-8")
    runs = {
        "config_dir": cli(tmp, "run", str(data), "--out", "o1", "--config", str(tmp)),
        "config_deep": cli(tmp, "run", str(data), "--out", "o2", "--config", "deep.toml"),
        "metric_option_deep": cli(tmp, "run", str(data), "--out", "o3", "--metric-option",
                                  f"response_length.max_words={deep}"),
        "abbreviation": cli(tmp, "run", str(data), "--out", "o4", "--overw"),
    }
    for name in ("results.jsonl", ".localeval.lock"):
        out = tmp / f"fifo-{name}"
        out.mkdir()
        os.mkfifo(out / name)
        try:
            runs[f"fifo {name}"] = cli(tmp, "run", str(data), "--out", str(out), "--metrics",
                                       "response_length", timeout=60)
        except subprocess.TimeoutExpired:
            return {"ok": False, "hang": name}
    for kind in ("fifo", "folder", "device"):
        path = {"fifo": tmp / "f.jsonl", "folder": tmp / "dir.jsonl", "device": Path("/dev/null")}
        if kind == "fifo":
            os.mkfifo(path[kind])
        elif kind == "folder":
            path[kind].mkdir()
        try:
            runs[f"dataset {kind}"] = cli(tmp, "run", str(path[kind]), "--out", f"d-{kind}",
                                          "--metrics", "response_length", timeout=60)
        except subprocess.TimeoutExpired:
            return {"ok": False, "hang": kind}
    seen = {k: d.stderr.strip().splitlines()[-1][:110] if d.stderr.strip() else ""
            for k, d in runs.items()}
    ok = all(d.returncode == 2 and clean(d) for d in runs.values()) and not any(
        "not found" in seen[k] for k in seen if k.startswith("dataset"))
    return {"ok": ok, "seen": seen}


@attack
def deep_run_folder_files(tmp: Path) -> dict[str, Any]:
    data = rows(tmp, [ROW])
    first = cli(tmp, "run", str(data), "--out", "o", "--metrics", "response_length", "--quiet")
    for name in ("run.json", "summary.json"):
        (tmp / "o" / name).write_text('{"inputs": ' + "[" * 100_000, encoding="utf-8")
    tries = [cli(tmp, "run", str(data), "--out", "o", "--metrics", "response_length",
                 "--resume", "--quiet"), cli(tmp, "report", "o")]
    return {"ok": first.returncode == 0 and all(clean(d) for d in tries),
            "exit": [d.returncode for d in tries]}


@attack
def dataframes(tmp: Path) -> dict[str, Any]:
    code = ("import pandas as pd, localeval\n"
            "from localeval.errors import DatasetError\n"
            "f = pd.DataFrame({'id': ['a', 'b'], 'answer': ['x y', 'z'], 'o': [object(), 1]})\n"
            "r = localeval.evaluate(f, metrics=['response_length'], progress=False)\n"
            "print(sorted(r.scores('response_length')), len(r.problems))\n"
            "d = pd.DataFrame([['a', 'x', 'y']], columns=['id', 'answer', 'answer'])\n"
            "try:\n"
            "    localeval.evaluate(d, metrics=['response_length'], progress=False)\n"
            "except DatasetError as e:\n"
            "    print('REFUSED')\n")
    env = {**os.environ, "PYTHONPATH": str(REPO), "LOCALEVAL_CACHE_DIR": str(tmp / "c")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env=env, cwd=tmp)
    return {"ok": clean(done) and done.stdout.split("\n")[:2] == ["['b'] 1", "REFUSED"],
            "said": done.stdout.strip()}


@attack
def unusable_answer_cache(tmp: Path) -> dict[str, Any]:
    (tmp / "bad.sqlite").write_text("not a database")
    done = cli(tmp, "run", str(rows(tmp, [ROW])), "--out", "o", "--judge", "fake",
               "--fake-answers", str(fake_answers(tmp)), "--metrics", "faithfulness",
               "--cache", "bad.sqlite", "--quiet")
    summary = json.loads((tmp / "o" / "summary.json").read_text(encoding="utf-8"))
    return {"ok": done.returncode == 0 and clean(done) and "warning" in done.stderr
            and bool(summary["judge"]["cache_error"])
            and (tmp / "bad.sqlite").read_text() == "not a database"}


# ---- scores and comparisons ---------------------------------------------------------------------

@attack
def out_of_range_scores_and_compare(tmp: Path) -> dict[str, Any]:
    items = [{"id": f"s{i}", "question": f"q{i}?", "answer": "w " * (5 + 60 * (i % 3))}
             for i in range(6)]
    data = rows(tmp, items)
    for out in ("a", "b"):
        cli(tmp, "run", str(data), "--out", out, "--metrics", "response_length", "--quiet")
    path = tmp / "b" / "results.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines = [re.sub(r'"response_length":[0-9.e+-]+', '"response_length":1e308', ln)
             for ln in lines[:2]] + lines[2:]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    gate = cli(tmp, "report", "b", "--fail-under", "response_length=0.9")
    (tmp / "theirs").mkdir()
    (tmp / "theirs" / "compare.md").write_text("theirs\n")
    cmp = cli(tmp, "compare", "a", "b", "--out", "c")
    foreign = cli(tmp, "compare", "a", "b", "--out", "theirs")
    bare = [{"answer": "short"}, {"answer": "w " * 150}]
    cli(tmp, "run", str(rows(tmp, bare, "x.jsonl")), "--out", "x", "--metrics",
        "response_length", "--quiet")
    cli(tmp, "run", str(rows(tmp, bare[::-1], "y.jsonl")), "--out", "y", "--metrics",
        "response_length", "--quiet")
    paired = cli(tmp, "compare", "x", "y", "--json")
    n = json.loads(paired.stdout)["scores"][0]["n"] if paired.returncode == 0 else None
    return {"ok": gate.returncode == 1 and cmp.returncode == 0 and foreign.returncode == 2
            and (tmp / "theirs" / "compare.md").read_text() == "theirs\n" and n == 0
            and all(clean(d) for d in (gate, cmp, foreign, paired)),
            "gate_exit": gate.returncode, "compare_exit": cmp.returncode,
            "foreign_exit": foreign.returncode, "default_ids_paired": n}


# ---- size and sameness --------------------------------------------------------------------------

@attack
def huge_answer_memory(tmp: Path, megabytes: int = 50) -> dict[str, Any]:
    answer = ("ab cd ef gh " * (megabytes * 1_000_000 // 12 + 1))[:megabytes * 1_000_000]
    (tmp / "big.jsonl").write_text(json.dumps({"id": "a", "answer": answer}) + "\n")
    del answer
    code = ("import resource, subprocess, sys\n"
            "from localeval.cli import main\n"
            "rc = main(['run', 'big.jsonl', '--out', 'o', '--metrics', 'response_length',"
            " '--quiet', '--no-cache'])\n"
            "print(rc, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)\n")
    env = {**os.environ, "PYTHONPATH": str(REPO), "LOCALEVAL_CACHE_DIR": str(tmp / "c")}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=600, env=env, cwd=tmp)
    rc, peak_mb = [*done.stdout.split(), "?", "0"][:2]
    return {"ok": rc == "0" and clean(done), "answer_mb": megabytes,
            "process_peak_rss_mb": int(peak_mb),
            "seconds": round(time.perf_counter() - started, 1)}


@attack
def ray_plan_from_another_version(tmp: Path) -> dict[str, Any]:
    code = ("import pickle, sys\n"
            "from localeval.distributed.worker import EvalWorker\n"
            "class T:\n"
            "    def __reduce__(self):\n"
            "        return (open, (sys.argv[1], 'w'))\n"
            "out = EvalWorker('0.0.0-other', pickle.dumps(T())).load()\n"
            "print('error' in out)\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    marker = tmp / "unpickled"
    done = subprocess.run([sys.executable, "-c", code, str(marker)], capture_output=True,
                          text=True, timeout=60, env=env)
    return {"ok": clean(done) and done.stdout.strip() == "True" and not marker.exists()}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", default="")
    parser.add_argument("--big-mb", type=int, default=50)
    args = parser.parse_args()
    names = [n for n in args.only.split(",") if n] or list(ATTACKS)
    report: dict[str, Any] = {}
    for name in names:
        with tempfile.TemporaryDirectory(prefix=f"attack-{name}-") as tmp:
            try:
                if name == "huge_answer_memory":
                    report[name] = huge_answer_memory(Path(tmp), args.big_mb)
                else:
                    report[name] = ATTACKS[name](Path(tmp))
            except Exception as exc:  # the attack script's own failure: shown, not hidden
                report[name] = {"ok": False, "attack_failed": f"{type(exc).__name__}: {exc}"}
    report["all_ok"] = all(v["ok"] for v in report.values() if isinstance(v, dict))
    json.dump(report, sys.stdout, indent=1, ensure_ascii=True)
    print()
    return 0 if report["all_ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
