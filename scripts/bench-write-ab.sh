#!/usr/bin/env bash
# A/B of the idempotent POST /job-roles on SQLite: two wfs-server release binaries
# (e.g. a commit's and its parent's, each built in a target dir of its own), three
# alternating 10 s wrk runs each on a fresh database, so machine noise hits both alike.
#
# Usage: scripts/bench-write-ab.sh BEFORE_BINARY AFTER_BINARY
set -euo pipefail
BEFORE=${1:?the binary before}
AFTER=${2:?the binary after}
export WFS_JWT_SECRET=bench-secret-bench-secret-bench-secret
API=127.0.0.1:18090
W=$(mktemp -d /tmp/ab.XXXX)
cat >"$W/post.lua" <<LUA
local n = 0
local prefix = "ab-" .. tostring(os.time()) .. "-" .. tostring(math.random(1e9)) .. "-"
wrk.method = "POST"
wrk.body = '{"title":"Bench role","weeklyHours":38}'
wrk.headers["Content-Type"] = "application/json"
request = function()
  n = n + 1
  wrk.headers["Idempotency-Key"] = prefix .. n
  return wrk.format()
end
LUA
jf() { python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }
one() { # name binary
  local bin=$2 db="sqlite://$W/$1-$RANDOM.db?mode=rwc"
  $bin migrate --database-url "$db" >/dev/null
  $bin create-admin --database-url "$db" --company B --email b@b.test --password bench-password >/dev/null
  RUST_LOG=warn $bin serve --database-url "$db" --bind "$API" 2>/dev/null &
  local pid=$!
  for _ in $(seq 100); do curl -sf "$API/healthz" >/dev/null && break; sleep 0.1; done
  local t k cid sec
  t=$(curl -sf -X POST "$API/external/v1/auth/signin" -H 'content-type: application/json' -d '{"email":"b@b.test","password":"bench-password"}' | jf accessToken)
  k=$(curl -sf -X POST "$API/external/v1/auth/keys" -H "Authorization: Bearer $t" -H 'content-type: application/json' -d '{"name":"b","scopes":["workforce:read","workforce:write"]}')
  cid=$(echo "$k" | jf clientId); sec=$(echo "$k" | jf clientSecret)
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
