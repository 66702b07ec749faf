#!/usr/bin/env bash
# Installs Chromium from Debian for the Web UI screenshot (scripts/ui-screenshot.mjs), once.
# Idempotent: a machine that has it already is left alone. Needs root (apt-get).
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
command -v chromium >/dev/null
