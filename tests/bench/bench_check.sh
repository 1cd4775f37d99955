#!/bin/sh
# `cmtc check` throughput (issue 9, speed), three figures, printed whether
# or not their goals are met (nothing here fails on a slow run):
#  1. lines per second on a generated file of at least 100 000 lines:
#     median of 7 runs (goal: 1 000 000 on one core), and the median CPU
#     time of 7 more (steadier on a shared machine), beside `wc -l` over
#     the same file to show how far the checker is from reading speed;
#  2. its memory: peak resident set of one run, and bytes per line;
#  3. 40 000 ops with exactly one warning each: median of 5 runs (goal:
#     under 1 s), so that diagnostics stay linear in their number;
#  4. one op of a chain of 10 000 and of 40 000 statements: median of 5
#     runs each and their ratio against the statements' (goal: under 8 for
#     4x the statements: linear, where name lookups by scan made it 16).
set -eu
CMTC=${CMTC:-build/cmtc}
here=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$here/gen_large.py" 100000 > "$tmp/large.cmt"
lines=$(wc -l < "$tmp/large.cmt")
warn_ops=40000
python3 "$here/gen_large.py" --one-warning "$warn_ops" > "$tmp/warnings.cmt"
median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
# time_runs N CMD...: the median wall time of N runs, in seconds
time_runs() {
  n=$1
  shift
  i=0
  while [ "$i" -lt "$n" ]; do
    i=$((i + 1))
    start=$(date +%s.%N)
    "$@" > /dev/null 2>&1 || true
    end=$(date +%s.%N)
    awk "BEGIN{print $end - $start}"
  done | median
}
# cpu_runs N CMD...: the median CPU time (user + system) of N runs, in
# seconds: on a shared machine it varies less than the wall time
cpu_runs() {
  python3 -c '
import resource, subprocess, sys
n, cmd, times = int(sys.argv[1]), sys.argv[2:], []
for _ in range(n):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    times.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
print(sorted(times)[(n - 1) // 2])' "$@"
}
# peak_kib CMD...: the peak resident set of one run, in KiB (getrusage of
# the child, so no /usr/bin/time is needed)
peak_kib() {
  python3 -c '
import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@"
}
"$CMTC" check "$tmp/large.cmt" > "$tmp/check.out" 2>&1 || { echo "check failed on the generated file:"; head "$tmp/check.out"; exit 1; }
"$CMTC" check "$tmp/warnings.cmt" > "$tmp/warn.out" 2>&1 || { echo "check failed on the warnings file:"; head "$tmp/warn.out"; exit 1; }
warned=$(grep -c '^[^ ].*: warning\[W0401\]' "$tmp/warn.out" || true)
[ "$warned" -eq "$warn_ops" ] || { echo "expected $warn_ops warnings, got $warned"; exit 1; }
check_s=$(time_runs 7 "$CMTC" check "$tmp/large.cmt")
check_cpu=$(cpu_runs 7 "$CMTC" check "$tmp/large.cmt")
wc_s=$(time_runs 7 wc -l "$tmp/large.cmt")
peak=$(peak_kib "$CMTC" check "$tmp/large.cmt")
warn_s=$(time_runs 5 "$CMTC" check "$tmp/warnings.cmt")
warn_peak=$(peak_kib "$CMTC" check "$tmp/warnings.cmt")
chain() {
  python3 - "$1" <<'PY'
import sys
n = int(sys.argv[1])
print("arch one { clock 1 GHz; memory DRAM { bandwidth 16 B/cycle; } "
      "memory SP { capacity 64 KiB; bandwidth 64 B/cycle; } "
      "compute v vector { throughput 8 op/cycle; } }")
print("op g<M = 64> {\n  in A[M] : fp32;\n  out Z[M] : fp32;\n  t0[m] = A[m] * 2;")
for i in range(1, n):
    print("  t%d[m] = t%d[m] + A[m] * 0.5;" % (i, i - 1))
print("  Z[m] = t%d[m] + 1;\n}\nmapping x for g on one { tile SP: m 16; }" % (n - 1))
PY
}
chain 10000 > "$tmp/chain10k.cmt"
chain 40000 > "$tmp/chain40k.cmt"
chain10_s=$(time_runs 5 "$CMTC" check "$tmp/chain10k.cmt")
chain40_s=$(time_runs 5 "$CMTC" check "$tmp/chain40k.cmt")
awk -v n="$lines" -v c="$check_s" -v w="$wc_s" -v kib="$peak" -v ops="$warn_ops" \
    -v ws="$warn_s" -v wkib="$warn_peak" -v cpu="$check_cpu" -v c10="$chain10_s" \
    -v c40="$chain40_s" 'BEGIN {
  printf "%-40s %12s %14s %10s %10s\n", "what", "median s", "lines/s", "peak MiB", "B/line"
  printf "%-40s %12.4f %14.0f %10.1f %10.0f\n", "cmtc check (" n " lines)", c, n / c,
         kib / 1024, kib * 1024 / n
  printf "%-40s %12.4f %14.0f\n", "  the same, CPU time (user + system)", cpu, n / cpu
  printf "%-40s %12.4f %14.0f\n", "baseline: wc -l (same file)", w, n / w
  printf "%-40s %12.4f %14s %10.1f\n", "cmtc check (" ops " ops, 1 warning each)", ws, "-",
         wkib / 1024
  printf "goal 1000000 lines/s: %s (%.2fx the goal); check/wc ratio %.1fx\n",
         (n / c >= 1000000 ? "met" : "NOT met"), (n / c) / 1000000, c / w
  printf "goal %d one-warning ops under 1 s: %s (%.2f s)\n", ops,
         (ws < 1 ? "met" : "NOT met"), ws
  printf "%-40s %12.4f\n", "cmtc check (one op, 10000 statements)", c10
  printf "%-40s %12.4f\n", "cmtc check (one op, 40000 statements)", c40
  printf "goal 4x the statements under 8x the time: %s (%.1fx)\n",
         (c40 / c10 < 8 ? "met" : "NOT met"), c40 / c10
}'
