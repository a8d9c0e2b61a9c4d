#!/usr/bin/env bash
# A/B of the idempotent POST /job-roles on SQLite: two wfs-server release binaries
# (e.g. a commit's and its parent's, each built in a target dir of its own), three
# alternating 10 s wrk runs each on a fresh database, so machine noise hits both alike.
#
# Usage: scripts/bench-write-ab.sh BEFORE_BINARY AFTER_BINARY
set -euo pipefail
. "$(dirname "$0")/bench-lib.sh"
BEFORE=${1:?the binary before}
AFTER=${2:?the binary after}
export WFS_JWT_SECRET=bench-secret-bench-secret-bench-secret
API=127.0.0.1:18090
W=$(mktemp -d /tmp/ab.XXXX)
write_post_lua "$W/post.lua" ab
one() { # name binary
  local bin=$2 db="sqlite://$W/$1-$RANDOM.db?mode=rwc"
  $bin migrate --database-url "$db" >/dev/null
  $bin create-admin --database-url "$db" --company B --email b@b.test --password bench-password >/dev/null
  RUST_LOG=warn $bin serve --database-url "$db" --bind "$API" 2>/dev/null &
  local pid=$!
  wait_healthy "$API"
  bench_key "$API" b@b.test
  local cid=$CID sec=$SEC
  wrk -t1 -c32 -d2s -s "$W/post.lua" -H "x-api-key: $cid" -H "x-api-secret: $sec" "http://$API/external/v1/job-roles" >/dev/null
  local r; r=$(wrk -t1 -c32 -d10s -s "$W/post.lua" -H "x-api-key: $cid" -H "x-api-secret: $sec" "http://$API/external/v1/job-roles" | awk '/Requests\/sec/ {print $2}')
  echo "$1 $r"
  kill $pid; wait $pid 2>/dev/null || true
}
for i in 1 2 3; do
  one before "$BEFORE"
  one after "$AFTER"
done
rm -rf "$W"
