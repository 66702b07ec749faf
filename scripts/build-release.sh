#!/usr/bin/env bash
# Builds the last release of durable-bash (or the ref given) from this repository's history, for
# the upgrade test (npm run test:upgrade, test/upgrade/): its source at the release commit, its
# own locked dependencies (npm ci, from the registry), its own build (the supervisor, tsc, the
# workflow bundle). Prints the directory it built, alone, on stdout.
#
# The last release is the newest tag v<version>, or, in a clone without tags, the newest commit
# whose subject is "Release <version>" (docs/RELEASING.md cuts each release that way).
# Lands in $DURABLE_BASH_RELEASES_DIR (default ~/.cache/durable-bash/releases, outside git), one
# folder per commit; a folder that finished building is used again as it is. About 2 minutes on
# 2 cores the first time (npm ci and the build), nothing after.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'build-release: %s\n' "$*" >&2; }

ref=${1:-}
if [ -z "$ref" ]; then
  ref=$(git tag --list 'v[0-9]*' --sort=-v:refname | head -n 1)
  [ -n "$ref" ] || ref=$(git log -1 --format=%H --grep='^Release [0-9]' 2>/dev/null || true)
fi
if [ -z "$ref" ]; then
  # A shallow clone holds neither: ask its origin for the rest of the history once.
  if [ "$(git rev-parse --is-shallow-repository)" = true ]; then
    say "a shallow clone: fetching the history to find the last release"
    git fetch --quiet --unshallow --tags || true
    ref=$(git tag --list 'v[0-9]*' --sort=-v:refname | head -n 1)
    [ -n "$ref" ] || ref=$(git log -1 --format=%H --grep='^Release [0-9]' || true)
  fi
fi
if [ -z "$ref" ]; then
  say "no release in this repository's history (no tag v<version>, no commit 'Release <version>')"
  exit 1
fi
commit=$(git rev-parse --verify --quiet "$ref^{commit}") || {
  say "$ref is not a commit of this repository"
  exit 1
}

dir=${DURABLE_BASH_RELEASES_DIR:-$HOME/.cache/durable-bash/releases}/$commit
if [ -f "$dir/.built" ]; then
  echo "$dir"
  exit 0
fi

version=$(git show "$commit:package.json" | node -e 'let s="";process.stdin.on("data",(c)=>s+=c).on("end",()=>console.log(JSON.parse(s).version))')
say "building durable-bash $version ($commit) in $dir"
rm -rf "$dir"
mkdir -p "$dir"
git archive "$commit" | tar -x -C "$dir"
(
  cd "$dir"
  npm ci --no-audit --no-fund --loglevel=error >&2
  npm run build --silent >&2
)
touch "$dir/.built"
echo "$dir"
