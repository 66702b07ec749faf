#!/usr/bin/env bash
# Installs bubblewrap (`bwrap`), which `durable-bash worker --sandbox bwrap` and its tests need.
# Idempotent: does nothing when bwrap is on PATH. Installs through apt-get (Debian, Ubuntu) as root;
# anywhere else it says what to install and fails.
set -euo pipefail

if command -v bwrap >/dev/null 2>&1; then
  echo "provision-sandbox: $(bwrap --version) at $(command -v bwrap)"
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq bubblewrap >/dev/null 2>&1 || {
    apt-get update -qq >/dev/null
    apt-get install -y -qq bubblewrap >/dev/null
  }
  echo "provision-sandbox: installed $(bwrap --version)"
  exit 0
fi
echo "provision-sandbox: no bwrap on PATH; install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap)" >&2
exit 1
