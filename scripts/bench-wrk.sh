#!/usr/bin/env bash
# Side by side over loopback with wrk: a bare hyper hello-world, then an authenticated
# GET /external/v1/job-roles on the release wfs-server (SQLite). Prints both and the ratio.
# Usage: scripts/bench-wrk.sh [duration, default 10s] [connections, default 64]
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${1:-10s}
CONNS=${2:-64}
command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk; }
cargo build --release -q -p wfs-server && cargo build --release -q --example hello_hyper

WORK=$(mktemp -d)
cleanup() { kill "${HELLO_PID:-}" "${SERVER_PID:-}" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
DB="sqlite://$WORK/bench.db?mode=rwc"
export WFS_JWT_SECRET=bench-secret-bench-secret-bench-secret

target/release/examples/hello_hyper 127.0.0.1:18081 >/dev/null &
HELLO_PID=$!
target/release/wfs-server create-admin --database-url "$DB" --company Bench \
  --email bench@bench.test --password bench-password >/dev/null
RUST_LOG=warn target/release/wfs-server serve --database-url "$DB" --bind 127.0.0.1:18080 &
SERVER_PID=$!
for _ in $(seq 50); do curl -sf localhost:18080/healthz >/dev/null && break; sleep 0.1; done

TOKEN=$(curl -sf -X POST localhost:18080/external/v1/auth/signin \
  -d '{"email":"bench@bench.test","password":"bench-password"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["accessToken"])')
KEY=$(curl -sf -X POST localhost:18080/external/v1/auth/keys -H "Authorization: Bearer $TOKEN" \
  -d '{"name":"bench","scopes":["workforce:read","workforce:write"]}')
CID=$(echo "$KEY" | python3 -c 'import json,sys; print(json.load(sys.stdin)["clientId"])')
SEC=$(echo "$KEY" | python3 -c 'import json,sys; print(json.load(sys.stdin)["clientSecret"])')
for i in $(seq -w 1 20); do
  curl -sf -X POST localhost:18080/external/v1/job-roles -H "x-api-key: $CID" -H "x-api-secret: $SEC" \
    -H "Idempotency-Key: bench-role-$i" -d "{\"title\":\"Role $i\",\"weeklyHours\":38}" >/dev/null
done

rps() { awk '/Requests\/sec/ {print $2}'; }
echo "== hello world (bare hyper)"
HELLO=$(wrk -t2 -c"$CONNS" -d"$DURATION" http://127.0.0.1:18081/ | tee /dev/stderr | rps)
echo "== authenticated GET /external/v1/job-roles (20 roles)"
WFS=$(wrk -t2 -c"$CONNS" -d"$DURATION" -H "x-api-key: $CID" -H "x-api-secret: $SEC" \
  http://127.0.0.1:18080/external/v1/job-roles | tee /dev/stderr | rps)
python3 -c "print(f'hello {float(\"$HELLO\"):.0f} req/s, wfs {float(\"$WFS\"):.0f} req/s, ratio {float(\"$WFS\")/float(\"$HELLO\"):.2f}')"
