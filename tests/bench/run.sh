#!/bin/sh
# `make bench`: runs every tests/bench/bench_*.sh in turn.  Each prints its
# own table: medians of repeated runs and ratios against a baseline
# measured in the same run.
set -u
cd "$(dirname "$0")/../.."
CMTC=${CMTC:-build/cmtc}
case $CMTC in /*) ;; *) CMTC="$(pwd)/$CMTC" ;; esac
export CMTC
status=0
for b in tests/bench/bench_*.sh; do
  [ -f "$b" ] || continue
  echo "== $(basename "$b" .sh)"
  sh "$b" || status=1
  echo
done
exit $status
