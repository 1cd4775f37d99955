#!/bin/sh
# A real editor: Emacs in batch mode with the documented recipe
# (docs/editors/emacs/cmt-mode.el, eglot-ensure on cmt-mode-hook) opens an
# example with a misspelt statement on line 34 and, through eglot and the
# real `cmtc lsp` (tests/editors/eglot_check.el): Flymake shows the
# diagnostics at that line with their codes; ElDoc's hover answers; M-.
# goes into the standard library; eglot-format-buffer puts a mangled line
# back; completion-at-point after `use std.` gives `use std.ops.gemm`.
CMTC=${CMTC:-build/cmtc}
case $CMTC in /*) ;; *) CMTC=$(pwd)/$CMTC ;; esac
. tests/editors/lib.sh
editor=Emacs
cases="emacs_eglot_diagnostics emacs_eglot_hover emacs_eglot_definition emacs_eglot_formatting
emacs_eglot_completion"
command -v emacs >/dev/null 2>&1 || skip_all "Emacs is not installed"
editor_workdir
mkdir "$tmp/home"
# A user's Emacs: no init file, but the site start-up files that make
# Debian's elpa-eglot loadable; HOME is the test's.
HOME="$tmp/home" emacs --batch -q --eval '(require (quote eglot))' >/dev/null 2>&1 ||
    skip_all "eglot is not installed (Debian: elpa-eglot; built into Emacs 29)"
(cd "$tmp" && HOME="$tmp/home" CMT_OUT="$out" CMT_EXAMPLE="$tmp/example.cmt" CMT_USE="$tmp/use.cmt" \
    timeout 60 emacs --batch -q -l "$root/docs/editors/emacs/cmt-mode.el" \
    --eval "(setq cmt-cmtc-program \"$CMTC\")" \
    -l "$root/tests/editors/eglot_check.el") >"$tmp/log" 2>&1
rc=$?
[ -f "$out" ] || fail_all "Emacs wrote nothing (exit $rc): $(tail -c 300 "$tmp/log" | tr '\n' ' ')"
grep -q '^error ' "$out" && echo "FAIL: emacs_eglot_run: $(grep '^error ' "$out")"
expect emacs_eglot_diagnostics 'E0308 at 34:18' 'managed|diag|no diag|error' \
    'diag 34:18 eglot-error cmtc \[E0308\]: op `gemm_softmax` has no statement `sm`'
expect emacs_eglot_hover 'a hover naming the arch' 'hover|error' 'hover .*arch comet_edge.*'
expect emacs_eglot_definition 'the op in the standard library' 'definition|error' \
    "definition $root/stdlib/std/ops/gemm_softmax\\.cmt:[0-9]+"
expect emacs_eglot_formatting 'line 33 put back, the buffer as it was' 'line33|formatted|error' \
    'line33   tile GLB: m 64;' 'formatted t'
expect emacs_eglot_completion '`use std.ops.gemm`' 'use|completion|error' 'use_line use std\.ops\.gemm'
exit 0
