#!/bin/sh
# tests/suites/limits.sh — the optimizer has no silent size limits and
# stays within its time limit and memory budget.  Every case is generated
# here, at test time (issue 8 item 5, issue 9 robustness):
#
#   stmts70_*     an op of 70 statements: the MILP and --exhaustive agree
#   levels9_*     an arch of 9 memory levels: the MILP and --exhaustive agree
#   indices34_*   an op of 34 indices: holes on the 34th index are searched
#                 (a split of it beats no split) and both methods agree
#   split34       `spatial ?` over 34 indices: the whole space, so E0373
#                 (not an answer from the first 32 indices or from pairs)
#   fuse500       `fuse ?` over 500 statements with --time-limit 1 returns
#                 within 10 s (a time-limited mapping or E0371)
#   fuse2000      `fuse ?` over 2000 statements: E0380 names the budget, no
#                 abort
#   holes60_*     60 tile holes: the time limit and a lowered budget
#                 (CMTC_OPT_BUDGET_MB) bound time and peak memory
#
# Peak memory is read with /usr/bin/time when it exists and the compiler is
# not built with AddressSanitizer (whose shadow memory it would count).
CMTC=${CMTC:-build/cmtc}
TMP=${TMPDIR:-/tmp}/cmtc_limits_suite.$$
mkdir -p "$TMP"
trap 'rm -rf "$TMP"' EXIT INT TERM

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; }

measure=0
if [ -x /usr/bin/time ] && ! grep -q __asan_init "$CMTC" 2>/dev/null; then measure=1; fi

# $1 = statements; $2 = mapping body; $3 = arch levels: an op T1..Tn of
# elementwise statements on a small arch
chain() {
    python3 - "$@" <<'EOF'
import sys
n, body, levels = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
print("op chain<M = 8, N = 8> {\n  in A[M, N] : fp16;\n  out T%d[M, N] : fp16;" % n)
prev = "A"
for i in range(1, n + 1):
    print("  T%d[m, n] = %s[m, n] + 1;" % (i, prev))
    prev = "T%d" % i
print("}\narch deep {\n  clock 1 GHz;")
print("  memory DRAM { bandwidth 16 B/cycle; read_energy 100 pJ/B; write_energy 100 pJ/B; }")
for l in range(1, levels):
    print("  memory L%d { capacity %d KiB; bandwidth %d B/cycle; read_energy 1 pJ/B; "
          "write_energy 1 pJ/B; }" % (l, 2 ** (levels - l + 3), 16 * 2 ** l))
print("  compute simd vector { throughput 8 op/cycle; energy 0.5 pJ/op; }\n}")
print("mapping m for chain on deep {\n  %s\n}" % body)
EOF
}

# $1 = statements (indices j0..jn); $2 = mapping body
wide() {
    python3 - "$@" <<'EOF'
import sys
n, body = int(sys.argv[1]), sys.argv[2]
print("op wide<E = 64> {\n  in A[E] : fp16;\n  in B[E, E] : fp16;\n  out T%d[E] : fp16;" % n)
prev = "A"
for i in range(1, n + 1):
    print("  T%d[j%d] = %s[j%d] * B[j%d, j%d];" % (i, i, prev, i - 1, i - 1, i))
    prev = "T%d" % i
print("""}
arch ring2 {
  clock 1 GHz;
  memory DRAM { bandwidth 16 B/cycle; read_energy 100 pJ/B; write_energy 100 pJ/B; }
  cluster chips[x = 2] ring { link_bandwidth 800 B/cycle; hop_latency 10 cycles; link_energy 2 pJ/B; }
  memory L1 { capacity 64 KiB; bandwidth 64 B/cycle; read_energy 1 pJ/B; write_energy 1 pJ/B; }
  compute mac matrix { throughput 64 MAC/cycle; energy 0.2 pJ/MAC; }
  compute simd vector { throughput 8 op/cycle; energy 0.5 pJ/op; }
}""")
print("mapping m for wide on ring2 {\n  %s\n}" % body)
EOF
}

# latency and solver status of the one mapping of a JSON output
value() {
    python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))["mappings"][0]
