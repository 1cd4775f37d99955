#!/bin/sh
# A real editor: Neovim --headless with the documented configuration
# (docs/editors/nvim/cmt.lua as the init file) opens an example with a
# misspelt statement on line 34 and, through the real `cmtc lsp`
# (tests/editors/nvim_check.lua): the diagnostics arrive at that line with
# their codes; 'omnifunc' is set and inlay hints are enabled on attach;
# hover and go to definition (into the standard library) answer;
# formatting puts a mangled line back; <C-x><C-o> after `use std.` in
# another buffer inserts the chosen module, `use std.ops.gemm`.
CMTC=${CMTC:-build/cmtc}
case $CMTC in /*) ;; *) CMTC=$(pwd)/$CMTC ;; esac
cases="nvim_diagnostics nvim_omnifunc nvim_inlay_hints nvim_hover nvim_definition nvim_formatting
nvim_omnifunc_completion"
if ! command -v nvim >/dev/null 2>&1; then
    for c in $cases; do echo "SKIP: $c: Neovim is not installed"; done
    exit 0
fi
root=$(pwd)
tmp=$(mktemp -d) || exit 1
trap '[ -n "$KEEP" ] && cat "$tmp/out" "$tmp/log"; rm -rf "$tmp"' EXIT
sed '34s/fuse C, mx, e, s, D at GLB;/fuse C, mx, e, sm, D at GLB;/' \
    examples/comet_edge_gemm_softmax.cmt >"$tmp/example.cmt"
printf 'use std.\n' >"$tmp/use.cmt"
# Neovim's own files (shada, logs) go to the folder of the test.
(cd "$tmp" && XDG_CONFIG_HOME="$tmp/config" XDG_DATA_HOME="$tmp/data" XDG_STATE_HOME="$tmp/state" \
    XDG_CACHE_HOME="$tmp/cache" CMT_OUT="$tmp/out" CMT_USE="$tmp/use.cmt" \
    timeout 60 nvim --headless -i NONE \
    --cmd "luafile $root/tests/editors/nvim_prelude.lua" \
    --cmd "let g:cmtc_path = '$CMTC'" \
    -u "$root/docs/editors/nvim/cmt.lua" \
    example.cmt \
    -c "luafile $root/tests/editors/nvim_check.lua") >"$tmp/log" 2>&1
rc=$?
if [ ! -f "$tmp/out" ]; then
    for c in $cases; do
        echo "FAIL: $c: Neovim wrote nothing (exit $rc): $(head -c 300 "$tmp/log" | tr '\n' ' ')"
    done
    exit 1
fi
# expect NAME PATTERN WHAT: PASS when a line of the output matches the
# extended regular expression PATTERN (whole line).
expect() {
    if grep -Eqx "$2" "$tmp/out"; then
        echo "PASS: $1"
    else
        echo "FAIL: $1: want $3; Neovim shows: $(grep -E "^(${4:-$1})" "$tmp/out" | head -3 | tr '\n' '|')"
    fi
}
expect nvim_diagnostics 'diag 34:18 E0308 op `gemm_softmax` has no statement `sm`' \
    'E0308 at 34:18' 'diag|no diag'
expect nvim_omnifunc 'omnifunc v:lua\.vim\.lsp\.omnifunc' "'omnifunc' set to v:lua.vim.lsp.omnifunc" omnifunc
expect nvim_inlay_hints 'inlay true( bufnr=true)?' 'hints enabled for the buffer' inlay
expect nvim_hover 'hover .*comet_edge.*' 'a hover naming the arch' hover
expect nvim_definition "definition $root/stdlib/std/ops/gemm_softmax\\.cmt:[0-9]+" \
    'the op in the standard library' definition
if grep -qx 'line33   tile GLB: m 64;' "$tmp/out" && grep -qx 'formatted true' "$tmp/out"; then
    echo "PASS: nvim_formatting"
else
    echo "FAIL: nvim_formatting: $(grep -E '^(line33|formatted)' "$tmp/out" | tr '\n' '|')"
fi
if grep -qx 'use_omnifunc v:lua.vim.lsp.omnifunc' "$tmp/out" && grep -qx 'use_line use std.ops.gemm' "$tmp/out" &&
    grep -qx 'errmsg ' "$tmp/out"; then
    echo "PASS: nvim_omnifunc_completion"
else
    echo "FAIL: nvim_omnifunc_completion: want \`use std.ops.gemm\`: $(grep -E '^(use_|completion|errmsg)' "$tmp/out" | tr '\n' '|')"
fi
exit 0
