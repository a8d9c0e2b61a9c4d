#!/usr/bin/env bash
# How the hot read and the idempotent write scale with cores: for each server core
# count N given, the release wfs-server (SQLite, as it runs by default) and the bare
# hyper hello-world (examples/hello_hyper.rs) are each pinned to cores 0..N-1 with
# taskset, and wrk runs pinned to the remaining cores (one wrk thread per core left,
# 32 connections per wrk thread). Per N it prints one table row:
#
#   | server cores | hello req/s | wfs read req/s | read / hello | hello shaped as the read
#   req/s | shaped / hello | idempotent POST req/s |
#
# "Shaped" is the hello-world answering with the read's headers and body size
# (examples/hello_hyper.rs --shaped): the read's ceiling, were wfs's own work free.
#
# The read is an authenticated GET /external/v1/job-roles answering 10 roles; the
# write a POST /external/v1/job-roles with a new Idempotency-Key per request. Each
# read is divided by the hello-world measured just before it, on the same cores, so the
# ratio holds when the machine's speed drifts. When N leaves no core for wrk, wrk shares
# the server's cores and the row says so (the figure then understates the server).
#
# Usage: scripts/bench-cores.sh [core counts, default "1 2 4 8" limited to the
#        machine's cores minus one] ; WFS_BENCH_DURATION (default 5s);
#        WFS_BENCH_DATABASE_URL=postgres://... benches PostgreSQL instead of SQLite.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-lib.sh
DURATION=${WFS_BENCH_DURATION:-5s}
TOTAL=$(nproc)
if [ $# -gt 0 ]; then
  COUNTS=("$@")
else
  COUNTS=()
  for n in 1 2 4 8 12 16; do
    [ "$n" -lt "$TOTAL" ] && COUNTS+=("$n")
  done
  [ ${#COUNTS[@]} -gt 0 ] || COUNTS=(1)
fi
command -v wrk >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }
command -v taskset >/dev/null || { echo "taskset (util-linux) is needed" >&2; exit 1; }
cargo build --release -q -p wfs-server && cargo build --release -q --example hello_hyper
REL=${CARGO_TARGET_DIR:-target}/release

WORK=$(mktemp -d /tmp/wfs-cores.XXXXXX)
SERVER_PID=
HELLO_PID=
cleanup() {
  kill "$HELLO_PID" "$SERVER_PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
export WFS_JWT_SECRET=bench-secret-bench-secret-bench-secret
HELLO=127.0.0.1:18091
API=127.0.0.1:18090
DB=${WFS_BENCH_DATABASE_URL:-"sqlite://$WORK/bench.db?mode=rwc"}

cores() { # first last: "a-b"
  if [ "$1" -eq "$2" ]; then echo "$1"; else echo "$1-$2"; fi
}

write_post_lua "$WORK/post.lua" "cores-$$"

"$REL"/wfs-server migrate --database-url "$DB" >/dev/null
"$REL"/wfs-server create-admin --database-url "$DB" --company Bench \
  --email bench-cores@bench.test --password bench-password >/dev/null 2>&1 || true

start_server() { # cpu list
  RUST_LOG=warn taskset -c "$1" "$REL"/wfs-server serve --database-url "$DB" --bind "$API" &
  SERVER_PID=$!
  wait_healthy "$API"
}
stop() { kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }

# One key and 10 roles, made once on an unpinned server.
start_server "0-$((TOTAL - 1))"
bench_key "$API" bench-cores@bench.test
seed_roles "$API" "cores-seed-$$"
stop "$SERVER_PID"; SERVER_PID=

ROWS=()
for n in "${COUNTS[@]}"; do
  server_cpus=$(cores 0 $((n - 1)))
  if [ "$n" -lt "$TOTAL" ]; then
    wrk_cpus=$(cores "$n" $((TOTAL - 1)))
    threads=$((TOTAL - n))
    note=""
  else
    wrk_cpus=$(cores 0 $((TOTAL - 1)))
    threads=$TOTAL
    note=" (wrk shares the server's cores)"
  fi
  conns=$((threads * 32))
  load() { taskset -c "$wrk_cpus" wrk -t"$threads" -c"$conns" -d"$DURATION" "$@" | rps; }

  taskset -c "$server_cpus" "$REL"/examples/hello_hyper "$HELLO" >/dev/null &
  HELLO_PID=$!
  sleep 0.3
  hello=$(load "http://$HELLO/")
  stop "$HELLO_PID"; HELLO_PID=
  taskset -c "$server_cpus" "$REL"/examples/hello_hyper "$HELLO" --shaped >/dev/null &
  HELLO_PID=$!
  sleep 0.3
  shaped=$(load "http://$HELLO/")
  stop "$HELLO_PID"; HELLO_PID=

  start_server "$server_cpus"
  taskset -c "$wrk_cpus" wrk -t"$threads" -c"$conns" -d1s -H "x-api-key: $CID" -H "x-api-secret: $SEC" \
    "http://$API/external/v1/job-roles" >/dev/null
  read=$(load -H "x-api-key: $CID" -H "x-api-secret: $SEC" "http://$API/external/v1/job-roles")
  write=$(load -s "$WORK/post.lua" -H "x-api-key: $CID" -H "x-api-secret: $SEC" \
    "http://$API/external/v1/job-roles")
  stop "$SERVER_PID"; SERVER_PID=

  ratio=$(python3 -c "print(f'{$read/$hello:.2f}')")
  ceiling=$(python3 -c "print(f'{$shaped/$hello:.2f}')")
  ROWS+=("$(printf '| %s%s | %.0f | %.0f | %s | %.0f | %s | %.0f |' "$n" "$note" "$hello" "$read" "$ratio" "$shaped" "$ceiling" "$write")")
done

echo
echo "$(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)); wrk on the cores the server does not use, 32 connections per wrk thread, $DURATION per run; ${WFS_BENCH_DATABASE_URL:+PostgreSQL}${WFS_BENCH_DATABASE_URL:-SQLite}"
echo "| server cores | hello-world req/s | wfs read req/s | read / hello | hello shaped as the read req/s | shaped / hello | idempotent POST req/s |"
echo "|---|---|---|---|---|---|---|"
printf '%s\n' "${ROWS[@]}"
