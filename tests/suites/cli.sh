#!/bin/sh
# tests/suites/cli.sh — the command line explains itself and does what it
# says (issue 14):
#   help_*      `cmtc help COMMAND` and `cmtc COMMAND --help` print that
#               command's usage and every option; the man page documents
#               every option each command's help lists
#   baseline_*  --baseline unfused|none|MAPPING
#   every_*     every mapping that checks is compiled, the others reported
#               with their own mistakes (past the error cap too); the exit
#               status says one failed
#   json_*      the JSON document: schema and version, every field on
#               docs/json-output.md, the loop nest; diagnostics on stdout
#   trace_*     flow events for data dependencies, through collectives
#   dot_*       every collective node on an edge in and an edge out
#   stdlib_*    an installed copy reads the stdlib beside it
# (the emitted MILP's column names: tests/unit/test_lp_names.c)
CMTC=${CMTC:-build/cmtc}
case $CMTC in /*) ;; *) CMTC=$(pwd)/$CMTC ;; esac
RUN=${RUN_CMTC:-$CMTC}
root=$(pwd)
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; }
have_python=false
command -v python3 >/dev/null 2>&1 && have_python=true
worked=$root/tests/golden/compile_worked.cmt

# --- help
for c in check compile sweep fmt lsp plot explain help; do
    $RUN help $c >"$tmp/h1" 2>&1; s1=$?
    $RUN $c --help >"$tmp/h2" 2>&1; s2=$?
    if [ $s1 -eq 0 ] && [ $s2 -eq 0 ] && head -n 1 "$tmp/h1" | grep -q "^usage: cmtc $c" &&
        cmp -s "$tmp/h1" "$tmp/h2"; then
        pass "help_$c"
    else
        fail "help_$c" "exit $s1/$s2: $(head -c 200 "$tmp/h1") / $(head -c 200 "$tmp/h2")"
    fi
    # every option the help lists is in the man page (as \-\-name)
    missing=""
    for o in $(sed -n 's/^  \(-[A-Za-z], \)\{0,1\}\(--[a-z-]*\).*/\2/p' "$tmp/h1"); do
        esc=$(printf '%s' "$o" | sed 's/-/\\\\-/g')
        grep -q -- "$esc" "$root/docs/cmtc.1" || missing="$missing $o"
    done
    [ -z "$missing" ] && pass "help_${c}_in_man_page" || fail "help_${c}_in_man_page" "cmtc.1 lacks$missing"
done
if $RUN help compile | grep -q -- '--baseline unfused|none|MAPPING' &&
    $RUN compile -h | grep -q -- '--emit-lp FILE'; then
    pass help_compile_lists_options
else
    fail help_compile_lists_options "$($RUN help compile 2>&1 | head -5)"
fi
$RUN compile "$worked" --format json --help >"$tmp/out" 2>&1; s=$?
[ $s -eq 0 ] && grep -q '^usage: cmtc compile' "$tmp/out" && pass help_anywhere_on_the_line ||
    fail help_anywhere_on_the_line "exit $s"
$RUN compile -m --help "$worked" >"$tmp/out" 2>&1; s=$?
[ $s -eq 2 ] && grep -q "no mapping '--help'" "$tmp/out" && pass help_as_an_option_value ||
    fail help_as_an_option_value "exit $s: $(head -c 200 "$tmp/out")"
$RUN help complie >"$tmp/out" 2>&1; s=$?
[ $s -eq 2 ] && grep -q "did you mean 'compile'" "$tmp/out" && pass help_unknown_command ||
    fail help_unknown_command "exit $s"
$RUN compile --fromat json "$worked" >"$tmp/out" 2>&1; s=$?
[ $s -eq 2 ] && grep -q "did you mean '--format'" "$tmp/out" && pass help_unknown_option ||
    fail help_unknown_option "exit $s: $(head -c 200 "$tmp/out")"
for o in --help --format --baseline --diagnostics-output; do
    grep -q -- "$o" "$root/README.md" || { fail readme_mentions "README lacks $o"; continue; }
done

