#!/usr/bin/env bash
# Quick start: set up (first time only), fetch the default offline models (profile small) and
# evaluate the bundled example (the design documents' Chinese case plus a few English rows).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --profile small
exec .venv/bin/python -m localeval run localeval/examples/example.jsonl --out runs/example --overwrite \
  --metrics faithfulness,answer_similarity,retrieval "$@"
