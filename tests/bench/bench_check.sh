#!/bin/sh
# `cmtc check` throughput on a generated file of at least 100 000 lines:
# median of 7 runs, in lines per second (goal: 1 000 000 on one core).
# Baseline in the same run: `wc -l` over the same file, to show how far the
# checker is from reading speed.
set -eu
CMTC=${CMTC:-build/cmtc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$(dirname "$0")/gen_large.py" 100000 > "$tmp/large.cmt"
lines=$(wc -l < "$tmp/large.cmt")
median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
time_runs() {
  for _ in 1 2 3 4 5 6 7; do
    start=$(date +%s.%N)
    "$@" > /dev/null 2>&1 || true
    end=$(date +%s.%N)
    echo "$end - $start" | bc -l 2>/dev/null || awk "BEGIN{print $end - $start}"
  done | median
}
"$CMTC" check "$tmp/large.cmt" > "$tmp/check.out" 2>&1 || { echo "check failed on the generated file:"; head "$tmp/check.out"; exit 1; }
check_s=$(time_runs "$CMTC" check "$tmp/large.cmt")
wc_s=$(time_runs wc -l "$tmp/large.cmt")
awk -v n="$lines" -v c="$check_s" -v w="$wc_s" 'BEGIN {
  printf "%-34s %12s %14s\n", "what", "median s", "lines/s"
  printf "%-34s %12.4f %14.0f\n", "cmtc check (" n " lines)", c, n / c
  printf "%-34s %12.4f %14.0f\n", "baseline: wc -l (same file)", w, n / w
  printf "goal 1000000 lines/s: %s (%.2fx the goal); check/wc ratio %.1fx\n",
         (n / c >= 1000000 ? "met" : "NOT met"), (n / c) / 1000000, c / w
}'
