#!/bin/sh
# A real editor: Vim with ALE and the documented recipe
# (docs/editors/vim/cmt.vim), in a pseudo-terminal, opens an example with a
# misspelt statement on line 34 and, through ALE and the real `cmtc lsp`
# (tests/editors/ale_check.vim): ALE lists the diagnostics at that line
# with their codes; :ALEHover answers; :ALEGoToDefinition goes into the
# standard library; :ALEFix (cmtc fmt) puts a mangled line back;
# :ALECodeAction offers the quick fix for the misspelt name and applies it;
# <C-x><C-o> after `use std.` inserts `use std.ops.gemm`.
CMTC=${CMTC:-build/cmtc}
case $CMTC in /*) ;; *) CMTC=$(pwd)/$CMTC ;; esac
cases="vim_ale_diagnostics vim_ale_hover vim_ale_definition vim_ale_fix vim_ale_code_action vim_ale_completion"
skip() {
    for c in $cases; do echo "SKIP: $c: $1"; done
    exit 0
}
command -v vim >/dev/null 2>&1 || skip "Vim is not installed"
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed (it gives Vim a terminal)"
root=$(pwd)
tmp=$(mktemp -d) || exit 1
trap '[ -n "$KEEP" ] && cat "$tmp/out"; rm -rf "$tmp"' EXIT
# A user's vimrc: ALE loaded (Debian's vim-ale is an optional package), the
# recipe sourced.
cat >"$tmp/vimrc" <<VIM
set nocompatible
let g:cmtc_path = '$CMTC'
packadd! ale
source $root/docs/editors/vim/cmt.vim
filetype plugin indent on
syntax on
VIM
HOME="$tmp" vim -N -u "$tmp/vimrc" -i NONE -es -c 'if exists("*ale#linter#Define") || !empty(globpath(&rtp, "autoload/ale.vim")) | qa! | else | cq | endif' </dev/null >/dev/null 2>&1 ||
    skip "ALE is not installed (Debian: vim-ale)"
sed '34s/fuse C, mx, e, s, D at GLB;/fuse C, mx, e, sm, D at GLB;/' \
    examples/comet_edge_gemm_softmax.cmt >"$tmp/example.cmt"
printf 'use std.\n' >"$tmp/use.cmt"
(cd "$tmp" && HOME="$tmp" CMT_OUT="$tmp/out" CMT_USE="$tmp/use.cmt" \
    python3 "$root/tests/editors/pty_run.py" 60 "$tmp/screen" \
    vim -N -u "$tmp/vimrc" -i NONE -n example.cmt -c "source $root/tests/editors/ale_check.vim")
rc=$?
if [ ! -f "$tmp/out" ]; then
    for c in $cases; do
        echo "FAIL: $c: Vim wrote nothing (exit $rc): $(tail -c 300 "$tmp/screen" | tr -c '[:print:]' ' ')"
    done
    exit 1
fi
if grep -Eq '^(error|timeout) ' "$tmp/out"; then
    echo "FAIL: vim_ale_run: $(grep -E '^(error|timeout) ' "$tmp/out")"
fi
# expect NAME PATTERN WHAT PREFIX: PASS when a whole line matches PATTERN.
expect() {
    if grep -Eqx "$2" "$tmp/out"; then
        echo "PASS: $1"
    else
        echo "FAIL: $1: want $3; Vim shows: $(grep -E "^($4)" "$tmp/out" | head -3 | tr '\n' '|')"
    fi
}
expect vim_ale_diagnostics 'diag 34:18 E E0308 op `gemm_softmax` has no statement `sm`.*' \
    'E0308 at 34:18' 'diag|timeout'
expect vim_ale_hover 'hover .*arch comet_edge.*' 'a hover naming the arch' 'hover|timeout'
expect vim_ale_definition "definition $root/stdlib/std/ops/gemm_softmax\\.cmt:[0-9]+" \
    'the op in the standard library' 'definition|timeout'
if grep -qx 'line33   tile GLB: m 64;' "$tmp/out" && grep -qx 'formatted true' "$tmp/out"; then
    echo "PASS: vim_ale_fix"
else
    echo "FAIL: vim_ale_fix: $(grep -E '^(line33|formatted|timeout)' "$tmp/out" | tr '\n' '|')"
fi
expect vim_ale_code_action 'line34   fuse C, mx, e, s, D at GLB;' 'ALECodeAction to replace `sm` with `s`' \
    'line34|code actions|timeout'
if grep -qx 'use_omnifunc ale#completion#OmniFunc' "$tmp/out" && grep -qx 'use_line use std.ops.gemm' "$tmp/out" &&
    grep -qx 'errmsg ' "$tmp/out"; then
    echo "PASS: vim_ale_completion"
else
    echo "FAIL: vim_ale_completion: want \`use std.ops.gemm\`: $(grep -E '^(use_|completion|errmsg|timeout)' "$tmp/out" | tr '\n' '|')"
fi
exit 0
