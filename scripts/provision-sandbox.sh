#!/usr/bin/env bash
# Installs what commands' containment needs from the host: bubblewrap (`bwrap`: sessions apart and
# `durable-bash worker --sandbox bwrap`) and slirp4netns (each session's own network,
# src/command-host/containment/session-networks.ts). Run by `npm test` (pretest, through `npm run provision`) and
# by `durable-bash dev` when either is missing. Idempotent: installs only what is missing, through
# apt-get (Debian, Ubuntu) as root. Where it cannot, it prints one line, what is missing and the
# command that installs it, and exits 1.
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
    # The command that installs them here: apt-get, else the package manager this system has.
    install="apt-get install -y"
    for manager in apt-get dnf zypper pacman apk; do
      if command -v "$manager" >/dev/null 2>&1; then
        case $manager in
          dnf | zypper) install="$manager install -y" ;;
          pacman) install="pacman -S --noconfirm" ;;
          apk) install="apk add" ;;
        esac
        break
      fi
    done
    [ "$(id -u)" = 0 ] || install="sudo $install"
    them=them
    [ ${#missing[@]} -gt 1 ] || them=it
    names=${missing[*]}
    echo "provision-sandbox: sessions apart need ${names// / and }, missing here; install $them: $install ${missing[*]}" >&2
    exit 1
  fi
fi
echo "provision-sandbox: $(bwrap --version) at $(command -v bwrap); $(slirp4netns --version | head -1) at $(command -v slirp4netns)"
