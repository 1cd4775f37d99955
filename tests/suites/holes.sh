#!/bin/sh
# Whole-line holes are filled by the optimizer, never silently dropped:
# `tile L: ?` must come back with a tile for every index at L.
set -u
CMTC=${CMTC:-build/cmtc}
out=$($CMTC compile tests/holes/tile_whole_line.cmt 2>&1)
status=$?
line=$(printf '%s\n' "$out" | grep '^  complete mapping:')
case $line in
  *"tile SRAM: m "*", n "*", k "*) echo "PASS: tile_whole_line filled for m, n and k" ;;
  *) echo "FAIL: tile_whole_line: no complete tile line for SRAM (exit $status): $line" ;;
esac
if printf '%s\n' "$out" | grep -q '^  tile SRAM: .* derived'; then
  echo "PASS: tile_whole_line tagged derived"
else
  echo "FAIL: tile_whole_line: the SRAM tile is not tagged derived"
fi
