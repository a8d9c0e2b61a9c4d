#!/usr/bin/env bash
# Schemathesis against the real wfs-server: every operation of the served OpenAPI document,
# all phases (examples, coverage, fuzzing, stateful) and all checks.
#
# Usage: scripts/schemathesis.sh [extra `schemathesis run` options, e.g. --seed 1 --report junit]
#
# The database is a SQLite file in a temp dir, or a fresh database on the PostgreSQL server of
# $WFS_TEST_DATABASE_URL when that is set (created here with psql, dropped at the end).
# Environment:
#   WFS_SERVER_BIN                  a built wfs-server to use instead of `cargo build -p wfs-server`
#   WFS_TEST_DATABASE_URL           postgres://... : run on PostgreSQL instead of SQLite
#   WFS_SCHEMATHESIS_MAX_EXAMPLES   test cases per operation and phase (default below)
#   WFS_SCHEMATHESIS_VENV           a venv (path ending in /venv) with schemathesis installed,
#                                   instead of installing it into a throwaway one
# Exits non-zero on any failure schemathesis reports; always stops the server and removes
# the temp dir (venv, database, logs) and the PostgreSQL database.
set -euo pipefail
cd "$(dirname "$0")/.."

SCHEMATHESIS_VERSION=4.32.5
# Tuned so that the whole run, pip install included, stays under 5 minutes on 2 cores, and
# .ci/run (where the SQLite run, beside the PostgreSQL leg, is the last step to end) under 20
# minutes: 150 cases per operation and phase, about 7,800 in all (200 gave about 10,500, and
# with issue 22's new parameters the estimated CI time came within a minute of its limit).
MAX_EXAMPLES=${WFS_SCHEMATHESIS_MAX_EXAMPLES:-150}

step() { printf '\n==> schemathesis: %s\n' "$*"; }