# --- --baseline
$RUN compile "$worked" >"$tmp/default" 2>&1
$RUN compile "$worked" --baseline unfused >"$tmp/unfused" 2>&1
$RUN compile "$worked" --baseline none >"$tmp/none" 2>&1; s=$?
if cmp -s "$tmp/default" "$tmp/unfused" && grep -q 'vs unfused' "$tmp/unfused" &&
    grep -q 'unfused baseline' "$tmp/unfused"; then
    pass baseline_unfused_is_the_default
else
    fail baseline_unfused_is_the_default "$(grep latency "$tmp/unfused" | head -2)"
fi
if [ $s -eq 0 ] && ! grep -q 'unfused' "$tmp/none" && grep -q '^  latency' "$tmp/none"; then
    pass baseline_none
else
    fail baseline_none "exit $s: $(grep -n unfused "$tmp/none" | head -3)"
fi
{
    sed -n '3,$p' "$worked"
    cat <<'CMT'
mapping apart for gemm_rowsum on tiny {
  spatial n -> x;
  tile GLB: m 8;
}
mapping other_op for gemm_rowsum<M = 32> on tiny {
  tile GLB: m 8;
}
CMT
} >"$tmp/three.cmt"
$RUN compile "$tmp/three.cmt" -m worked --baseline apart >"$tmp/out" 2>"$tmp/err"; s=$?
if [ $s -eq 0 ] && grep -q 'vs apart [0-9.]*x' "$tmp/out" && grep -q '  apart baseline: latency' "$tmp/out" &&
    ! grep -q '^mapping apart' "$tmp/out"; then
    pass baseline_mapping
else
    fail baseline_mapping "exit $s: $(head -c 300 "$tmp/out") $(head -c 200 "$tmp/err")"
fi
$RUN compile "$tmp/three.cmt" -m other_op --baseline apart >"$tmp/out" 2>"$tmp/err"; s=$?
[ $s -eq 0 ] && grep -q "not compared with 'apart'" "$tmp/err" && ! grep -q 'vs ' "$tmp/out" &&
    pass baseline_other_op_not_compared || fail baseline_other_op_not_compared "exit $s: $(cat "$tmp/err")"
$RUN compile "$tmp/three.cmt" --baseline aprat >"$tmp/out" 2>&1; s=$?
[ $s -eq 2 ] && grep -q "did you mean apart" "$tmp/out" && pass baseline_unknown_mapping ||
    fail baseline_unknown_mapping "exit $s: $(head -c 300 "$tmp/out")"

# --- every mapping that checks is compiled
{
    sed -n '3,$p' "$worked"
    cat <<'CMT'
mapping bad_level for gemm_rowsum on tiny {
  tile GBL: m 8;
  fuse C, s at SRAM;
}
CMT
} >"$tmp/one_bad.cmt"
$RUN compile "$tmp/one_bad.cmt" >"$tmp/out" 2>"$tmp/err"; s=$?
if [ $s -eq 1 ] && grep -q '^mapping worked:' "$tmp/out" && grep -q "no memory level \`GBL\`" "$tmp/err" &&
    grep -q "no memory level \`SRAM\`" "$tmp/err" && grep -q 'not compiled: bad_level' "$tmp/err"; then
    pass every_mapping_that_checks
else
    fail every_mapping_that_checks "exit $s: $(head -c 100 "$tmp/out") / $(head -c 400 "$tmp/err")"
fi
# past the cap of 50 errors a mapping that overflows a memory is still not
# compiled: the cap stops the reports, not the checks (55 too big, 1 fine)
{
    echo 'arch one { clock 1 GHz; memory DRAM { bandwidth 16 B/cycle; } memory SP { capacity 1 KiB; bandwidth 64 B/cycle; } compute v vector { throughput 8 op/cycle; } }'
    echo 'op g<M = 4096> { in A[M] : fp32; out B[M] : fp32; B[m] = A[m] * 2; }'
    i=0
    while [ $i -lt 55 ]; do echo "mapping big_$i for g on one { tile SP: m $((1024 + i)); }"; i=$((i + 1)); done
    echo 'mapping fine for g on one { tile SP: m 64; }'
} >"$tmp/capped.cmt"
$RUN compile "$tmp/capped.cmt" --baseline none >"$tmp/out" 2>"$tmp/err"; s=$?
if [ $s -eq 1 ] && [ "$(grep -c '^mapping ' "$tmp/out")" -eq 1 ] && grep -q '^mapping fine:' "$tmp/out" &&
    grep -q 'E0199' "$tmp/err" && grep -q 'big_54 (capacity)' "$tmp/err"; then
    pass every_capacity_error_past_the_cap
