#!/bin/sh
# tests/suites/optimizer.sh — the mapping optimizer against independent
# references.  Run from the repository root with CMTC set.
#
#   exact_*     every mapping of tests/opt/spaces.cmt: the MILP's optimum
#               equals the exhaustive enumerator's (relative 1e-9) and the
#               optimizer's own report matches the evaluated mapping
#   beats_*     every example with holes: the optimizer's mapping is at
#               least as good as each complete mapping of the same op,
#               parameters, arch, overlap and repeat in the same file
#   lowering_alone_* lowering only the arcs' groups gives the same records
#   megatron    GPT-3 on 8 SN10: the optimizer finds h and f split over tp
#   roundtrip_* the completed mapping pasted back evaluates to the same cost
#   emit_lp, time_limit, infeasible, stdout: the command-line contract
#   (no mapping found: exit 3, with the explanation as diagnostics)
CMTC=${CMTC:-build/cmtc}
if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP: optimizer: python3 is not installed (it reads the JSON results)"
    exit 0
fi
TMP=${TMPDIR:-/tmp}/cmtc_opt_suite.$$
mkdir -p "$TMP"
trap 'rm -rf "$TMP"' EXIT INT TERM

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; }

# objective value of every mapping of a JSON output: name value status
values() {
    python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for m in d["mappings"]:
    obj = "latency"
    t = m.get("mapping", "")
    if "objective energy" in t: obj = "energy"
    if "objective edp" in t: obj = "edp"
    lat, en = m["latency_s"], m["energy_j"]
    v = {"latency": lat, "energy": en, "edp": lat * en}[obj]
    print(m["name"], repr(v), m.get("solver", {}).get("status", "none"))
' "$1"
}

