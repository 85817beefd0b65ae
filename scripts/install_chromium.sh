#!/usr/bin/env bash
# Install Debian's chromium for the report's headless-browser test (tests/test_browser.py).
# Does nothing when /usr/bin/chromium is already there. Needs root (or sudo) and apt. A small
# CJK font comes along so that Chinese text in screenshots is legible.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install_chromium: apt-get not found; install chromium with your package manager" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install_chromium: needs root to run apt-get install chromium" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core fonts-wqy-microhei >/dev/null
/usr/bin/chromium --version