else
    fail every_capacity_error_past_the_cap "exit $s: $(grep '^mapping ' "$tmp/out" | head -c 300)"
fi
$RUN compile "$tmp/one_bad.cmt" -m bad_level >"$tmp/out" 2>"$tmp/err"; s=$?
[ $s -eq 1 ] && [ ! -s "$tmp/out" ] && grep -q 'GBL' "$tmp/err" && pass every_only_the_bad_one ||
    fail every_only_the_bad_one "exit $s: $(head -c 300 "$tmp/err")"
# a mapping's own mistakes, while its arch and op have errors of their own
cat >"$tmp/all_wrong.cmt" <<'CMT'
arch tiny {
  clock 1 GHz;
  memory DRAM { bandwidth 16 B/cycle; read_energy 10 pJ/B; write_energy 10 pJ/B; }
  cluster grid[x = 2] ring { link_bandwidth 8 B/cycle; hop_latency 4 cycles; link_energy 1 pJ/B; }
  memory GLB { capacity 64 KiB; bandwidth 64 B/cycle; read_energy 1 pJ/B; write_energy 1 ns; }
  compute mac matrix { throughput 64 MAC/cycle; energy 0.5 pJ/MAC; }
  compute simd vector { throughput 8 op/cycle; energy 0.25 pJ/op; }
}
op gemm_rowsum<M = 16, N = 32, K = 64> {
  in A[M, K] : int8;
  in B[K, N] : int8;
  out s[M] : fp16;
  var C : fp16;
  C[m, n] = A[m, k] * B[k, n];
  s[m] = sum(n) C[m, n] + D[m];
}
mapping wrong for gemm_rowsum on tiny {
  spatial n -> z;
  tile GBL: m 8;
  fuse C, s at GLB;
}
CMT
$RUN check "$tmp/all_wrong.cmt" >"$tmp/out" 2>"$tmp/err"; s=$?
if [ $s -eq 1 ] && grep -q "no memory level \`GBL\`" "$tmp/err" && grep -q '`z`' "$tmp/err"; then
    pass every_own_mistakes_beside_arch_and_op_errors
else
    fail every_own_mistakes_beside_arch_and_op_errors "exit $s: $(grep error "$tmp/err" | head -5)"
fi

# --- JSON
if $have_python; then
    (cd "$root/tests/golden" && $RUN compile compile_worked.cmt --format json) >"$tmp/w.json"
    (cd "$root/examples" && $RUN compile comet_edge_gemm_softmax.cmt --format json) >"$tmp/e.json"
    python3 - "$tmp/w.json" "$tmp/e.json" "$root/docs/json-output.md" >"$tmp/out" 2>&1 <<'PY'