# ------------------------------------------------------------- exactness
SPACES=tests/opt/spaces.cmt
NAMES=$(sed -n 's/^mapping \([A-Za-z0-9_]*\) .*/\1/p' $SPACES)
[ -n "${BEATS_ONLY:-}" ] && NAMES=
for m in $NAMES; do
    if ! $CMTC compile $SPACES -m "$m" --format json >"$TMP/milp.json" 2>"$TMP/milp.err"; then
        fail "exact_$m" "optimizer exited $?: $(head -c 300 "$TMP/milp.err")"
        continue
    fi
    if ! $CMTC compile $SPACES -m "$m" --exhaustive --format json >"$TMP/ex.json" 2>"$TMP/ex.err"; then
        fail "exact_$m" "exhaustive exited $?: $(head -c 300 "$TMP/ex.err")"
        continue
    fi
    if grep -q "E0379" "$TMP/milp.err"; then
        fail "exact_$m" "model and cost model disagree: $(grep E0379 "$TMP/milp.err")"
        continue
    fi
    a=$(values "$TMP/milp.json")
    b=$(values "$TMP/ex.json")
    r=$(python3 -c '
import sys
a = sys.argv[1].split(); b = sys.argv[2].split()
va, vb = float(a[1]), float(b[1])
ok = abs(va - vb) <= 1e-9 * max(abs(va), abs(vb)) and a[2] == "optimal" and b[2] == "optimal"
print("ok" if ok else "milp %s (%s) vs exhaustive %s (%s)" % (a[1], a[2], b[1], b[2]))
' "$a" "$b")
    if [ "$r" = ok ]; then pass "exact_$m"; else fail "exact_$m" "$r"; fi
done

# --------------------------------------- examples: no worse than by hand
# An example marked `// cmtc: long` (a solve of minutes) runs only with
# CMTC_LONG=1: `make bench` runs it alone (BEATS_ONLY=FILE: that file's
# comparison and nothing else).
for f in ${BEATS_ONLY:-examples/*.cmt}; do
    grep -q '?' "$f" || continue
    base=$(basename "$f" .cmt)
    if [ "$(head -n 1 "$f")" = "// cmtc: long" ] && [ "${CMTC_LONG:-0}" != 1 ]; then
        echo "SKIP: beats_$base: a solve of minutes; make bench runs it (CMTC_LONG=1)"
        continue
    fi
    if ! $CMTC compile "$f" --format json >"$TMP/all.json" 2>"$TMP/all.err"; then
        fail "beats_$base" "compile exited $?: $(head -c 300 "$TMP/all.err")"
        continue
    fi
    r=$(python3 -c '
import json, re, sys
d = json.load(open(sys.argv[1]))
src = open(sys.argv[2]).read()
def body(name):
    b = re.search(r"^mapping %s .*?\{(.*?)^\}" % name, src, re.S | re.M)
    return re.sub(r"//[^\n]*", "", b.group(1)) if b else ""
def header(name):
    # the op and its bindings as the mapping declares them: `microbatches ?
    # of B` instantiates B per choice, the problem stays the declared one
    h = re.search(r"^mapping %s +for +([^{]*?) +on " % name, src, re.M)
    return re.sub(r"\s+", "", h.group(1)) if h else ""
def key(m):
    t = m.get("mapping", "")
    rep = re.search(r"repeat (\d+)", t)
    return (m["op"], header(m["name"]), m["arch"], json.dumps(m.get("arch_params", {}), sort_keys=True),
            "overlap none" in t, rep.group(1) if rep else "1")
def fuse_lines(name):
    return sorted(re.sub(r"\s+", " ", f.strip()) for f in re.findall(r"fuse[^;]*;", body(name)))
def same_space(solved, hand):
    # fuse lines written in full bound the space of the solved mapping: a hand
    # mapping with other groups lies outside it
    f = fuse_lines(solved)
    return any("?" in x for x in f) or f == fuse_lines(hand)
def value(m, obj, per_sequence=False):
    # a serving batch the optimizer chose compares per sequence (tokens/s)
    b = m["serving"]["sequences"] if per_sequence else 1
    return {"latency": m["latency_s"] / b, "energy": m["energy_j"] / b,
            "edp": m["latency_s"] * m["energy_j"] / b / b}[obj]
bad = []; n = 0; outside = []
for s in d["mappings"]:
    if s.get("solver", {}).get("status") in (None, "not_needed"): continue
    t = s.get("mapping", "")
    obj = "energy" if "objective energy" in t else "edp" if "objective edp" in t else "latency"
    for h in d["mappings"]:
        if h.get("solver", {}).get("status") not in (None, "not_needed"): continue
        if key(h) != key(s) or not same_space(s["name"], h["name"]): continue
        per_seq = s.get("serving", {}).get("sequences_chosen", False)
        if per_seq and ("serving" not in h or h["latency_s"] > s["serving"].get("limit_s", float("inf"))):
            continue  # a hand batch past the bound on the step is no competitor
        # hand mappings with `spatial for` may lie outside the space of
        # `spatial ?` (the gather of COMET); they are compared all the same and
        # named in the report
        if "spatial for" in body(h["name"]) and "spatial ?" in body(s["name"]):
            outside.append("%s %.6g vs %s %.6g" % (h["name"], value(h, obj), s["name"], value(s, obj)))
        n += 1
        if value(s, obj, per_seq) > value(h, obj, per_seq) * (1 + 1e-9):
            bad.append("%s %.6g worse than %s %.6g" % (s["name"], value(s, obj, per_seq), h["name"], value(h, obj, per_seq)))
note = ("; with spatial for: " + ", ".join(outside)) if outside else ""
# no hand mapping to compare with would make the test pass without testing
if n == 0: bad.append("no complete mapping of the same op, arch and shape to compare with")
print("ok %d comparisons%s" % (n, note) if not bad else "; ".join(bad))
' "$TMP/all.json" "$f")
    case "$r" in
    ok*) pass "beats_$base (${r#ok })" ;;
    *) fail "beats_$base" "$r" ;;
    esac
done
[ -n "${BEATS_ONLY:-}" ] && exit 0

# ---------------------------------------- lowering only the arcs' groups
# The optimizer lowers only the groups of the arcs it costs after each
# configuration's first lowering (docs/optimizer.md 2); with
# CMTC_OPT_CHECK_LOWERING=1 each such lowering is compared with the whole
# one, group record by group record, bit for bit (an internal error and
# abort otherwise): GPT-3 with `spatial ?` and `fuse ?`, and the spaces
# with fusion holes.
if [ -z "${BEATS_ONLY:-}" ]; then
    for m in gpt_8 s27_group_tiles_fuse s33_gpipe_fuse s34_outer_holes; do
        f=tests/opt/scaling.cmt
        case $m in s*) f=$SPACES ;; esac
        if CMTC_OPT_CHECK_LOWERING=1 $CMTC compile $f -m $m >"$TMP/chk.out" 2>"$TMP/chk.err"; then
            pass "lowering_alone_$m"
        else
            fail "lowering_alone_$m" "exited $?: $(head -c 300 "$TMP/chk.err")"
        fi
    done
fi

# ------------------------------------------------------------ Megatron
if $CMTC compile examples/dfmodel_gpt3_sn10.cmt -m searched --format json >"$TMP/gpt.json" 2>"$TMP/gpt.err"; then
    r=$(python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))["mappings"][0]
t = m["mapping"]
ok = "h -> tp" in t and "f -> tp" in t
# heads split for attention, f for the FFN; the projection pr and FFN1 f1
# sum a split index: each reduced once (all-reduce, or reduce-scatter when
# the statements after them are split along another index)
red = [n.get("statement") for n in m["nodes"] if n["kind"] == "collective"
       and n.get("collective") in ("allreduce", "reduce_scatter", "reduce")]
once = red.count("pr") == 1 and red.count("f1") == 1
print("ok" if ok and once else "split %r, reductions after %r" % (t, red))
' "$TMP/gpt.json")
    if [ "$r" = ok ]; then pass megatron; else fail megatron "$r"; fi
else
    fail megatron "compile exited $?: $(head -c 300 "$TMP/gpt.err")"
fi

# ------------------------------------------------------------ round trip
for m in s11_all_softmax s13_mlp s22_partial_fuse s25_group_tiles s26_group_orders s27_group_tiles_fuse; do
    $CMTC compile $SPACES -m "$m" --format json >"$TMP/rt.json" 2>/dev/null
    python3 -c '
import json, re, sys
m = json.load(open(sys.argv[1]))["mappings"][0]
src = open(sys.argv[2]).read()
hdr = re.search(r"^mapping %s (for .*?) \{" % m["name"], src, re.M).group(1)
print("use std.ops.gemm_softmax; use std.ops.gemm_layernorm; use std.ops.mlp; use \"%s/archs.cmt\";" % sys.argv[3])
print("mapping pasted %s { %s }" % (hdr, m["mapping"]))
' "$TMP/rt.json" $SPACES "$(pwd)/tests/opt" >"$TMP/rt.cmt"
    if $CMTC compile "$TMP/rt.cmt" --format json >"$TMP/rt2.json" 2>"$TMP/rt2.err"; then
        a=$(values "$TMP/rt.json" | awk '{print $2}')
        b=$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))["mappings"][0]; print(repr(m["latency_s"]), repr(m["energy_j"]))' "$TMP/rt2.json")
        c=$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))["mappings"][0]; print(repr(m["latency_s"]), repr(m["energy_j"]))' "$TMP/rt.json")
        if [ "$b" = "$c" ]; then pass "roundtrip_$m"; else fail "roundtrip_$m" "pasted back: $b, optimized: $c"; fi
    else
        fail "roundtrip_$m" "pasted mapping does not compile: $(head -c 300 "$TMP/rt2.err")"
    fi
done

# ---------------------------------------------------------------- emit-lp
if $CMTC compile $SPACES -m s11_all_softmax --emit-lp "$TMP/m.lp" >/dev/null 2>&1 &&
    grep -q '^min:' "$TMP/m.lp" && grep -q 'one_configuration@' "$TMP/m.lp" &&
    grep -q 'cover_C_cfg' "$TMP/m.lp"; then
    pass emit_lp
else
    fail emit_lp "no LP model with named rows in $TMP/m.lp"
fi

# E0374: the model file cannot be written.  The mapping is still produced
# (stdout), but the output failed, so the exit code is 2 (an I/O failure),
# not 0.
$CMTC compile $SPACES -m s11_all_softmax --emit-lp "$TMP/no_such_dir/m.lp" >"$TMP/lp.out" 2>"$TMP/lp.err"
code=$?
if [ $code -eq 2 ] && grep -q 'E0374' "$TMP/lp.err" && grep -q 's11_all_softmax' "$TMP/lp.out"; then
    pass emit_lp_unwritable_exits_2
else
    fail emit_lp_unwritable_exits_2 "exit $code: $(head -c 300 "$TMP/lp.err")"
fi

# ------------------------------------------------- infeasible, time limit
cat >"$TMP/inf.cmt" <<EOF
use std.ops.gemm;
use "$(pwd)/tests/opt/archs.cmt";
mapping big for gemm<M = 64, N = 64, K = 64> on tiny_single {
  tile SRAM: m 64, n 64, k ?;
}
EOF
$CMTC compile "$TMP/inf.cmt" >"$TMP/inf.out" 2>&1
code=$?
if [ $code -eq 3 ] && grep -q 'E0370' "$TMP/inf.out" && grep -q 'would need' "$TMP/inf.out" &&
    grep -q 'tile m 64' "$TMP/inf.out" && grep -q 'tile n 64' "$TMP/inf.out"; then
    pass infeasible_explained
else
    fail infeasible_explained "exit $code: $(head -c 400 "$TMP/inf.out")"
fi

$CMTC compile examples/comet_edge_gemm_softmax.cmt -m searched_256x256x128 --time-limit 0.05 \
    --format json >"$TMP/tl.json" 2>"$TMP/tl.err"
code=$?
st=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["mappings"][0]["solver"]["status"])' "$TMP/tl.json" 2>/dev/null)
if [ $code -eq 3 ] && grep -q E0371 "$TMP/tl.err"; then
    pass time_limit_no_mapping
elif [ $code -eq 0 ] && [ "$st" = time_limit ]; then
    pass "time_limit_best_so_far"
else
    fail time_limit "exit $code, status '$st': $(head -c 300 "$TMP/tl.err")"
fi

# stdout carries only the listing: lp_solve never writes there
$CMTC compile $SPACES -m s13_mlp --format json >"$TMP/so.json" 2>/dev/null
if python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$TMP/so.json" 2>/dev/null; then
    pass stdout_clean
else
    fail stdout_clean "stdout is not one JSON document"
fi

# progress on stderr: only on a terminal, only after a second (gpt_64
# takes about 2 s; gpt_8_tiles, once 1.2 s, now finishes before the first
# progress line is due)
if command -v script >/dev/null 2>&1; then
    script -qec "$CMTC compile tests/opt/scaling.cmt -m gpt_64 -o /dev/null" \
        /dev/null >"$TMP/tty.txt" 2>&1
    $CMTC compile tests/opt/scaling.cmt -m gpt_64 -o /dev/null 2>"$TMP/notty.txt"
    if tr '\r' '\n' <"$TMP/tty.txt" | grep -q "cmtc: gpt_64: " &&
        ! grep -q "cmtc: gpt_64: " "$TMP/notty.txt"; then
        pass progress_on_terminal_only
    else
        fail progress_on_terminal_only "no progress line on a terminal, or one on a file"
    fi
else
    echo "SKIP: progress_on_terminal_only: script (util-linux) is not installed"
fi