WORK=$(mktemp -d /tmp/wfs-schemathesis.XXXXXX)
SERVER_PID=
PG_DB=
cleanup() {
  local rc=$?
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  if [ -n "$PG_DB" ]; then
    psql "$WFS_TEST_DATABASE_URL" -q -v ON_ERROR_STOP=1 \
      -c "DROP DATABASE IF EXISTS \"$PG_DB\" WITH (FORCE)" >/dev/null 2>&1 ||
      echo "warning: could not drop database $PG_DB" >&2
  fi
  if [ "$rc" -ne 0 ] && [ -s "$WORK/server.log" ]; then
    echo "--- server log: last warnings, errors and 5xx ---" >&2
    grep -E ' (WARN|ERROR) | status=5[0-9][0-9] ' "$WORK/server.log" | tail -n 40 >&2 || true
  fi
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- the server binary -------------------------------------------------------------------
if [ -n "${WFS_SERVER_BIN:-}" ]; then
  BIN=$WFS_SERVER_BIN
else
  step "cargo build -p wfs-server"
  cargo build -q -p wfs-server
  BIN=${CARGO_TARGET_DIR:-target}/debug/wfs-server
fi
[ -x "$BIN" ] || { echo "no wfs-server binary at $BIN" >&2; exit 1; }

# --- schemathesis in a throwaway venv ------------------------------------------------------
# (or in $WFS_SCHEMATHESIS_VENV, prepared by the caller: .ci/run installs it once, in the
# background, for both of its runs; its version is checked here)
VENV=${WFS_SCHEMATHESIS_VENV:-$WORK/venv}
if [ -n "${WFS_SCHEMATHESIS_VENV:-}" ]; then
  step "schemathesis from $VENV"
  installed=$("$VENV/bin/python3" -c 'import importlib.metadata as m; print(m.version("schemathesis"))')
  [ "$installed" = "$SCHEMATHESIS_VERSION" ] || {
    echo "schemathesis $installed in $VENV, expected $SCHEMATHESIS_VERSION" >&2
    exit 1
  }
else
  step "pip install schemathesis==$SCHEMATHESIS_VERSION (throwaway venv)"
  if ! python3 -m venv "$VENV" >/dev/null 2>&1; then
    apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y python3-venv
    python3 -m venv "$VENV"
  fi
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
fi

# --- database ----------------------------------------------------------------------------
if [ -n "${WFS_TEST_DATABASE_URL:-}" ]; then
  if ! command -v psql >/dev/null; then # PostgreSQL's own bin dir, as .ci/run finds initdb
    PATH="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1):$PATH"
  fi
  PG_DB="wfs_schemathesis_$(date +%s)_$$"
  step "PostgreSQL: CREATE DATABASE $PG_DB"
  psql "$WFS_TEST_DATABASE_URL" -q -v ON_ERROR_STOP=1 -c "CREATE DATABASE \"$PG_DB\"" >/dev/null
  DB_URL=$(python3 - "$WFS_TEST_DATABASE_URL" "$PG_DB" <<'PY'
import sys, urllib.parse
url = urllib.parse.urlsplit(sys.argv[1])
print(urllib.parse.urlunsplit(url._replace(path="/" + sys.argv[2])))
PY
)
else
  DB_URL="sqlite://$WORK/wfs.db?mode=rwc"
fi

# --- two companies -----------------------------------------------------------------------
# "Fuzz" owns the API key pair used on every resource route. "Fuzz Keys" is the company whose
# admin's bearer token fuzzes /auth/keys*: rotate and revoke are fuzzed with ids taken from
# responses, and doing that inside "Fuzz" would sooner or later rotate or revoke the very key
# the rest of the run authenticates with (every later request would then be 401).
admin() { # company email
  "$BIN" create-admin --company "$1" --email "$2" --password correct-horse-battery \
    --database-url "$DB_URL" >/dev/null
}
step "create-admin (Fuzz, Fuzz Keys) on ${DB_URL%%\?*}"
admin Fuzz fuzz@example.test
admin "Fuzz Keys" fuzz-keys@example.test

# --- the server --------------------------------------------------------------------------
step "start wfs-server"
# --max-hold 1ms: the fuzzer asks the feed for wait=1..60 at the head of an unchanging
# feed, and each such read would be held its whole wait (the run would take hours);
# held 1 ms, every held path still runs.
WFS_JWT_SECRET=$(python3 -c 'import secrets; print(secrets.token_hex(32))') \
  NO_COLOR=1 RUST_LOG=${RUST_LOG:-info} \
  "$BIN" serve --database-url "$DB_URL" --bind 127.0.0.1:0 --max-hold 1ms >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
ADDR=
for _ in $(seq 300); do
  ADDR=$(grep -m1 -o 'address=[^ ]*' "$WORK/server.log" 2>/dev/null | cut -d= -f2 || true)
  [ -n "$ADDR" ] && break
  kill -0 "$SERVER_PID" 2>/dev/null || { echo "wfs-server exited:" >&2; cat "$WORK/server.log" >&2; exit 1; }
  sleep 0.1
done
[ -n "$ADDR" ] || { echo "wfs-server did not report its address" >&2; exit 1; }
BASE="http://$ADDR"
echo "listening on $BASE (PID $SERVER_PID)"

json_field() { python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }
signin() { # email -> access token
  curl -sS -f -X POST "$BASE/external/v1/auth/signin" -H 'content-type: application/json' \
    -d "{\"email\":\"$1\",\"password\":\"correct-horse-battery\"}" | json_field accessToken
}
TOKEN=$(signin fuzz@example.test)
KEYS_TOKEN=$(signin fuzz-keys@example.test)
KEY=$(curl -sS -f -X POST "$BASE/external/v1/auth/keys" -H "Authorization: Bearer $TOKEN" \
  -H 'content-type: application/json' \
  -d '{"name":"fuzz","scopes":["workforce:read","workforce:write","availability:read","webhooks:manage"]}')
CLIENT_ID=$(echo "$KEY" | json_field clientId)
CLIENT_SECRET=$(echo "$KEY" | json_field clientSecret)

# --- seed data and configuration ---------------------------------------------------------
# A few records in "Fuzz" (a location, a job role, a slot, a staff member, a booked shift) and a
# spare key in "Fuzz Keys", so that the id-taking operations reach their handlers instead of
# answering 404 to random strings: their ids go into schemathesis dictionaries, each bound to
# the matching parameters with probability 0.5 (the other half stays generated).
# OpenAPI-aware auth: each operation gets the credentials of the schemes it declares (the key
# pair on resource routes, the bearer token on /auth/keys*), so `ignored_auth` can also check
# that each route refuses a request without them.
BASE=$BASE CLIENT_ID=$CLIENT_ID CLIENT_SECRET=$CLIENT_SECRET KEYS_TOKEN=$KEYS_TOKEN \
  python3 - >"$WORK/schemathesis.toml" <<'PY'
import datetime, json, os, urllib.request, uuid

env = os.environ
base = env["BASE"] + "/external/v1"
key_headers = {"x-api-key": env["CLIENT_ID"], "x-api-secret": env["CLIENT_SECRET"]}


def call(method, path, body=None, headers=key_headers):
    headers = {**headers, "content-type": "application/json"}
    if method != "GET":
        headers["idempotency-key"] = "seed-" + uuid.uuid4().hex
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method, headers=headers)
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.load(resp)


