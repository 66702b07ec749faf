#!/usr/bin/env bash
# Provides what the cluster tests (npm run test:cluster, test/cluster/) need to run a
# production-shaped Temporal cluster on this machine: the Temporal server and its SQL schema tool
# (built from the Go module proxy), the server's PostgreSQL schema files, and PostgreSQL itself
# (Debian's package). Nothing is downloaded from outside the package registries.
# Idempotent: a second run checks the binaries and the stamp, and exits.
#
# Lands in $DURABLE_BASH_CLUSTER_DIR (default ~/.cache/durable-bash/cluster, outside git):
#   bin/temporal-server     go install go.temporal.io/server/cmd/server@$server_version
#   bin/temporal-sql-tool   go install go.temporal.io/server/cmd/tools/sql@$server_version
#   schema/postgresql/v12/{temporal,visibility}   from the server module in the Go module cache
#   provisioned-from        the pins these came from (a change of pins rebuilds)
# The build takes about 5 minutes on 2 cores (the Go toolchain and modules come from the module proxy).
set -euo pipefail

# Keep in step with docker-compose.yml (temporalio/server and temporalio/admin-tools tags).
server_version=v1.32.0
go_toolchain=go1.27.3

dir=${DURABLE_BASH_CLUSTER_DIR:-$HOME/.cache/durable-bash/cluster}
bin=$dir/bin
server=$bin/temporal-server
sql_tool=$bin/temporal-sql-tool
schema=$dir/schema/postgresql/v12
stamp=$dir/provisioned-from
want_stamp="go.temporal.io/server@$server_version built with $go_toolchain"

say() { printf 'provision-cluster: %s\n' "$*"; }

# PostgreSQL's server binaries: Debian installs them under /usr/lib/postgresql/<major>/bin.
pg_bindir() {
  local found
  found=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  [ -n "$found" ] && [ -x "$found/initdb" ] && [ -x "$found/pg_ctl" ] && echo "$found"
}
postgresql_ok() { [ -n "$(pg_bindir)" ] && id postgres >/dev/null 2>&1 && command -v runuser >/dev/null; }
temporal_ok() {
  [ -x "$server" ] && [ -x "$sql_tool" ] && [ -f "$schema/temporal/schema.sql" ] &&
    [ -f "$schema/visibility/schema.sql" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want_stamp" ]
}

if temporal_ok && postgresql_ok; then
  say "already provisioned in $dir ($want_stamp; PostgreSQL in $(pg_bindir))"
  exit 0
fi

if ! postgresql_ok; then
  command -v apt-get >/dev/null || { say "FAILED: no PostgreSQL and no apt-get to install it"; exit 1; }
  [ "$(id -u)" -eq 0 ] || { say "FAILED: installing PostgreSQL needs root (apt-get install -y postgresql)"; exit 1; }
  say "installing PostgreSQL with apt-get (Debian's package)"
  apt-get update -qq
  # The package's own cluster is not used: the tests start a private one in scratch space.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  postgresql_ok || { say "FAILED: PostgreSQL still missing after apt-get install postgresql"; exit 1; }
fi

if ! temporal_ok; then
  command -v go >/dev/null || {
    say "FAILED: go not found (apt-get install -y golang-go; GOTOOLCHAIN then fetches $go_toolchain)"
    exit 1
  }
  mkdir -p "$bin"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  say "building Temporal server $server_version and temporal-sql-tool with $go_toolchain (about 5 minutes)"
  start=$(date +%s)
  GOTOOLCHAIN=$go_toolchain GOBIN=$work GOFLAGS=-buildvcs=false \
    go install "go.temporal.io/server/cmd/server@$server_version" \
    "go.temporal.io/server/cmd/tools/sql@$server_version"
  say "built in $(($(date +%s) - start)) s"
  module=$(GOTOOLCHAIN=$go_toolchain go env GOMODCACHE)/go.temporal.io/server@$server_version
  [ -d "$module/schema/postgresql/v12" ] || { say "FAILED: no schema in $module"; exit 1; }
  rm -rf "$dir/schema"
  mkdir -p "$schema"
  cp -R "$module/schema/postgresql/v12/temporal" "$module/schema/postgresql/v12/visibility" "$schema/"
  chmod -R u+w "$dir/schema" # The module cache is read-only.
  mv -f "$work/server" "$server"
  mv -f "$work/sql" "$sql_tool"
  echo "$want_stamp" >"$stamp"
fi

say "ready: $server ($("$server" --version 2>/dev/null | head -n 1))"
say "ready: $sql_tool, schema in $schema"
say "ready: PostgreSQL in $(pg_bindir)"
