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
. tests/editors/lib.sh
editor=Vim
cases="vim_ale_diagnostics vim_ale_hover vim_ale_definition vim_ale_fix vim_ale_code_action vim_ale_completion"
command -v vim >/dev/null 2>&1 || skip_all "Vim is not installed"
command -v python3 >/dev/null 2>&1 || skip_all "python3 is not installed (it gives Vim a terminal)"
editor_workdir
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
    skip_all "ALE is not installed (Debian: vim-ale)"
(cd "$tmp" && HOME="$tmp" CMT_OUT="$out" CMT_USE="$tmp/use.cmt" \
    python3 "$root/tests/editors/pty_run.py" 60 "$tmp/screen" \
    vim -N -u "$tmp/vimrc" -i NONE -n example.cmt -c "source $root/tests/editors/ale_check.vim")
rc=$?
[ -f "$out" ] || fail_all "Vim wrote nothing (exit $rc): $(tail -c 300 "$tmp/screen" | tr -c '[:print:]' ' ')"
grep -Eq '^(error|timeout) ' "$out" && echo "FAIL: vim_ale_run: $(grep -E '^(error|timeout) ' "$out")"
expect vim_ale_diagnostics 'E0308 at 34:18' 'diag|timeout' \
    'diag 34:18 E E0308 op `gemm_softmax` has no statement `sm`.*'
expect vim_ale_hover 'a hover naming the arch' 'hover|timeout' 'hover .*arch comet_edge.*'
expect vim_ale_definition 'the op in the standard library' 'definition|timeout' \
    "definition $root/stdlib/std/ops/gemm_softmax\\.cmt:[0-9]+"
expect vim_ale_fix 'line 33 put back, the buffer as it was' 'line33|formatted|timeout' \
    'line33   tile GLB: m 64;' 'formatted true'
expect vim_ale_code_action 'ALECodeAction to replace `sm` with `s`' 'line34|code actions|timeout' \
    'line34   fuse C, mx, e, s, D at GLB;'
expect vim_ale_completion '`use std.ops.gemm`, no error' 'use_|completion|errmsg|timeout' \
    'use_omnifunc ale#completion#OmniFunc' 'use_line use std\.ops\.gemm' 'errmsg '
exit 0
