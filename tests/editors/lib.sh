# lib.sh — sourced by the real-editor suites (tests/suites/nvim.sh, vim.sh,
# emacs.sh).  Each sets $cases (its case names) and $editor (the name its
# messages use); the editor writes what it shows, one fact per line, to
# $out, and the suite checks those lines with `expect`.

# skip_all REASON: every case skipped, and counted as skipped.
skip_all() {
    for c in $cases; do echo "SKIP: $c: $1"; done
    exit 0
}

# fail_all WHY: every case failed (the editor wrote nothing).
fail_all() {
    for c in $cases; do echo "FAIL: $c: $1"; done
    exit 1
}

# editor_workdir: $root (the source tree, the current folder), $tmp (a
# folder removed at exit; with KEEP set, what the editor wrote and its log
# are printed first), $out, and the fixtures in $tmp.
editor_workdir() {
    root=$(pwd)
    tmp=$(mktemp -d) || exit 1
    out=$tmp/out
    trap '[ -n "$KEEP" ] && cat "$out" "$tmp/log" 2>/dev/null; rm -rf "$tmp"' EXIT
    editor_fixtures "$tmp"
}

# editor_fixtures DIR: DIR/example.cmt, the COMET GEMM-softmax example with
# `s` misspelt `sm` on line 34 (E0308 at 34:18, with "did you mean `s`?"),
# and DIR/use.cmt, a buffer holding `use std.`.
editor_fixtures() {
    sed '34s/fuse C, mx, e, s, D at GLB;/fuse C, mx, e, sm, D at GLB;/' \
        examples/comet_edge_gemm_softmax.cmt >"$1/example.cmt"
    printf 'use std.\n' >"$1/use.cmt"
}

# expect NAME WHAT PREFIXES PATTERN...: PASS when every extended regular
# expression PATTERN matches a whole line of $out; otherwise FAIL saying
# what was wanted (WHAT) and the lines the editor wrote that begin with one
# of PREFIXES (an alternation, such as `diag|timeout`).
expect() {
    name=$1 what=$2 prefixes=$3
    shift 3
    for pattern in "$@"; do
        if ! grep -Eqx -- "$pattern" "$out"; then
            echo "FAIL: $name: want $what; $editor shows: $(grep -E "^($prefixes)" "$out" | head -4 | tr '\n' '|')"
            return
        fi
    done
    echo "PASS: $name"
}
