#!/bin/sh
# Sweeps (issue 13): points per second of `cmtc sweep` on the DSE example
# (432 points, each checked, solved, lowered and costed in a process of its
# own) with one worker and with two, the median of 3 runs each; the ratio
# is the two workers' speed against the one's, measured in the same run.
# Printed, never asserted.
set -eu
CMTC=${CMTC:-build/cmtc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
example=examples/dse_gemm_softmax.cmt
points=$(($("$CMTC" sweep "$example" -j 2 -o "$tmp/all.csv" 2>/dev/null; wc -l < "$tmp/all.csv") - 1))
median() { # median JOBS: seconds of a whole sweep, median of 3
  python3 -c '
import subprocess, sys, time, os
times = []
for k in range(3):
    out = os.path.join(sys.argv[3], "r%d.csv" % k)
    t = time.monotonic()
    subprocess.run([sys.argv[1], "sweep", sys.argv[4], "-j", sys.argv[2], "-o", out],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    times.append(time.monotonic() - t)
    os.remove(out)
print(sorted(times)[1])' "$CMTC" "$1" "$tmp" "$example"
}
one=$(median 1)
two=$(median 2)
printf "%-40s %8s %10s %12s\n" "sweep of $points points" "median s" "points/s" "vs 1 worker"
python3 -c '
import sys
p, one, two = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
print("%-40s %8.2f %10.1f %12s" % ("-j 1", one, p / one, "1.00x"))
print("%-40s %8.2f %10.1f %11.2fx" % ("-j 2", two, p / two, one / two))' "$points" "$one" "$two"
