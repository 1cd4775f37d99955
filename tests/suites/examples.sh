#!/bin/sh
# examples.sh — every examples/NAME.cmt compiles to the listing in
# examples/NAME.expected (`cmtc compile examples/NAME.cmt`, stdout and
# stderr, then `exit: N`).  The solver's wall-clock seconds are the one
# thing that varies from run to run: they are masked as `T s` on both
# sides.  UPDATE=1 rewrites the expectations (read them before
# committing).  One PASS/FAIL line per example.  Runs cmtc directly, not
# under valgrind: the optimizer evaluates a million mappings here.  An
# example whose first line is `// cmtc: long` (a solve of minutes) is only
# checked here (`cmtc check`, clean, every outer choice instantiated) unless
# CMTC_LONG=1; `make bench` compiles it against its expectation
# (tests/bench/bench_system.sh).
set -u
cd "$(dirname "$0")/../.."
CMTC=${CMTC:-build/cmtc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
mask() { sed -e 's/\(solver [a-z_]* in \)[0-9.]* s/\1T s/' -e 's/"seconds": [0-9.e+-]*/"seconds": T/' "$1"; }
for f in examples/*.cmt; do
  [ -f "$f" ] || continue
  name=$(basename "$f" .cmt)
  expected=examples/$name.expected
  if [ "$(head -n 1 "$f")" = "// cmtc: long" ] && [ "${CMTC_LONG:-0}" != 1 ]; then
    if "$CMTC" check "$f" > "$tmp/raw" 2>&1 && [ ! -s "$tmp/raw" ]; then
      echo "PASS: example $name checks (make bench compiles it)"
    else
      echo "FAIL: example $name: cmtc check is not clean"
      head -20 "$tmp/raw"
    fi
    continue
  fi
  "$CMTC" compile "$f" > "$tmp/raw" 2>&1
  echo "exit: $?" >> "$tmp/raw"
  mask "$tmp/raw" > "$tmp/out"
  if [ "${UPDATE:-0}" = 1 ]; then
    cp "$tmp/out" "$expected"
    echo "PASS: example $name (updated)"
  elif [ ! -f "$expected" ]; then
    echo "FAIL: example $name: no $expected (run with UPDATE=1 and read it)"
  elif cmp -s "$tmp/out" "$expected"; then
    echo "PASS: example $name"
  else
    echo "FAIL: example $name: listing differs from $expected"
    diff -u "$expected" "$tmp/out" | head -20
  fi
done
