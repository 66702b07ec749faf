#!/bin/sh
# The worker container's main process (under tini, which reaps what reparents to it). A worker that
# crashes is started again at once; the commands it ran keep running under their supervisors and
# the new worker re-attaches to them (same host id, same spill directory on the volume). SIGTERM
# (docker stop) stops the worker and this loop; the container's end then ends its commands.
set -u
child=0
stopping=0
trap 'stopping=1; [ "$child" -ne 0 ] && kill -TERM "$child" 2>/dev/null' TERM INT
while :; do
  node "${DURABLE_BASH_CLI:-/app/dist/cli/main.js}" worker "$@" &
  child=$!
  wait "$child"
  status=$?
  if [ "$stopping" -eq 1 ]; then
    wait "$child" 2>/dev/null # The signal cut the first wait short: let the worker finish stopping.
    exit 0
  fi
  echo "durable-bash: the worker exited ($status); starting it again in 1 s" >&2
  sleep 1
done
