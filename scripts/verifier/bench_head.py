"""What the verifier head costs: faithfulness on the same rows with and without it, one process
each way (no answer cache), and whether the raw path's records are those of a run without a
head at all. Prints JSON.

    python scripts/verifier/bench_head.py ROWS.jsonl [--limit 20] [--head HEAD.json]
ROWS: a localeval dataset, or meta-eval pairs (both sides are run).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path


def rows(path: Path, limit: int) -> list[dict]:
    out: list[dict] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        r = json.loads(line)
        if "pair_id" in r:
            out += [{**r["a"], "id": f"{r['pair_id']}/a"}, {**r["b"], "id": f"{r['pair_id']}/b"}]
        else:
            out.append(r)
    return out[:limit]


def run(data: Path, out: Path, verifier: str) -> dict:
    cmd = [sys.executable, "-m", "localeval", "run", str(data), "--out", str(out), "--quiet",
           "--metrics", "faithfulness", "--no-cache", "--verifier", verifier, "--overwrite"]
    subprocess.run(cmd, check=True)
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    records = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines() if x]
    return {"elapsed_s": summary["elapsed_s"], "decode_s": summary["judge"]["decode_s"],
            "verifier": summary["models"].get("verifier"),
            "scores": {r["id"]: r["scores"].get("faithfulness") for r in records}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rows", type=Path)
    ap.add_argument("--limit", type=int, default=20)
    ap.add_argument("--head", default="auto")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "rows.jsonl"
        picked = rows(args.rows, args.limit)
        data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in picked))
        raw = run(data, Path(tmp) / "raw", "none")
        head = run(data, Path(tmp) / "head", args.head)
    n = len(picked)
    print(json.dumps({
        "rows": n,
        "raw": {"s_per_sample": round(raw["elapsed_s"] / n, 3), "decode_s": raw["decode_s"]},
        "head": {"s_per_sample": round(head["elapsed_s"] / n, 3), "decode_s": head["decode_s"],
                 "verifier": (head["verifier"] or {}).get("head")},
        "decode_ratio": round(head["decode_s"] / max(raw["decode_s"], 1e-9), 3),
        "wall_ratio": round(head["elapsed_s"] / max(raw["elapsed_s"], 1e-9), 3),
        "scores_changed": sum(raw["scores"][k] != head["scores"].get(k) for k in raw["scores"]),
    }, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