location = call("POST", "/locations", {"name": "Fuzz Location"})["id"]
role = call("POST", "/job-roles", {"title": "Fuzz Role", "weeklyHours": 38})["id"]
monday = datetime.date.today() + datetime.timedelta(days=7 - datetime.date.today().weekday())
slot = call("POST", "/shifts/slots", {
    "branchId": location, "jobRoleId": role, "startTime": "09:00", "endTime": "17:00",
    "bookDate": monday.isoformat(), "dayOfWeek": 1, "maxStaffRequired": 5,
    "timeZone": "Europe/London", "shiftName": "Fuzz Shift", "shiftColor": "#FF8800",
    "openShift": False, "isOncall": False, "unpaidBreak": 30,
})["slotId"]
call("POST", "/staff/bulk", [{
    "firstName": "Fuzz", "lastName": "Member", "userName": "fuzz-member",
    "email": "fuzz-member@example.test", "phone": "+14155550100", "gender": "female",
    "countryId": "US", "assignedBranchId": location, "jobRoleId": role, "privilege": 3,
}])
members = [m for m in call("GET", "/staff") if m["privilege"] == 3]
assert members, "the bulk-created member is not listed"
membership, user = members[0]["membershipId"], members[0]["userId"]
booked = call("POST", "/shifts/book", {
    "slotId": slot, "date": monday.isoformat(), "assignees": [{"userId": user}],
})
shift = booked["shifts"][0]["id"]
bearer = {"authorization": "Bearer " + env["KEYS_TOKEN"]}
spare_key = call("POST", "/auth/keys", {"name": "fuzz-spare"}, headers=bearer)["id"]

ids = {
    "locations": [location], "roles": [role], "slots": [slot], "members": [membership],
    "users": [user], "shifts": [shift], "keys": [spare_key],
}
bindings = {  # operation -> {parameter: dictionary}
    "GET /external/v1/shifts": {"query.shiftId": "shifts", "query.branchId": "locations",
                                "query.jobRoleId": "roles"},
    "POST /external/v1/shifts/slots": {"body.branchId": "locations", "body.jobRoleId": "roles"},
    "POST /external/v1/shifts/book": {"body.slotId": "slots", "body.assignees[*].userId": "users"},
    "DELETE /external/v1/shifts/{id}": {"path.id": "shifts"},
    "DELETE /external/v1/job-roles/{id}": {"path.id": "roles"},
    "PATCH /external/v1/job-roles/{id}": {"path.id": "roles"},
    "PATCH /external/v1/locations/{id}": {"path.id": "locations"},
    "GET /external/v1/staff": {"query.branchId": "locations", "query.jobRoleId": "roles"},
    "DELETE /external/v1/staff/{membershipId}": {"path.membershipId": "members"},
    "POST /external/v1/staff/bulk": {"body.[*].assignedBranchId": "locations",
                                     "body.[*].jobRoleId": "roles"},
    "GET /external/v1/schedules": {"query.userId": "users", "query.branchId": "locations",
                                   "query.jobRoleId": "roles", "query.slotId": "slots"},
    "GET /external/v1/overtime": {"query.branchId": "locations"},
    "GET /external/v1/workforce/resources/{staff_resource_id}": {"path.staff_resource_id": "members"},
    "POST /external/v1/auth/keys/{id}/rotate": {"path.id": "keys"},
    "POST /external/v1/auth/keys/{id}/revoke": {"path.id": "keys"},
}

q = json.dumps  # a JSON string is a valid TOML basic string
out = [
    "[auth.openapi.apiKey]", f"api_key = {q(env['CLIENT_ID'])}",
    "[auth.openapi.apiSecret]", f"api_key = {q(env['CLIENT_SECRET'])}",
    "[auth.openapi.bearerAuth]", f"bearer = {q(env['KEYS_TOKEN'])}",
]
for name, values in ids.items():
    out += [f"[dictionaries.{name}]", f"values = {q(values)}"]
for op, params in bindings.items():
    out += ["[[operations]]", f"include-name = {q(op)}", "[operations.parameters]"]
    out += [f"{q(p)} = {{ dictionary = {q(d)}, probability = 0.5 }}" for p, d in params.items()]
print("\n".join(out))
PY

# Idempotency-Key: schemathesis generates it from the document's IdempotencyKey schema, but it
# generates the same few values over and over (the coverage phase sends e.g. "00000000" on
# every write). The server claims the key before it reads the body and answers 409 to a reused
# key with a different body (or replays the first answer), so most writes would never reach the
# handler. A generated value that is a *valid* key is therefore made unique here; invalid ones
# (negative cases: too short, bad characters, missing) go out untouched.
mkdir -p "$WORK/hooks"
cat >"$WORK/hooks/wfs_hooks.py" <<'PY'
import json
import re
import uuid

import schemathesis

VALID = re.compile(r"^[A-Za-z0-9._~-]{8,128}$")


