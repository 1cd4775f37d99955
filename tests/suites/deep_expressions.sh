#!/bin/sh
# Expression depth is capped once, in the parser (E0217 past 4000 levels):
# a 100 000-term sum, generated here, must be refused with a diagnostic at
# its place by every consumer (check, compile, fmt, the language server's
# formatting and other requests) instead of overflowing a stack; a sum
# exactly at the cap must go through all of them, so each recursive walk
# really handles the deepest expression the parser lets through.
CMTC=${CMTC:-build/cmtc}
case $CMTC in /*) ;; *) CMTC=$(pwd)/$CMTC ;; esac
RUN=${RUN_CMTC:-$CMTC}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; }

# deep_file TERMS: an arch, an op whose statement sums TERMS accesses (a
# left spine TERMS deep) and a mapping with a hole, for the optimizer.
deep_file() {
    cat <<'CMT'
arch tiny {
  clock 1 GHz;
  memory DRAM { bandwidth 16 B/cycle; read_energy 10 pJ/B; write_energy 10 pJ/B; }
  memory GLB { capacity 64 KiB; bandwidth 64 B/cycle; read_energy 1 pJ/B; write_energy 1 pJ/B; }
  compute simd vector { throughput 8 op/cycle; energy 0.25 pJ/op; }
}
op deep<N = 64> {
  in A[N] : fp32;
  out X[N] : fp32;
CMT
    printf '  X[i] = A[i]'
    awk -v n="$1" 'BEGIN { for (k = 1; k < n; k++) printf " + A[i]" }'
    printf ';\n}\nmapping m for deep on tiny {\n  tile GLB: i ?;\n}\n'
}
deep_file 100000 >"$tmp/huge.cmt"
deep_file 4000 >"$tmp/at_cap.cmt"

# Exit status below 128 (no signal) and E0217 on line 10, the statement.
refused() { # name status output-file
    if [ "$2" -ge 128 ]; then
        fail "$1" "killed by signal $(($2 - 128))"
    elif [ "$2" -ne 1 ]; then
        fail "$1" "exit $2, expected 1"
    elif ! grep -q ':10:[0-9]*: error\[E0217\]: expression nests more than 4000 operators deep' "$3"; then
        fail "$1" "no E0217 at line 10: $(head -c 300 "$3")"
    else
        pass "$1"
    fi
}

$RUN check "$tmp/huge.cmt" >"$tmp/out" 2>&1
refused deep_check_refused $? "$tmp/out"
$RUN compile "$tmp/huge.cmt" >"$tmp/out" 2>&1
refused deep_compile_refused $? "$tmp/out"
cp "$tmp/huge.cmt" "$tmp/huge_copy.cmt"
$RUN fmt "$tmp/huge_copy.cmt" >"$tmp/out" 2>&1
refused deep_fmt_refused $? "$tmp/out"
if cmp -s "$tmp/huge.cmt" "$tmp/huge_copy.cmt"; then
    pass deep_fmt_leaves_file
else
    fail deep_fmt_leaves_file "fmt changed a file it refused"
fi
$RUN fmt - <"$tmp/huge.cmt" >"$tmp/out" 2>"$tmp/err"
refused deep_fmt_stdin_refused $? "$tmp/err"
# only the operator where the cap is crossed is reported, once
count=$($RUN check "$tmp/huge.cmt" 2>&1 | grep -c 'E0217')
if [ "$count" = 1 ]; then pass deep_reported_once; else fail deep_reported_once "$count reports"; fi

# A chain of 120 constants, each 4000 deep and built on the next: one
# expression is within the cap, but evaluating the first nests 480 000
# levels through the others; constant evaluation counts them.
awk 'BEGIN {
    for (c = 0; c < 120; c++) {
        printf "const C%d = %s", c, c < 119 ? "C" (c + 1) : "1"
        for (k = 1; k < 4000; k++) printf " + 1"
        printf ";\n"
    }
}' >"$tmp/chain.cmt"
$RUN check "$tmp/chain.cmt" >"$tmp/out" 2>&1
status=$?
if [ $status -eq 1 ] && grep -q 'E0217.*counting the constants it uses' "$tmp/out"; then
    pass deep_constant_chain_refused
else
    fail deep_constant_chain_refused "exit $status: $(head -c 300 "$tmp/out")"
fi

# At the cap: everything works.
if $RUN check "$tmp/at_cap.cmt" >"$tmp/out" 2>&1; then
    pass deep_at_cap_checks
else
    fail deep_at_cap_checks "$(head -c 300 "$tmp/out")"
fi
if $RUN compile "$tmp/at_cap.cmt" --format json -o "$tmp/at_cap.json" >"$tmp/out" 2>&1; then
    pass deep_at_cap_compiles
else
    fail deep_at_cap_compiles "$(head -c 300 "$tmp/out")"
fi
# formatted, the statement stays one line of the same terms
if $RUN fmt - <"$tmp/at_cap.cmt" >"$tmp/fmt.cmt" 2>"$tmp/err" &&
    [ "$(grep '^  X\[i\] = ' "$tmp/fmt.cmt")" = "$(grep '^  X\[i\] = ' "$tmp/at_cap.cmt")" ]; then
    pass deep_at_cap_formats
else
    fail deep_at_cap_formats "$(head -c 300 "$tmp/err")"
fi

# The language server: every request on both documents, each answered;
# the server must exit 0 after shutdown.  Line 9 (0-based) is the
# statement; character 9 is the first `A`, the bottom of the left spine.
if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP: deep_lsp: python3 is not installed"
    exit 0
fi
lsp_transcript() { # file
    uri="file://$1"
    pos='"position":{"line":9,"character":9}'
    doc="\"textDocument\":{\"uri\":\"$uri\"}"
    cat <<JSON
{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}
{"jsonrpc":"2.0","method":"initialized","params":{}}
{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"$uri","languageId":"cmt","version":1,"text":"@file:$1"}}}
{"jsonrpc":"2.0","id":2,"method":"textDocument/formatting","params":{$doc,"options":{"tabSize":2,"insertSpaces":true}}}
{"jsonrpc":"2.0","id":3,"method":"textDocument/hover","params":{$doc,$pos}}
{"jsonrpc":"2.0","id":4,"method":"textDocument/definition","params":{$doc,$pos}}
{"jsonrpc":"2.0","id":5,"method":"textDocument/documentSymbol","params":{$doc}}
{"jsonrpc":"2.0","id":6,"method":"textDocument/completion","params":{$doc,$pos}}
{"jsonrpc":"2.0","id":7,"method":"textDocument/inlayHint","params":{$doc,"range":{"start":{"line":0,"character":0},"end":{"line":20,"character":0}}}}
{"jsonrpc":"2.0","id":8,"method":"textDocument/codeAction","params":{$doc,"range":{"start":{"line":9,"character":0},"end":{"line":9,"character":9}},"context":{"diagnostics":[]}}}
{"jsonrpc":"2.0","id":99,"method":"shutdown"}
{"jsonrpc":"2.0","method":"exit"}
JSON
}
for name in huge at_cap; do
    lsp_transcript "$tmp/$name.cmt" >"$tmp/$name.in"
    python3 tests/lsp/client.py "$CMTC" "$tmp/$name.in" >"$tmp/lsp.out" 2>"$tmp/lsp.err"
    answered=0
    for id in 1 2 3 4 5 6 7 8 99; do
        # a result or an error (formatting the huge file is refused)
        grep -q "\"id\":$id,\"jsonrpc\"" "$tmp/lsp.out" && answered=$((answered + 1))
    done
    if ! grep -q '^exit: 0$' "$tmp/lsp.out"; then
        fail "deep_lsp_$name" "server: $(grep '^exit' "$tmp/lsp.out") $(head -c 300 "$tmp/lsp.err")"
    elif [ "$answered" -ne 9 ]; then
        fail "deep_lsp_$name" "$answered of 9 requests answered"
    elif [ $name = huge ] && ! grep -q '"code":"E0217"' "$tmp/lsp.out"; then
        fail "deep_lsp_$name" "no E0217 published"
    else
        pass "deep_lsp_$name"
    fi
done
exit 0
