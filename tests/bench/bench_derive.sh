#!/bin/sh
# Derived ops (issue 11): what `phase train` costs `cmtc check` (derive the
# op, check it, lower it through pass_training for the memory check), on
# a chain of N statements that reads one input N times, so its train op
# has about 3N statements (forward, gradient parts and their sums, the
# update's none: no `param`).  The forward mapping of the same chain is
# the baseline, measured in the same run: median of 3 runs each, peak
# memory of one.  Printed, never asserted.
set -eu
CMTC=${CMTC:-build/cmtc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gen() { # gen N PHASE > file
  python3 -c '
import sys
n, phase = int(sys.argv[1]), sys.argv[2]
print("op chain<M = 4> {\n  in X[M] : fp32;\n  out Y[M] : fp32;\n  t0[m] = X[m] * 2;")
for i in range(1, n): print("  t%d[m] = t%d[m] * X[m];" % (i, i - 1))
print("  Y[m] = t%d[m];\n}" % (n - 1))
print("arch a { clock 1 GHz; memory D { bandwidth 1 GB/s; } compute v vector { throughput 1 op/cycle; } }")
print("mapping b for chain on a { %s }" % ("phase %s;" % phase if phase != "forward" else ""))' "$1" "$2"
}
run_stats() { # run_stats FILE: "median_s peak_kib" of `cmtc check FILE`
  python3 -c '
import resource, subprocess, sys, time
times = []
for _ in range(3):
    t = time.monotonic()
    subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    times.append(time.monotonic() - t)
print(sorted(times)[1], resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$CMTC" check "$1"
}
printf "%-44s %10s %10s %12s\n" "what" "median s" "peak MiB" "vs forward"
for n in 1000 5000 10000; do
  gen "$n" forward > "$tmp/f.cmt"
  gen "$n" train > "$tmp/t.cmt"
  "$CMTC" check "$tmp/t.cmt" > "$tmp/out" 2>&1 || { echo "train op of $n statements does not check:"; head -5 "$tmp/out"; exit 1; }
  set -- $(run_stats "$tmp/f.cmt")
  fs=$1 fk=$2
  set -- $(run_stats "$tmp/t.cmt")
  ts=$1 tk=$2
  awk -v n="$n" -v fs="$fs" -v fk="$fk" -v ts="$ts" -v tk="$tk" 'BEGIN {
    printf "%-44s %10.3f %10.1f %12s\n", "chain of " n ", forward (baseline)", fs, fk / 1024, "1.00x"
    printf "%-44s %10.3f %10.1f %11.2fx\n", "chain of " n ", phase train", ts, tk / 1024, ts / fs
  }'
done
