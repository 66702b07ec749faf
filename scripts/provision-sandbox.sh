#!/usr/bin/env bash
# Installs what commands' containment needs from the host: bubblewrap (`bwrap`, for
# `durable-bash worker --sandbox bwrap` and its tests) and slirp4netns (each session's own network,
# src/command-host/containment/session-networks.ts). Idempotent: installs only what is missing. Installs through
# apt-get (Debian, Ubuntu) as root; anywhere else it says what to install and fails.
set -euo pipefail

missing=()
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
command -v slirp4netns >/dev/null 2>&1 || missing+=(slirp4netns)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 || {
      apt-get update -qq >/dev/null
      apt-get install -y -qq "${missing[@]}" >/dev/null
    }
    echo "provision-sandbox: installed ${missing[*]}"
  else
    echo "provision-sandbox: missing ${missing[*]}; install them (Debian/Ubuntu: apt-get install ${missing[*]})" >&2
    exit 1
  fi
fi
echo "provision-sandbox: $(bwrap --version) at $(command -v bwrap); $(slirp4netns --version | head -1) at $(command -v slirp4netns)"