import json, re, sys
doc = open(sys.argv[3]).read()
documented = set(re.findall(r"`([a-z_]+)`", doc))
for path in sys.argv[1:3]:
    d = json.load(open(path))
    ok = d.get("schema") == "cmtc.compile" and d.get("schema_version") == 1
    print(("PASS" if ok else "FAIL") + ": json_schema_version" + ("" if ok else ": " + str(list(d)[:3])))
    missing = set()
    def walk(v):
        if isinstance(v, dict):
            for k, x in v.items():
                if k not in documented: missing.add(k)
                if k != "params": walk(x)  # its keys are the op's parameters
        elif isinstance(v, list):
            for x in v: walk(x)
    walk(d)
    print(("FAIL: json_fields_documented: not on docs/json-output.md: " + ", ".join(sorted(missing)))
          if missing else "PASS: json_fields_documented")
    bad = []
    for m in d["mappings"]:
        for g in m["groups"]:
            seen = []
            def nest(body, depth):
                for e in body:
                    if "node" in e:
                        seen.append(e["node"])
                        n = m["nodes"][e["node"]]
                        if n["kind"] != "boundary" and n["loop"] != depth: bad.append((e["node"], depth))
                    else:
                        if e["loop"] != depth + 1: bad.append(("loop", e["loop"]))
                        nest(e["body"], e["loop"])
            nest(g["loop_nest"], -1)
            mine = [n["id"] for n in m["nodes"] if n["group"] == g["id"]]
            if sorted(seen) != sorted(mine): bad.append(("group", g["id"], len(seen), len(mine)))
            if len(g["loops"]) == 0 and any(n["loop"] >= 0 for n in m["nodes"] if n["group"] == g["id"]):
                bad.append("loops")
    print("FAIL: json_loop_nest: " + str(bad[:5]) if bad else "PASS: json_loop_nest")
    # every collective is on a dependency in and one out
    lonely = []
    for m in d["mappings"]:
        ins = {x["to"].get("node") for x in m["dependencies"]}
        outs = {x["from"].get("node") for x in m["dependencies"]}
        lonely += [(m["name"], n["id"]) for n in m["nodes"]
                   if n["kind"] == "collective" and not (n["id"] in ins and n["id"] in outs)]
    print("FAIL: json_dependencies: " + str(lonely[:5]) if lonely else "PASS: json_dependencies")
PY
    cat "$tmp/out"
    $RUN compile "$tmp/one_bad.cmt" --format json --diagnostics-format json \
        --diagnostics-output stdout >"$tmp/j.json" 2>"$tmp/err"; s=$?
    python3 - "$tmp/j.json" >"$tmp/out" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
codes = [x["code"] for x in d.get("diagnostics", [])]
names = [m["name"] for m in d["mappings"]]
nc = [(x["name"], x["reason"]) for x in d["not_compiled"]]
ok = "E0303" in codes or any(c.startswith("E03") for c in codes)
print("PASS: json_diagnostics_on_stdout" if ok and names == ["worked"] and nc == [("bad_level", "errors")]
      else "FAIL: json_diagnostics_on_stdout: %s %s %s" % (codes, names, nc))
PY
    cat "$tmp/out"
    [ $s -eq 1 ] && [ ! -s "$tmp/err" ] && pass json_diagnostics_not_on_stderr ||
        fail json_diagnostics_not_on_stderr "exit $s: $(head -c 200 "$tmp/err")"
    $RUN check "$tmp/one_bad.cmt" --diagnostics-format json --diagnostics-output stdout \
        >"$tmp/c.json" 2>"$tmp/err"
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d) >= 2' "$tmp/c.json" 2>/dev/null &&
        [ ! -s "$tmp/err" ] && pass json_check_diagnostics_on_stdout ||
        fail json_check_diagnostics_on_stdout "$(head -c 200 "$tmp/c.json")"
    $RUN compile "$worked" --format json --baseline none | python3 -c '
import json, sys
d = json.load(sys.stdin)
print("PASS: json_baseline_none" if d["mappings"][0]["baseline"] is None else "FAIL: json_baseline_none")'

    # --- trace flows
    (cd "$root/examples" && $RUN compile comet_edge_gemm_softmax.cmt -m fused_256x256x128 --format trace) >"$tmp/t.json"
    python3 - "$tmp/t.json" >"$tmp/out" 2>&1 <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
starts = {e["id"]: e for e in ev if e.get("ph") == "s"}
ends = {e["id"]: e for e in ev if e.get("ph") == "f"}
names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e.get("name") == "thread_name"}
ok = starts and set(starts) == set(ends) and all(e.get("bp") == "e" for e in ends.values())
print("PASS: trace_flow_events" if ok else "FAIL: trace_flow_events: %d starts, %d ends" % (len(starts), len(ends)))
# each flow end lies inside a slice of its track
slices = [e for e in ev if e.get("ph") == "X"]
def inside(f):
    return any(s["pid"] == f["pid"] and s["tid"] == f["tid"] and s["ts"] <= f["ts"] <= s["ts"] + s["dur"] for s in slices)
