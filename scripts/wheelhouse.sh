#!/usr/bin/env bash
# Build a wheelhouse for an air-gapped install: a wheel of localeval and of every dependency
# (llama-cpp-python is built from source once, ~6 min, unless pip's wheel cache holds it).
#   bash scripts/wheelhouse.sh [DIR] [extra pip wheel arguments...]     (DIR default: wheelhouse)
# Environment: PYTHON (the interpreter whose pip builds, default .venv/bin/python else python3;
# use the Python version of the target machine), LOCALEVAL_TORCH (the torch requirement, default
# torch==2.13.0; for the CPU-only build add: --extra-index-url https://download.pytorch.org/whl/cpu).
# On the air-gapped machine (README, "Air-gapped install"):
#   python3 -m venv venv && venv/bin/pip install --no-index --find-links DIR localeval
#   venv/bin/localeval --models-dir MODELS models pull --profile small --from COPIED_MODELS
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-wheelhouse}
[ $# -gt 0 ] && shift
py=${PYTHON:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || command -v python3 )}
torch_req=${LOCALEVAL_TORCH:-torch==2.13.0}
mkdir -p "$out"
echo "wheelhouse: localeval, $torch_req and every dependency into $out/"
"$py" -m pip wheel --disable-pip-version-check -q -w "$out" "$torch_req" . "$@" \
  2> >(grep -v "^WARNING: Location" >&2)
# the wheel must carry its templates and manifest, and never a model file
"$py" - "$out" <<'PY'
import sys, zipfile
from pathlib import Path
wheel = max(Path(sys.argv[1]).glob("localeval-*.whl"), key=lambda p: p.stat().st_mtime)
names = zipfile.ZipFile(wheel).namelist()
assert "localeval/_models/manifest.toml" in names, f"{wheel}: no manifest"
assert any(n.startswith("localeval/_prompts/en/") for n in names), f"{wheel}: no templates"
bad = [n for n in names if n.endswith((".gguf", ".safetensors", ".bin"))]
assert not bad, f"{wheel} holds model files: {bad}"
print(f"wheelhouse: {len(list(wheel.parent.glob('*.whl')))} wheels; {wheel.name} checked")
PY