print(repr(m["latency_s"]), m.get("solver", {}).get("status", "none"))
' "$1"
}

# $1 = case name, $2 = file: the MILP and the exhaustive enumerator both
# succeed, are optimal and agree; prints the MILP's latency on success
agree() {
    name=$1 file=$2
    $CMTC compile "$file" --format json >"$TMP/milp.json" 2>"$TMP/milp.err"
    code=$?
    if [ $code -ne 0 ]; then
        fail "$name" "optimizer exited $code: $(head -c 300 "$TMP/milp.err")"
        return 1
    fi
    $CMTC compile "$file" --exhaustive --format json >"$TMP/ex.json" 2>"$TMP/ex.err"
    code=$?
    if [ $code -ne 0 ]; then
        fail "$name" "exhaustive exited $code: $(head -c 300 "$TMP/ex.err")"
        return 1
    fi
    r=$(python3 -c '
import sys
a = sys.argv[1].split(); b = sys.argv[2].split()
va, vb = float(a[0]), float(b[0])
ok = abs(va - vb) <= 1e-9 * max(abs(va), abs(vb)) and a[1] == "optimal" and b[1] == "optimal"
print("ok" if ok else "milp %s (%s) vs exhaustive %s (%s)" % (a[0], a[1], b[0], b[1]))
' "$(value "$TMP/milp.json")" "$(value "$TMP/ex.json")")
    if [ "$r" = ok ]; then pass "$name"; else fail "$name" "$r"; return 1; fi
}

# $1 = seconds allowed, then a command: runs it under timeout, with its
# wall time in $wall, peak memory in KiB in $peak (0 when not measured)
# and exit status in $status; output in $TMP/run.out and $TMP/run.err
run_bounded() {
    limit=$1
    shift
    start=$(date +%s.%N)
    if [ $measure = 1 ]; then
        timeout "$limit" /usr/bin/time -f '%M' -o "$TMP/peak" "$@" >"$TMP/run.out" 2>"$TMP/run.err"
        status=$?
        peak=$(tail -n 1 "$TMP/peak" 2>/dev/null)
        case $peak in '' | *[!0-9]*) peak=0 ;; esac
    else
        timeout "$limit" "$@" >"$TMP/run.out" 2>"$TMP/run.err"
        status=$?
        peak=0
    fi
    wall=$(python3 -c "import sys; print('%.2f' % (float(sys.argv[2]) - float(sys.argv[1])))" \
        "$start" "$(date +%s.%N)")
}

