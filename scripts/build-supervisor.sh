#!/usr/bin/env bash
# Builds the per-command supervisor (supervisor/*.c: supervisor.c has main, supervisor.h the parts'
# declarations) into dist/bin/durable-bash-supervisor. Idempotent: skips the compile when the binary
# is newer than every source file and this script.
#
# Compiler, first found: $DURABLE_BASH_SUPERVISOR_CC (forces a rebuild; the value `zig` forces the
# zig fallback), $CC, cc, gcc, clang; else Zig from the pinned PyPI wheel `ziglang`
# (scripts/supervisor-requirements.txt), installed into <repo>/.tools/ziglang and run as
# `python3 -m ziglang cc`.
#
# Linking: static by default. Measured at 1,000 supervisors, a static glibc binary costs about half
# the PSS of a dynamic one (docs/SUPERVISOR.md): the dynamic loader's relocations and libc's data
# are private pages in every process, while the static binary's text is shared. Without libc.a the
# static link fails and the script links dynamically. DURABLE_BASH_SUPERVISOR_LINK=dynamic|static
# overrides. Zig links statically against the musl it ships.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
sources=("$root"/supervisor/*.c)
out=$root/dist/bin/durable-bash-supervisor
requirements=$root/scripts/supervisor-requirements.txt
tools=$root/.tools
zig_dir=$tools/ziglang
flags=(-Os -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -s)
forced=${DURABLE_BASH_SUPERVISOR_CC:-}
link=${DURABLE_BASH_SUPERVISOR_LINK:-static}

say() { printf 'build-supervisor: %s\n' "$*" >&2; }
fail() { say "$*"; exit 1; }

up_to_date() {
  [ -x "$out" ] && [ "$out" -nt "${BASH_SOURCE[0]}" ] || return 1
  local file
  for file in "${sources[@]}" "$root/supervisor/supervisor.h"; do [ "$out" -nt "$file" ] || return 1; done
}
if [ -z "$forced" ] && up_to_date; then
  exit 0
fi

# Installs the pinned wheel once (into a temporary directory renamed into place, so an interrupted
# install is never mistaken for a finished one) and sets cc to Zig's clang.
use_zig() {
  command -v python3 >/dev/null || fail "no C compiler and no python3 for the zig fallback"
  # The stamp names the pins the installed wheel came from, so a new pin reinstalls.
  local pins
  pins=$(sha256sum "$requirements" | cut -d' ' -f1)
  if [ "$(cat "$zig_dir/.pinned" 2>/dev/null)" != "$pins" ]; then
    say "installing the pinned ziglang wheel into $zig_dir"
    local partial=$zig_dir.partial.$$
    rm -rf "$partial"
    PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --disable-pip-version-check --no-deps --require-hashes \
      --only-binary=:all: --target "$partial" -r "$requirements" ||
      { rm -rf "$partial"; fail "pip install of ziglang failed (see scripts/supervisor-requirements.txt)"; }
    echo "$pins" >"$partial/.pinned"
    rm -rf "$zig_dir"
    mv "$partial" "$zig_dir"
  fi
  export ZIG_GLOBAL_CACHE_DIR=$tools/zig-cache ZIG_LOCAL_CACHE_DIR=$tools/zig-cache
  cc=(env "PYTHONPATH=$zig_dir" python3 -m ziglang cc -target "$(uname -m)-linux-musl")
  link=static
}

if [ "$forced" = zig ]; then
  use_zig
elif [ -n "$forced" ]; then
  read -ra cc <<<"$forced"
elif [ -n "${CC:-}" ]; then
  read -ra cc <<<"$CC"
else
  cc=()
  for candidate in cc gcc clang; do
    if command -v "$candidate" >/dev/null; then
      cc=("$candidate")
      break
    fi
  done
  [ ${#cc[@]} -gt 0 ] || use_zig
fi

mkdir -p "$(dirname "$out")"
tmp=$out.tmp.$$
trap 'rm -f "$tmp"' EXIT
compile() { "${cc[@]}" "${flags[@]}" "$@" -o "$tmp" "${sources[@]}"; }
if [ "$link" = static ] && compile -static 2>/dev/null; then
  linked=static
else
  [ "$link" = static ] && say "static link failed (no libc.a?); linking dynamically"
  compile
  linked=dynamic
fi
# Smoke test: with no arguments the supervisor must print its usage and exit 101.
set +e
"$tmp" >/dev/null 2>&1 3>&-
rc=$?
set -e
[ "$rc" -eq 101 ] || fail "the built supervisor does not run (exit $rc without arguments, want 101)"
mv -f "$tmp" "$out"
say "built $out with ${cc[*]} ($linked, $(wc -c <"$out") bytes)"