bad = [f["id"] for f in list(starts.values()) + list(ends.values()) if not inside(f)]
print("FAIL: trace_flows_bound: %s" % bad[:5] if bad else "PASS: trace_flows_bound")
# a reduction's result reaches its readers through the collective
net_in = [f for f in ends.values() if names.get((f["pid"], f["tid"]), "").startswith("network")]
net_out = [f for f in starts.values() if names.get((f["pid"], f["tid"]), "").startswith("network")]
print("PASS: trace_flows_through_collectives" if net_in and net_out else
      "FAIL: trace_flows_through_collectives: %d in, %d out" % (len(net_in), len(net_out)))
PY
    cat "$tmp/out"
else
    echo "SKIP: json and trace checks: python3 is not installed"
fi

# --- dot: every collective has an edge in and an edge out
(cd "$root/examples" && $RUN compile comet_edge_gemm_softmax.cmt --format dot) >"$tmp/g.dot"
lonely=""
for n in $(sed -n 's/^ *\(m[0-9]*_n[0-9]*\) \[shape=diamond.*/\1/p' "$tmp/g.dot"); do
    grep -q -- "-> $n[;\[ ]" "$tmp/g.dot" && grep -q "^ *$n -> " "$tmp/g.dot" || lonely="$lonely $n"
done
if [ -z "$lonely" ] && grep -q 'shape=diamond' "$tmp/g.dot"; then
    pass dot_collectives_connected
else
    fail dot_collectives_connected "unconnected:$lonely"
fi

# --- the installed layout: <prefix>/bin/cmtc reads <prefix>/share/cmtc/stdlib
mkdir -p "$tmp/p/bin" "$tmp/p/share/cmtc/stdlib/std/ops"
cp "$CMTC" "$tmp/p/bin/cmtc"
cp -R "$root/stdlib/std" "$tmp/p/share/cmtc/stdlib/"
printf 'op marker<N = 4> {\n  in A[N] : fp16;\n  out B[N] : fp16;\n  B[n] = A[n];\n}\n' \
    >"$tmp/p/share/cmtc/stdlib/std/ops/marker.cmt"
printf 'use std.ops.marker;\n' >"$tmp/uses_marker.cmt"
if "$tmp/p/bin/cmtc" check "$tmp/uses_marker.cmt" >"$tmp/out" 2>&1 &&
    ! $RUN check "$tmp/uses_marker.cmt" >/dev/null 2>&1; then
    pass stdlib_installed_copy_reads_its_share
else
    fail stdlib_installed_copy_reads_its_share "$(head -c 300 "$tmp/out")"
fi
# --- -I naming no folder is refused (it had been searched for nothing)
$RUN check "$root/examples/tutorial.cmt" -I "$tmp/no_such_folder" >/dev/null 2>"$tmp/err"
status=$?
if [ $status -eq 2 ] && grep -q "is not a folder (it does not exist)" "$tmp/err"; then
    pass include_missing_folder_refused
else
    fail include_missing_folder_refused "exit $status: $(head -c 200 "$tmp/err")"
fi
# --- a budget in the environment that is no budget is refused, not replaced
for bad in abc 0 -5; do
    if CMTC_OPT_BUDGET_MB=$bad $RUN check "$root/examples/tutorial.cmt" >/dev/null 2>"$tmp/err"; then
        fail "budget_env_refused: $bad" "exit 0"
    elif grep -q "CMTC_OPT_BUDGET_MB='$bad' is not a memory budget" "$tmp/err"; then
        pass "budget_env_refused: $bad"
    else
        fail "budget_env_refused: $bad" "$(head -c 200 "$tmp/err")"
    fi
done
# --- every diagnostic's page explains itself, warnings too (only the E
# pages had been embedded: `cmtc explain W0301` was "no diagnostic code")
for page in "$root"/docs/errors/W*.md; do
    code=$(basename "$page" .md)
    if $RUN explain "$code" 2>"$tmp/err" | cmp -s - "$page"; then
        pass "explain_warning: $code"
    else
        fail "explain_warning: $code" "$(head -c 200 "$tmp/err")"
    fi
done
exit 0
