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
cases="emacs_eglot_diagnostics emacs_eglot_hover emacs_eglot_definition emacs_eglot_formatting
emacs_eglot_completion"
skip() {
    for c in $cases; do echo "SKIP: $c: $1"; done
    exit 0
}
command -v emacs >/dev/null 2>&1 || skip "Emacs is not installed"
root=$(pwd)
tmp=$(mktemp -d) || exit 1
trap '[ -n "$KEEP" ] && cat "$tmp/out" "$tmp/log"; rm -rf "$tmp"' EXIT
mkdir "$tmp/home"
# A user's Emacs: no init file, but the site start-up files that make
# Debian's elpa-eglot loadable; HOME is the test's.
HOME="$tmp/home" emacs --batch -q --eval '(require (quote eglot))' >/dev/null 2>&1 ||
    skip "eglot is not installed (Debian: elpa-eglot; built into Emacs 29)"
sed '34s/fuse C, mx, e, s, D at GLB;/fuse C, mx, e, sm, D at GLB;/' \
    examples/comet_edge_gemm_softmax.cmt >"$tmp/example.cmt"
printf 'use std.\n' >"$tmp/use.cmt"
(cd "$tmp" && HOME="$tmp/home" CMT_OUT="$tmp/out" CMT_EXAMPLE="$tmp/example.cmt" CMT_USE="$tmp/use.cmt" \
    timeout 60 emacs --batch -q -l "$root/docs/editors/emacs/cmt-mode.el" \
    --eval "(setq cmt-cmtc-program \"$CMTC\")" \
    -l "$root/tests/editors/eglot_check.el") >"$tmp/log" 2>&1
rc=$?
if [ ! -f "$tmp/out" ]; then
    for c in $cases; do
        echo "FAIL: $c: Emacs wrote nothing (exit $rc): $(tail -c 300 "$tmp/log" | tr '\n' ' ')"
    done
    exit 1
fi
if grep -q '^error ' "$tmp/out"; then
    echo "FAIL: emacs_eglot_run: $(grep '^error ' "$tmp/out")"
fi
# expect NAME PATTERN WHAT PREFIX: PASS when a whole line matches PATTERN.
expect() {
    if grep -Eqx "$2" "$tmp/out"; then
        echo "PASS: $1"
    else
        echo "FAIL: $1: want $3; Emacs shows: $(grep -E "^($4)" "$tmp/out" | head -3 | tr '\n' '|')"
    fi
}
expect emacs_eglot_diagnostics 'diag 34:18 eglot-error cmtc \[E0308\]: op `gemm_softmax` has no statement `sm`' \
    'E0308 at 34:18' 'managed|diag|no diag'
expect emacs_eglot_hover 'hover .*arch comet_edge.*' 'a hover naming the arch' hover
expect emacs_eglot_definition "definition $root/stdlib/std/ops/gemm_softmax\\.cmt:[0-9]+" \
    'the op in the standard library' definition
if grep -qx 'line33   tile GLB: m 64;' "$tmp/out" && grep -qx 'formatted t' "$tmp/out"; then
    echo "PASS: emacs_eglot_formatting"
else
    echo "FAIL: emacs_eglot_formatting: $(grep -E '^(line33|formatted)' "$tmp/out" | tr '\n' '|')"
fi
expect emacs_eglot_completion 'use_line use std\.ops\.gemm' '`use std.ops.gemm`' 'use|completion'
exit 0
