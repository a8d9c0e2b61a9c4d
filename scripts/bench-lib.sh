# Shared by the wrk benchmarks (bench-wrk.sh, bench-cores.sh, bench-write-ab.sh):
# source it. Each function needs only curl, python3 and wrk.

# A field of the JSON object on stdin.
json_field() { python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])"; }

# Requests/s of the wrk output on stdin; a run with any non-2xx answer or socket error
# stops the benchmark.
rps() {
  local out; out=$(cat)
  if grep -qE 'Non-2xx|Socket errors' <<<"$out"; then
    echo "a run had failures:" >&2; echo "$out" >&2; exit 1
  fi
  awk '/Requests\/sec/ {print $2}' <<<"$out"
}

# Waits until the server at ADDRESS answers /healthz (10 s at most).
wait_healthy() {
  for _ in $(seq 100); do curl -sf "$1/healthz" >/dev/null && return; sleep 0.1; done
  echo "no server answered at $1" >&2; exit 1
}

# Writes to FILE the wrk script of the idempotent write: POST /job-roles with a new
# Idempotency-Key per request, unique to this run (PREFIX, the time, a random number).
write_post_lua() { # file prefix
  cat >"$1" <<LUA
local n = 0
local prefix = "$2-" .. tostring(os.time()) .. "-" .. tostring(math.random(1e9)) .. "-"
wrk.method = "POST"
wrk.body = '{"title":"Bench role","weeklyHours":38}'
wrk.headers["Content-Type"] = "application/json"
request = function()
  n = n + 1
  wrk.headers["Idempotency-Key"] = prefix .. n
  return wrk.format()
end
LUA
}

# Signs in as the admin EMAIL (password bench-password) at ADDRESS and creates an API
# key that reads and writes; sets CID and SEC to its client id and secret.
bench_key() { # address email
  local token key
  token=$(curl -sf -X POST "$1/external/v1/auth/signin" -H 'content-type: application/json' \
    -d "{\"email\":\"$2\",\"password\":\"bench-password\"}" | json_field accessToken)
  key=$(curl -sf -X POST "$1/external/v1/auth/keys" -H "Authorization: Bearer $token" \
    -H 'content-type: application/json' \
    -d '{"name":"bench","scopes":["workforce:read","workforce:write"]}')
  CID=$(json_field clientId <<<"$key")
  SEC=$(json_field clientSecret <<<"$key")
}

# Creates the 10 job roles the read benchmarks list, at ADDRESS with the key in CID and
# SEC; PREFIX makes their Idempotency-Keys unique to the run.
seed_roles() { # address prefix
  local i
  for i in $(seq -w 1 10); do
    curl -sf -X POST "$1/external/v1/job-roles" -H "x-api-key: $CID" -H "x-api-secret: $SEC" \
      -H 'content-type: application/json' -H "Idempotency-Key: $2-$i" \
      -d "{\"title\":\"Role $i\",\"weeklyHours\":38}" >/dev/null
  done
}
