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
. tests/editors/lib.sh
editor=Neovim
cases="nvim_diagnostics nvim_omnifunc nvim_inlay_hints nvim_hover nvim_definition nvim_formatting
nvim_omnifunc_completion"
command -v nvim >/dev/null 2>&1 || skip_all "Neovim is not installed"
editor_workdir
# Neovim's own files (shada, logs) go to the folder of the test.
(cd "$tmp" && XDG_CONFIG_HOME="$tmp/config" XDG_DATA_HOME="$tmp/data" XDG_STATE_HOME="$tmp/state" \
    XDG_CACHE_HOME="$tmp/cache" CMT_OUT="$out" CMT_USE="$tmp/use.cmt" \
    timeout 60 nvim --headless -i NONE \
    --cmd "luafile $root/tests/editors/nvim_prelude.lua" \
    --cmd "let g:cmtc_path = '$CMTC'" \
    -u "$root/docs/editors/nvim/cmt.lua" \
    example.cmt \
    -c "luafile $root/tests/editors/nvim_check.lua") >"$tmp/log" 2>&1
rc=$?
[ -f "$out" ] || fail_all "Neovim wrote nothing (exit $rc): $(head -c 300 "$tmp/log" | tr '\n' ' ')"
expect nvim_diagnostics 'E0308 at 34:18' 'diag|no diag' \
    'diag 34:18 E0308 op `gemm_softmax` has no statement `sm`'
expect nvim_omnifunc "'omnifunc' set to v:lua.vim.lsp.omnifunc" omnifunc 'omnifunc v:lua\.vim\.lsp\.omnifunc'
expect nvim_inlay_hints 'hints enabled for the buffer' inlay 'inlay true( bufnr=true)?'
expect nvim_hover 'a hover naming the arch' hover 'hover .*arch comet_edge.*'
expect nvim_definition 'the op in the standard library' definition \
    "definition $root/stdlib/std/ops/gemm_softmax\\.cmt:[0-9]+"
expect nvim_formatting 'line 33 put back, the buffer as it was' 'line33|formatted' \
    'line33   tile GLB: m 64;' 'formatted true'
expect nvim_omnifunc_completion '`use std.ops.gemm`, no error' 'use_|completion|errmsg' \
    'use_omnifunc v:lua\.vim\.lsp\.omnifunc' 'use_line use std\.ops\.gemm' 'errmsg '
exit 0
