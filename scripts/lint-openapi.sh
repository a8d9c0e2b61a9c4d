#!/usr/bin/env bash
# Lints openapi.yaml with the three linters integrators run, at the versions pinned in
# scripts/openapi-lint/package-lock.json (installed with `npm ci` into
# scripts/openapi-lint/node_modules, which git ignores):
#
#   - Redocly CLI `lint`, recommended rules (recommended-strict: warnings fail too);
#   - Spectral with `spectral:oas`: no error and no warning;
#   - Spectral with the OWASP API Security ruleset: no error. Its warnings are printed
#     (each names something the server does not do, e.g. a 400 on a list that reads no
#     input) and do not fail.
#
# The exemptions live in scripts/openapi-lint/spectral-owasp.yaml (overrides; Redocly
# has none, and would take them in .redocly.lint-ignore.yaml), each scoped by JSON pointer and explained in
# docs/decisions.md; a check fails when one no longer names a part of the document.
#
# Usage: scripts/lint-openapi.sh [document, default openapi.yaml]
set -euo pipefail
cd "$(dirname "$0")/openapi-lint"
DOC=../../${1:-openapi.yaml}
# No telemetry, update notices or install-time analytics from the tools.
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true SCARF_ANALYTICS=false
export DO_NOT_TRACK=1 NO_UPDATE_NOTIFIER=1

step() { printf '\n==> lint-openapi: %s\n' "$*"; }

command -v npm >/dev/null || {
  echo "lint-openapi: npm (Node.js 20.19 or later) is required" >&2
  exit 1
}
# Reinstalled only when the lock file changed since the last install.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  step "npm ci (Node.js $(node --version))"
  npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
fi
BIN=node_modules/.bin

step "exemptions still name parts of the document"
node check-exemptions.cjs

step "Redocly CLI $("$BIN/redocly" --version 2>/dev/null | tail -1): recommended rules"
"$BIN/redocly" lint --config redocly.yaml "$DOC"

step "Spectral $("$BIN/spectral" --version): spectral:oas (warnings fail)"
"$BIN/spectral" lint --ruleset spectral-oas.yaml --fail-severity warn "$DOC"

step "Spectral: OWASP API Security ruleset (errors fail)"
"$BIN/spectral" lint --ruleset spectral-owasp.yaml --fail-severity error \
  --display-only-failures "$DOC"
"$BIN/spectral" lint --ruleset spectral-owasp.yaml --fail-severity error --format json "$DOC" 2>/dev/null |
  node -e '
    let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
      const by = {};
      for (const r of JSON.parse(s)) by[r.severity] = (by[r.severity] || 0) + 1;
      console.log(`OWASP: ${by[0] || 0} errors, ${by[1] || 0} warnings (not shown; run spectral without --display-only-failures to list them)`);
    });'
echo "lint-openapi: all three linters pass"
