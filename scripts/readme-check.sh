#!/usr/bin/env bash
# Runs every ```sh block of README.md, in order, as a reader would paste them into one
# terminal, and fails on the first block that fails, naming it (number and README line).
#
# Where the blocks run: in ONE bash session, so that variables and functions carry from
# block to block, with the workspace as the working directory (the blocks say
# `cargo run`). Every file they create goes to the directory the README makes itself
# with `mktemp -d` ($WFS_DEMO_DIR): this script points TMPDIR at its own temporary
# directory, so that one lands inside it and is deleted at the end. Afterwards the
# script fails if a new file appeared at the top of the workspace (a wfs.db, a
# key.json): the README must leave nothing in the repository.
#
# How a block fails: the session runs with `set -eEuo pipefail` and `inherit_errexit`,
# so any failing command (a curl with --fail-with-body that got a 4xx, a cargo run that
# exited non-zero, an unset variable) stops the run, and the failing command and its
# block are named. Before the first block, every WFS_* variable is unset: the README
# must set what it uses, as on a fresh machine.
#
# Skips: a block right after a line `<!-- readme-check: skip REASON -->` is not run;
# its reason is printed. Keep them rare (a server in the foreground, the full test
# suite that CI runs anyway, a command that needs PostgreSQL or rewrites committed
# files).
#
# Servers: the session runs in its own process group (setsid). The README stops what it
# starts in the background (by the PID it saves); whatever is still alive at the end,
# or after a failure, is stopped here by signalling that process group.
#
# Build: the README's commands build the debug profile, as a reader's do. With
# READMECHECK_DEBUG_BUILD=1 (what .ci/run sets) the blocks' `cargo` commands run with the
# test build's features, so they reuse the build the test suite has just made instead of
# compiling the server's own feature set (`cargo run -p wfs-server` has no
# dev-dependencies, so scripts/feature-union.py cannot unify it); every block and every
# command still runs (the wrapper written into the session below says how).
#
# Usage: scripts/readme-check.sh [README]   (default: README.md at the workspace root)
# Environment: READMECHECK_TIMEOUT, seconds for the whole run (default 1800);
#   READMECHECK_DEBUG_BUILD=1, the debug build (above).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
README=${1:-$ROOT/README.md}
LIMIT=${READMECHECK_TIMEOUT:-1800}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/wfs-readme-check.XXXXXX")
SESSION_PID=
# shellcheck disable=SC2317 # reached through the EXIT trap
cleanup() {
  local rc=$?
  if [ -n "$SESSION_PID" ]; then
    # The session's process group: servers and receivers the blocks left running.
    if kill -TERM -- "-$SESSION_PID" 2>/dev/null; then
      for _ in $(seq 50); do
        kill -0 -- "-$SESSION_PID" 2>/dev/null || break
        sleep 0.1
      done
      kill -KILL -- "-$SESSION_PID" 2>/dev/null || true
    fi
  fi
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# 1. Split the README into blocks: blocks/NNN.sh, and index lines "NNN LINE SKIP-REASON".
mkdir -p "$WORK/blocks" "$WORK/tmp"
awk -v dir="$WORK/blocks" '
  function flush_skip() { skip = "" }
  !fence && /^```/ {
    fence = 1
    lang = substr($0, 4)
    sub(/[ \t]+$/, "", lang)
    if (lang == "sh") {
      n++
      file = sprintf("%s/%03d.sh", dir, n)
      printf "" > file
      printf "%03d %d %s\n", n, NR, skip
    } else {
      file = ""
    }
    flush_skip()
    next
  }
  fence && /^```[ \t]*$/ { fence = 0; if (file != "") close(file); file = ""; next }
  fence { if (file != "") print > file; next }
  /<!-- readme-check: skip/ {
    skip = $0
    sub(/.*<!-- readme-check: skip[ \t]*/, "", skip)
    sub(/[ \t]*-->.*/, "", skip)
    if (skip == "") skip = "(no reason given)"
    next
  }
  /^[ \t]*$/ { next }
  { flush_skip() }
  END { if (fence) { print "unclosed code fence at end of file" > "/dev/stderr"; exit 1 } }
' "$README" >"$WORK/index"

total=$(wc -l <"$WORK/index")
if [ "$total" -eq 0 ]; then
  echo "readme-check: no \`\`\`sh block in $README" >&2
  exit 1
fi

# 2. The session: one bash that sources the blocks in order.
{
  cat <<'EOF'
set -eEuo pipefail
shopt -s inherit_errexit
for readme_check_var in $(compgen -e); do
  case $readme_check_var in WFS_*) unset "$readme_check_var" ;; esac
done
unset readme_check_var
readme_check_block=
readme_check_failed() {
  local rc=$1 command=$2
  if [ "$BASH_SUBSHELL" -gt 0 ]; then
    # Inside $(...): name the command; the block's own line fails next and is reported.
    printf 'readme-check: failed inside a command substitution (exit status %s): %s\n' "$rc" "$command" >&2
    exit "$rc"
  fi
  trap - ERR
  printf '\nreadme-check: FAILED: %s (exit status %s) at: %s\n' "$readme_check_block" "$rc" "$command" >&2
  exit "$rc"
}
trap 'readme_check_failed "$?" "$BASH_COMMAND"' ERR
EOF
  if [ "${READMECHECK_DEBUG_BUILD:-}" = 1 ]; then
    cat <<'EOF'
# READMECHECK_DEBUG_BUILD=1: the blocks' cargo commands run on the debug build the tests
# made, and cargo resolves features as the test command does. `--release`, if a block
# has it, is dropped (what follows `--` goes to the program untouched). A bare
# `cargo build -p X` or `cargo run -p X` resolves the features of X alone, and so
# rebuilds some 140 crates the test build already has; so `cargo build --examples` runs as
# `cargo build --workspace --all-targets`, and `cargo run [-p P] [--bin B | --example E]
# [-- ARGS]` as that same build, then the program it made (B, else P; or examples/E),
# which replaces the function's subshell when it runs in one (`&`, `$(...)`), as cargo
# run replaces itself: a PID the README saves is the program's.
cargo() {
  local arg args=() own=1 next= pkg= bin= example= program=() target
  for arg in "$@"; do
    if [ "$own" = 1 ] && [ "$arg" = --release ]; then continue; fi
    if [ "$own" = 0 ]; then program+=("$arg"); continue; fi
    if [ "$arg" = -- ]; then own=0; continue; fi
    case "$next" in
      pkg) pkg=$arg ;;
      bin) bin=$arg ;;
      example) example=$arg ;;
    esac
    next=
    case "$arg" in
      -p | --package) next=pkg ;;
      --bin) next=bin ;;
      --example) next=example ;;
    esac
    args+=("$arg")
  done
  if [ "${args[0]:-}" = build ] && [[ " ${args[*]} " == *" --examples "* ]]; then
    command cargo build --workspace --all-targets
  elif [ "${args[0]:-}" = run ] && [ -n "$example$bin$pkg" ]; then
    command cargo build --quiet --workspace --all-targets || return
    target=${CARGO_TARGET_DIR:-target}/debug
    if [ -n "$example" ]; then
      target=$target/examples/$example
    else
      target=$target/${bin:-$pkg}
    fi
    if [ "$BASH_SUBSHELL" -gt 0 ]; then exec "$target" "${program[@]}"; fi
    "$target" "${program[@]}"
  else # anything else (a run naming no package, binary or example too): as written
    command cargo "${args[@]}" ${program[@]+-- "${program[@]}"}
  fi
}
EOF
  fi
  while read -r n line reason; do
    name="block $((10#$n)) of $total ($(basename "$README") line $line)"
    if [ -n "$reason" ]; then
      printf 'printf "\\n==> %%s: skipped: %%s\\n" %q %q\n' "$name" "$reason"
    else
      printf 'readme_check_block=%q\n' "$name"
      # shellcheck disable=SC2016 # expands in the session, not here
      printf 'printf "\\n==> %%s\\n" "$readme_check_block"\n'
      printf 'source %q\n' "$WORK/blocks/$n.sh"
    fi
  done <"$WORK/index"
  printf '%s\n' 'printf "\nreadme-check: every block passed\n"'
} >"$WORK/session.sh"

