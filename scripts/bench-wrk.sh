#!/usr/bin/env bash
# Every row of the performance table in one run, side by side over loopback with wrk
# (release builds, `wrk -t1 -c32 -d5s` unless told otherwise):
#
#   - authenticated GET /external/v1/job-roles (10 roles), SQLite and PostgreSQL;
#   - idempotent POST /external/v1/job-roles (a new Idempotency-Key per request),
#     SQLite and PostgreSQL;
#
# each as a ratio to a bare hyper hello-world measured just before it, in this run;
# and the same hello-world answering with the read's headers and body size
# (examples/hello_hyper.rs --shaped), the read's ceiling were wfs's own work free.
# Also the server's RSS (VmHWM) after a read run at 64 connections; the database's
# own ceiling for the idempotent write (cargo bench --bench write_floor: the same
# wfs-core calls from 32 tasks, no HTTP), as a ratio to the same hello-world; pgbench on
# the same PostgreSQL, for a generic three-insert transaction and for exactly the
# statements wfs sends for that write; and, unless
# WFS_BENCH_SKIP_HOURS=1, /hours for 31 days over 1,000,000 shifts on both
# databases (cargo bench --bench hours).
#
# PostgreSQL is a throwaway cluster started here on a loopback port with its DEFAULT
# durability settings (fsync, synchronous_commit, full_page_writes all on) and
# stopped by its PID. SQLite runs as the server runs it (WAL, synchronous=NORMAL).
#
# Usage: scripts/bench-wrk.sh [duration, default 5s] [connections, default 32]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-lib.sh
DURATION=${1:-5s}
CONNS=${2:-32}
need() { command -v "$1" >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null; }; }
need wrk wrk
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || {
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
}
cargo build --release -q -p wfs-server && cargo build --release -q --example hello_hyper
# The binaries cargo just built, wherever its target dir is (CARGO_TARGET_DIR).
REL=${CARGO_TARGET_DIR:-target}/release

