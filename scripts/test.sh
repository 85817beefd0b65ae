#!/usr/bin/env bash
# Set up the dev environment (first time only), fetch the test models (0.5B and 1.5B judges,
# m3e-small), install Chromium for the report test when missing, then run the whole test suite.
#   bash scripts/test.sh [pytest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --dev --profile tiny --profile small
if [ ! -x /usr/bin/chromium ] && [ -f scripts/install_chromium.sh ]; then
  bash scripts/install_chromium.sh || echo "test: chromium could not be installed; browser tests will skip" >&2
fi
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
exec .venv/bin/python -m pytest "$@"