# 3. Run it in its own session and process group, with the README's temp files in $WORK.
before=$(cd "$ROOT" && ls -A)
echo "readme-check: $total sh blocks of $README; working directory $ROOT; temporary files in $WORK/tmp"
if [ "${READMECHECK_DEBUG_BUILD:-}" = 1 ]; then
  echo "readme-check: READMECHECK_DEBUG_BUILD=1: cargo builds and runs the debug build, with the test build's features"
fi
set +e
(cd "$ROOT" && TMPDIR="$WORK/tmp" exec setsid timeout --kill-after=10 "$LIMIT" bash "$WORK/session.sh" </dev/null) &
SESSION_PID=$!
wait "$SESSION_PID"
rc=$?
set -e
if [ "$rc" -eq 124 ]; then
  echo "readme-check: FAILED: the README's blocks did not finish within ${LIMIT}s (READMECHECK_TIMEOUT)" >&2
fi
after=$(cd "$ROOT" && ls -A)
new=$(comm -13 <(printf '%s\n' "$before" | sort) <(printf '%s\n' "$after" | sort))
if [ -n "$new" ]; then
  printf 'readme-check: FAILED: the README left new files in the workspace root:\n%s\n' "$new" >&2
  [ "$rc" -ne 0 ] || rc=1
fi
exit "$rc"