# positive_data_acceptance (ST202) expects every schema-valid request to succeed. These 400s
# answer rules that JSON Schema cannot state, so they are dropped (and counted in the summary
# as "dropped by filter_failure"). Only these exact messages: any other rejection of
# schema-valid data still fails the run, and so do all other checks on the same requests.
UNEXPRESSIBLE = [re.compile(p) for p in (
    r"^to must not be before from$",              # /hours, /schedules: from <= to
    r"^to must be after from$",                   # /workforce/*: from < to
    r"^from and to may be at most \d+ days apart$",  # a window length, from and to together
    r"^the window from\.\.to may not exceed \d+ days$",
    r"^cursor is not a cursor this API issued",   # an opaque, sealed token: any string is schema-valid
    r"^expiresAt must be in the future$",         # relative to the clock
    r"does not fall on dayOfWeek",               # bookDate and dayOfWeek together
    r"^Shift slot is not available on the selected day$",  # the slot's weekday (stored state)
    r"^timeZone must be an IANA time zone",       # the tz database (an enum of ~600 names)
    r"^allowedIps\[\d+\] (is not an IPv4|must be a literal)",  # an IPv4 or IPv6 literal: no one JSON Schema format says "either"
    r"^expiresAt must be an ISO-8601 date-time",  # format: date-time, which the generator may ignore
    r"^url must (use https|not point to a non-public address|not contain (user info|a fragment)|be an absolute http or https URL|name a host)",  # the host and its address class: beyond JSON Schema
    r"must not contain control or invisible formatting characters",  # Cf outside the BMP: a portable pattern cannot name them (openapi.rs LINE_PATTERN)
    r"^since must not be after until$",           # replay: since and until together
    r"^(since|until) must be an ISO-8601",        # format: date-time, which the generator may ignore
    r"^start cannot be combined with updated_since$",  # the feed: two parameters together
)]

# If-Match (412): any string is a schema-valid entity tag list, but only a tag the server
# issued for the resource's current state can match it; a generated one answers 412 with
# exactly this message (and writes nothing), which is the documented behaviour.
PRECONDITION = re.compile(r"^Precondition failed: If-Match does not name the resource's current ETag")

# The bulk route answers 200 with a per-item report even when items are invalid: the spec
# (decisions.md, Staff) puts invalid items in `err` instead of refusing the request, so a
# schema-violating item that is "accepted" (ST201) is the documented behaviour there. Only
# the bulk operation, and only that check.
PER_ITEM_REPORT = "POST /external/v1/staff/bulk"


@schemathesis.hook
def filter_failure(context, failure, case, response):
    code = getattr(failure, "code", None)
    if code == "ST201" and case.operation.label == PER_ITEM_REPORT and response.status_code == 200:
        return False
    if code != "ST202" or response.status_code not in (400, 412):
        return True
    try:
        message = json.loads(response.content)["error"]["message"]
    except Exception:
        return True
    if response.status_code == 412:
        return not PRECONDITION.search(message)
    return not any(p.search(message) for p in UNEXPRESSIBLE)


@schemathesis.hook
def before_call(context, case, kwargs):
    headers = case.headers
    if not headers:
        return
    for name in list(headers):
        if name.lower() == "idempotency-key":
            value = headers[name]
            if isinstance(value, str) and VALID.match(value):
                headers[name] = f"st-{uuid.uuid4().hex}"
PY

# --- the run -----------------------------------------------------------------------------
# One worker: with two, hypothesis's lambda descriptions call CPython 3.11's ast.parse from
# two threads at once, which once ended a clean run in "SystemError: AST constructor recursion
# depth mismatch" (a fuzzer crash, not a finding).
CMD=(
  "$VENV/bin/schemathesis" --config-file "$WORK/schemathesis.toml"
  run "$BASE/external/v1/openapi.json"
  --phases examples,coverage,fuzzing,stateful
  --checks all
  --max-examples "$MAX_EXAMPLES"
  --workers 1
  --generation-database none
  --no-color
  --report json --report-json-path "$WORK/report.json"
  "$@"
)
step "${CMD[*]##*/venv/bin/}"
started=$(date +%s)
set +e
(cd "$WORK" && PYTHONPATH="$WORK/hooks" SCHEMATHESIS_HOOKS=wfs_hooks "${CMD[@]}")
status=$?
set -e
echo "schemathesis exited $status after $(($(date +%s) - started)) s"
# One plain closing line counting test cases (the banner above reads "No issues found").
if [ -s "$WORK/report.json" ]; then
  python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))["test_cases"]
done, failed = t["generated"], t["with_failures"]
print(f"schemathesis: {done - failed} passed, {failed} failed")' "$WORK/report.json"
fi
kill -0 "$SERVER_PID" 2>/dev/null || { echo "wfs-server died during the run" >&2; status=1; }
exit "$status"
