#!/usr/bin/env bash
# Set up localeval in .venv/ and fetch the models of a profile. Idempotent: a second run only
# checks (pip is skipped while pyproject.toml is unchanged; models are verified, not refetched).
#   bash scripts/setup.sh [--dev] [--profile tiny|small|standard]...
# Environment: PYTHON (interpreter, default python3.11 or python3), LOCALEVAL_TORCH (the torch
# requirement, default torch==2.13.0: install a CUDA build yourself first on a GPU box),
# CMAKE_ARGS (e.g. -DGGML_CUDA=on to build llama.cpp with CUDA).
set -euo pipefail
cd "$(dirname "$0")/.."

dev=0
profiles=()
while [ $# -gt 0 ]; do
  case "$1" in
    --dev) dev=1 ;;
    --profile) profiles+=("$2"); shift ;;
    *) echo "setup.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

py=${PYTHON:-$(command -v python3.11 || command -v python3)}
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv with $py"
  "$py" -m venv .venv
fi
pip=(.venv/bin/python -m pip --disable-pip-version-check -q)

extras=""
stamp=.venv/.localeval-installed
if [ "$dev" = 1 ]; then
  extras="[dev]"
  stamp=.venv/.localeval-installed-dev
fi
want=$(sha256sum < pyproject.toml | cut -c1-16)
installed() {  # the dev install also satisfies a plain one
  [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] ||
    { [ "$dev" = 0 ] && [ "$(cat .venv/.localeval-installed-dev 2>/dev/null)" = "$want" ]; }
}
if ! installed; then
  torch_req=${LOCALEVAL_TORCH:-torch==2.13.0}
  if ! .venv/bin/python -c "import torch" 2>/dev/null; then
    echo "setup: installing $torch_req (before anything that needs torch)"
    "${pip[@]}" install "$torch_req" 2> >(grep -v "^WARNING: Location" >&2)
  fi
  echo "setup: installing localeval$extras (llama-cpp-python builds from source once, ~6 min; pip caches it)"
  "${pip[@]}" install -e ".$extras" 2> >(grep -v "^WARNING: Location" >&2)
  echo "$want" > "$stamp"
fi

for profile in "${profiles[@]}"; do
  .venv/bin/python -m localeval models pull --profile "$profile"
done