# ------------------------------------------------ no silent size limits
chain 70 "tile L1: m ?;" 2 >"$TMP/stmts70.cmt"
agree stmts70_tile "$TMP/stmts70.cmt"
grep -h "inf PiB" "$TMP"/*.err >/dev/null 2>&1 && fail stmts70_message "an excess of inf PiB"

chain 3 "tile L8: m ?;
  fuse ?;" 9 >"$TMP/levels9.cmt"
agree levels9_fuse "$TMP/levels9.cmt"

wide 33 "tile L1: j33 ?;" >"$TMP/indices34.cmt"
agree indices34_tile "$TMP/indices34.cmt"

# the split of the 34th index is in the space and is the better mapping
wide 33 "spatial j33 -> ?;" >"$TMP/indices34_hole.cmt"
wide 33 "spatial j33 -> x;" >"$TMP/indices34_hand.cmt"
if agree indices34_split "$TMP/indices34_hole.cmt" &&
    $CMTC compile "$TMP/indices34_hand.cmt" --format json >"$TMP/hand.json" 2>"$TMP/hand.err"; then
    set -- $(value "$TMP/milp.json")
    found=$1
    set -- $(value "$TMP/hand.json")
    hand=$1
    if python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) <= float(sys.argv[2]) * (1 + 1e-9) else 1)' \
        "$found" "$hand"; then
        pass "indices34_split_found (optimizer $found s, spatial j33 -> x $hand s)"
    else
        fail indices34_split_found "optimizer $found s is worse than spatial j33 -> x $hand s"
    fi
fi

wide 33 "spatial ?;" >"$TMP/split34.cmt"
run_bounded 60 $CMTC compile "$TMP/split34.cmt"
if [ "$status" = 3 ] && grep -q "E0373" "$TMP/run.err"; then
    pass "split34 (E0373 in ${wall} s)"
else
    fail split34 "exit $status in ${wall} s, expected E0373: $(head -c 300 "$TMP/run.err")"
fi

# --------------------------------------------- time limit and memory budget
chain 500 "fuse ?;" 2 >"$TMP/fuse500.cmt"
run_bounded 20 $CMTC compile "$TMP/fuse500.cmt" --time-limit 1
if [ "$status" = 0 ] && grep -q "solver time_limit" "$TMP/run.out" ||
    { [ "$status" = 3 ] && grep -q "E0371" "$TMP/run.err"; }; then
    if python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) < 10 else 1)' "$wall"; then
        pass "fuse500 (exit $status in ${wall} s, peak ${peak} KiB)"
    else
        fail fuse500 "took ${wall} s with --time-limit 1"
    fi
else
    fail fuse500 "exit $status in ${wall} s: $(head -c 300 "$TMP/run.err")"
fi
if [ "$peak" -gt 1048576 ]; then fail fuse500_memory "peak ${peak} KiB"; fi

chain 2000 "fuse ?;" 2 >"$TMP/fuse2000.cmt"
run_bounded 60 $CMTC compile "$TMP/fuse2000.cmt"
if [ "$status" = 3 ] && grep -q "E0380.*budget of 2.00 GiB" "$TMP/run.err" &&
    ! grep -q "out of memory" "$TMP/run.err"; then
    pass "fuse2000 (E0380 in ${wall} s, peak ${peak} KiB)"
else
    fail fuse2000 "exit $status: $(head -c 300 "$TMP/run.err")"
fi

python3 - >"$TMP/holes60.cmt" <<'EOF'
n = 33
print("op wide<E = 4> {\n  in A[E] : fp16;\n  in B[E, E] : fp16;\n  out T%d[E] : fp16;" % n)
prev = "A"
for i in range(1, n + 1):
    print("  T%d[j%d] = %s[j%d] * B[j%d, j%d];" % (i, i, prev, i - 1, i - 1, i))
    prev = "T%d" % i
print("""}
arch deep3 {
  clock 1 GHz;
  memory DRAM { bandwidth 16 B/cycle; read_energy 100 pJ/B; write_energy 100 pJ/B; }
  memory L1 { capacity 64 KiB; bandwidth 64 B/cycle; read_energy 1 pJ/B; write_energy 1 pJ/B; }
  memory L2 { capacity 4 KiB; bandwidth 128 B/cycle; read_energy 1 pJ/B; write_energy 1 pJ/B; }
  compute mac matrix { throughput 64 MAC/cycle; energy 0.2 pJ/MAC; }
  compute simd vector { throughput 8 op/cycle; energy 0.5 pJ/op; }
}""")
print("mapping m for wide on deep3 {")
for level in ("L1", "L2"):
    print("  tile %s: %s;" % (level, ", ".join("j%d ?" % i for i in range(30))))
print("}")
EOF
run_bounded 30 $CMTC compile "$TMP/holes60.cmt" --time-limit 2
if { [ "$status" = 0 ] || [ "$status" = 3 ]; } &&
    python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) < 10 else 1)' "$wall"; then
    pass "holes60_time (exit $status in ${wall} s, peak ${peak} KiB)"
else
    fail holes60_time "exit $status in ${wall} s with --time-limit 2"
fi
run_bounded 60 env CMTC_OPT_BUDGET_MB=128 $CMTC compile "$TMP/holes60.cmt"
if [ "$status" = 3 ] && grep -q "E0380.*budget of 128 MiB" "$TMP/run.err"; then
    if [ "$peak" -gt 262144 ]; then
        fail holes60_budget "peak ${peak} KiB with a budget of 128 MiB"
    else
        pass "holes60_budget (E0380 in ${wall} s, peak ${peak} KiB)"
    fi
else
    fail holes60_budget "exit $status: $(head -c 300 "$TMP/run.err")"
fi