WORK=$(mktemp -d /tmp/wfs-bench.XXXXXX)
chmod 755 "$WORK" # PostgreSQL runs as its own user and must reach its directory
PGPID=
SERVER_PID=
HELLO_PID=
SHAPED_PID=
cleanup() {
  kill "$HELLO_PID" "$SHAPED_PID" "$SERVER_PID" 2>/dev/null || true
  if [ -n "$PGPID" ]; then
    kill -INT "$PGPID" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$PGPID" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
export WFS_JWT_SECRET=bench-secret-bench-secret-bench-secret
HELLO=127.0.0.1:18081
API=127.0.0.1:18080

"$REL"/examples/hello_hyper "$HELLO" >/dev/null &
HELLO_PID=$!
# The same hello-world answering with the read's headers and body size: the read's
# ceiling, were wfs's own work free.
SHAPED=127.0.0.1:18082
"$REL"/examples/hello_hyper "$SHAPED" --shaped >/dev/null &
SHAPED_PID=$!

# A throwaway PostgreSQL with default durability.
PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
PGPORT=${WFS_BENCH_PGPORT:-55460}
run_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
mkdir -p "$WORK/pg"
[ "$(id -u)" = 0 ] && chown postgres:postgres "$WORK/pg"
chmod 700 "$WORK/pg"
run_pg "$PGBIN/initdb" -D "$WORK/pg/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 >/dev/null
run_pg "$PGBIN/pg_ctl" -D "$WORK/pg/data" -l "$WORK/pg/server.log" -w \
  -o "-p $PGPORT -k $WORK/pg -c listen_addresses=127.0.0.1 -c max_connections=200" start >/dev/null
PGPID=$(head -1 "$WORK/pg/data/postmaster.pid")
PG_URL="postgres://postgres@127.0.0.1:$PGPORT/postgres"

hello() { wrk -t1 -c"$CONNS" -d"$DURATION" "http://$HELLO/" | rps; }
ratio() { python3 -c "print(f'{$1/$2:.3f}')"; }

# The idempotent write: a new Idempotency-Key per request, unique to this run.
write_post_lua "$WORK/post.lua" "bench-$$"

ROWS=()
row() { ROWS+=("$(printf '| %-44s | %10.0f | %10.0f | %6s |' "$1" "$2" "$3" "$(ratio "$2" "$3")")"); }

bench_backend() { # name database-url
  local name=$1 db=$2
  "$REL"/wfs-server migrate --database-url "$db" >/dev/null
  "$REL"/wfs-server create-admin --database-url "$db" --company Bench \
    --email "bench-$name@bench.test" --password bench-password >/dev/null
  RUST_LOG=warn "$REL"/wfs-server serve --database-url "$db" --bind "$API" &
  SERVER_PID=$!
  wait_healthy "$API"
  bench_key "$API" "bench-$name@bench.test"
  local cid=$CID sec=$SEC
  seed_roles "$API" "seed-$name"
  local h w
  wrk -t1 -c"$CONNS" -d1s -H "x-api-key: $cid" -H "x-api-secret: $sec" "http://$API/external/v1/job-roles" >/dev/null
  h=$(hello)
  w=$(wrk -t1 -c"$CONNS" -d"$DURATION" -H "x-api-key: $cid" -H "x-api-secret: $sec" \
    "http://$API/external/v1/job-roles" | rps)
  row "authenticated GET /job-roles (10 roles), $name" "$w" "$h"
  wrk -t1 -c64 -d"$DURATION" -H "x-api-key: $cid" -H "x-api-secret: $sec" \
    "http://$API/external/v1/job-roles" >/dev/null
  RSS+=("$name: $(awk '/VmHWM/ {printf "%.1f MB", $2/1024}' /proc/$SERVER_PID/status) peak RSS after the read run at 64 connections")
  h=$(hello)
  w=$(wrk -t1 -c"$CONNS" -d"$DURATION" -s "$WORK/post.lua" -H "x-api-key: $cid" -H "x-api-secret: $sec" \
    "http://$API/external/v1/job-roles" | rps)
  row "idempotent POST /job-roles, $name" "$w" "$h"
  WRITE_HELLO=$h
  PG_WRITE=$w # the last backend's: PostgreSQL
  kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=
}

RSS=()
h=$(hello)
row "hello-world answering as the read does (--shaped)" \
  "$(wrk -t1 -c"$CONNS" -d"$DURATION" "http://$SHAPED/" | rps)" "$h"
bench_backend SQLite "sqlite://$WORK/bench.db?mode=rwc"
bench_backend PostgreSQL "$PG_URL"

echo
echo "wrk -t1 -c$CONNS -d$DURATION, ratio to a bare hyper hello-world measured just before each row"
printf '| %-44s | %10s | %10s | %6s |\n' "path" "wfs req/s" "hello req/s" "ratio"
printf '|%s|%s|%s|%s|\n' "----------------------------------------------" "------------" "------------" "--------"
printf '%s\n' "${ROWS[@]}"
echo
printf '%s\n' "${RSS[@]}"

echo
echo "The idempotent write's database work alone (cargo bench --bench write_floor), to the last hello-world ($WRITE_HELLO req/s):"
floor() { # the environment of the bench
  local line per_s
  line=$(env "$@" cargo bench -q --bench write_floor 2>/dev/null | grep write_floor)
  per_s=$(awk '{for (i = 1; i <= NF; i++) if ($i == "writes/s") print $(i-1)}' <<<"$line")
  echo "$line; ratio $(ratio "$per_s" "$WRITE_HELLO")"
}
floor
run_pg "$PGBIN/psql" -q -h 127.0.0.1 -p "$PGPORT" -U postgres \
  -c "DROP DATABASE IF EXISTS floor" -c "CREATE DATABASE floor" postgres
floor WFS_BENCH_DATABASE_URL="${PG_URL%/postgres}/floor"

# PostgreSQL's own ceiling for the same multi-statement transaction (issue 35's
# yardstick): pgbench, no HTTP and no ORM, as many clients as wrk's connections, each
# transaction BEGIN, three one-row INSERTs of about the write's sizes, COMMIT.
run_pg "$PGBIN/psql" -q -h 127.0.0.1 -p "$PGPORT" -U postgres -d floor -c "
  CREATE TABLE pb_row (id uuid PRIMARY KEY, company uuid, title text, at timestamptz);
  CREATE TABLE pb_event (id uuid PRIMARY KEY, company uuid, kind text, at timestamptz, body text);
  CREATE TABLE pb_answer (id uuid PRIMARY KEY, status int, body bytea, at timestamptz);"
cat >"$WORK/pgbench.sql" <<'SQL'
BEGIN;
INSERT INTO pb_row VALUES (gen_random_uuid(), gen_random_uuid(), 'Bench role', now());
INSERT INTO pb_event VALUES (gen_random_uuid(), gen_random_uuid(), 'job_role.created', now(), repeat('x', 150));
INSERT INTO pb_answer VALUES (gen_random_uuid(), 201, convert_to(repeat('x', 70), 'UTF8'), now());
COMMIT;
SQL
chmod 644 "$WORK/pgbench.sql"
PGB=$(run_pg "$PGBIN/pgbench" -n -h 127.0.0.1 -p "$PGPORT" -U postgres -c "$CONNS" -j 2 \
  -T "${DURATION%s}" -f "$WORK/pgbench.sql" floor | awk '/^tps/ {print $3}')
echo
echo "pgbench, BEGIN + 3 INSERTs + COMMIT, $CONNS clients: ${PGB%.*} tps;" \
  "wfs's idempotent POST on PostgreSQL above is $(ratio "$PG_WRITE" "$PGB") of it"

# The same yardstick for exactly the statements wfs sends for that write
# (scripts/pgbench-wfs-write.sql), on the wfs database the rows above ran on: how much
# of the gap is wfs's work around its SQL, and how much the SQL itself.
cp scripts/pgbench-wfs-write.sql "$WORK/wfs-write.sql"
chmod 644 "$WORK/wfs-write.sql"
COMPANY=$(run_pg "$PGBIN/psql" -qtA -h 127.0.0.1 -p "$PGPORT" -U postgres \
  -c "SELECT id FROM companies LIMIT 1" postgres)
PGW=$(run_pg "$PGBIN/pgbench" -n -h 127.0.0.1 -p "$PGPORT" -U postgres -c "$CONNS" -j 2 \
  -T "${DURATION%s}" -M prepared -D company="$COMPANY" -f "$WORK/wfs-write.sql" postgres |
  awk '/^tps/ {print $3}')
echo "pgbench, wfs's own statements for that write (BEGIN, one statement, COMMIT)," \
  "$CONNS clients: ${PGW%.*} tps; wfs's idempotent POST is $(ratio "$PG_WRITE" "$PGW") of it"

if [ "${WFS_BENCH_SKIP_HOURS:-0}" != 1 ]; then
  echo
  echo "/hours, 31 days over 1,000,000 shifts (cargo bench --bench hours):"
  kill "$HELLO_PID"; HELLO_PID=
  echo "SQLite:"
  cargo bench -q --bench hours 2>/dev/null | grep -E "hours|median|p95" || true
  echo "PostgreSQL:"
  WFS_BENCH_DATABASE_URL="$PG_URL" cargo bench -q --bench hours 2>/dev/null | grep -E "hours|median|p95" || true
fi
