#!/bin/sh
# cmtc fmt: expected layouts (tests/fmt/NAME.cmt -> NAME.expected),
# idempotence on every example and standard library file, unchanged meaning
# (the IR dump of every mapping, and the check result, before and after
# formatting), --check exit codes, in-place rewriting, standard input, and
# files with syntax errors left alone.
CMTC=${CMTC:-build/cmtc}
case $CMTC in /*) ;; *) CMTC=$(pwd)/$CMTC ;; esac
# fmt itself runs under valgrind when the runner asks (RUN_CMTC)
FMT=${RUN_CMTC:-$CMTC}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
status=0
pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; status=1; }

# --- expected layouts, and fmt of the expected layout changes nothing
for in in tests/fmt/*.cmt; do
    name=$(basename "$in" .cmt)
    exp=tests/fmt/$name.expected
    [ -f "$exp" ] || continue
    if ! $FMT fmt - <"$in" >"$tmp/out" 2>"$tmp/err"; then
        fail "fmt_$name" "exit $? ($(head -c 200 "$tmp/err"))"
    elif ! cmp -s "$tmp/out" "$exp"; then
        fail "fmt_$name" "differs from $exp: $(diff "$exp" "$tmp/out" | head -4 | tr '\n' ' ')"
    else
        pass "fmt_$name"
    fi
    if $FMT fmt - <"$exp" >"$tmp/out2" 2>/dev/null && cmp -s "$tmp/out2" "$exp"; then
        pass "fmt_${name}_idempotent"
    else
        fail "fmt_${name}_idempotent" "fmt of $exp is not $exp"
    fi
done

# --- CR LF line ends (block comments too) become LF: same layout
sed 's/$/\r/' tests/fmt/comments.cmt >"$tmp/crlf.cmt"
if $FMT fmt - <"$tmp/crlf.cmt" >"$tmp/out" 2>/dev/null && cmp -s "$tmp/out" tests/fmt/comments.expected; then
    pass fmt_crlf
else
    fail fmt_crlf "a CR LF copy of comments.cmt does not format to comments.expected"
fi

# --- every example and standard library file: idempotent, same meaning.
# Copies are formatted in place (so relative `use` and the standard
# library resolve among the formatted files) and compared with the
# originals: the check exit code, and the IR dump after the last pass of
# every complete mapping (mappings with holes go through the optimizer,
# whose time limit makes the result depend on the machine's load).
mkdir -p "$tmp/orig" "$tmp/fmt"
cp -R examples stdlib "$tmp/orig/"
cp -R examples stdlib "$tmp/fmt/"
files=$(cd "$tmp/orig" && find examples stdlib -name '*.cmt' | sort)
for f in $files; do
    n=$(echo "$f" | tr '/.' '__')
    if ! $FMT fmt "$tmp/fmt/$f" 2>"$tmp/err"; then
        fail "fmt_meaning_$n" "fmt failed: $(head -c 200 "$tmp/err" | tr '\n' ' ')"
        continue
    fi
    cp "$tmp/fmt/$f" "$tmp/once"
    $FMT fmt "$tmp/once" 2>/dev/null
    if cmp -s "$tmp/once" "$tmp/fmt/$f"; then
        pass "fmt_idempotent_$n"
    else
        fail "fmt_idempotent_$n" "fmt(fmt($f)) != fmt($f): $(diff "$tmp/fmt/$f" "$tmp/once" | head -3 | tr '\n' ' ')"
    fi
done
for f in $files; do
    n=$(echo "$f" | tr '/.' '__')
    (cd "$tmp/orig" && CMT_STDLIB="$tmp/orig/stdlib" "$CMTC" check "$f" >/dev/null 2>&1)
    c1=$?
    (cd "$tmp/fmt" && CMT_STDLIB="$tmp/fmt/stdlib" "$CMTC" check "$f" >/dev/null 2>&1)
    c2=$?
    if [ "$c1" != "$c2" ]; then
        fail "fmt_meaning_$n" "cmtc check exits $c1 before formatting and $c2 after"
        continue
    fi
    # complete mappings (no `?`): the optimizer's time limit would make the
    # others depend on the machine's load
    maps=$(awk '/^ *mapping [A-Za-z_][A-Za-z0-9_]* +for /{name=$2; body=""; open=1} open{body=body $0} open && /}/{if (body !~ /\?/) print name; open=0}' "$tmp/orig/$f")
    if [ -n "$maps" ] && [ "$c1" = 0 ]; then
        : >"$tmp/ir1"
        : >"$tmp/ir2"
        for m in $maps; do
            (cd "$tmp/orig" && CMT_STDLIB="$tmp/orig/stdlib" "$CMTC" compile "$f" -m "$m" \
                --dump-ir=cost -o /dev/null >>"$tmp/ir1" 2>&1; echo "exit $?" >>"$tmp/ir1")
            (cd "$tmp/fmt" && CMT_STDLIB="$tmp/fmt/stdlib" "$CMTC" compile "$f" -m "$m" \
                --dump-ir=cost -o /dev/null >>"$tmp/ir2" 2>&1; echo "exit $?" >>"$tmp/ir2")
        done
        if ! cmp -s "$tmp/ir1" "$tmp/ir2"; then
            fail "fmt_meaning_$n" "IR dump changed: $(diff "$tmp/ir1" "$tmp/ir2" | head -3 | tr '\n' ' ')"
        elif ! grep -q '^; schedule' "$tmp/ir1"; then
            fail "fmt_meaning_$n" "no IR dump to compare: $(head -c 150 "$tmp/ir1" | tr '\n' ' ')"
        else
            pass "fmt_meaning_$n"
        fi
    else
        pass "fmt_meaning_$n"
    fi
done

# --- --check: 0 when formatted, 1 and the file's name when not; no writes
cp tests/fmt/spacing.expected "$tmp/good.cmt"
cp tests/fmt/spacing.cmt "$tmp/bad.cmt"
$FMT fmt --check "$tmp/good.cmt" >"$tmp/out" 2>&1
rc=$?
if [ $rc = 0 ] && [ ! -s "$tmp/out" ]; then pass fmt_check_clean; else fail fmt_check_clean "exit $rc, output '$(cat "$tmp/out")'"; fi
$FMT fmt --check "$tmp/good.cmt" "$tmp/bad.cmt" >"$tmp/out" 2>&1
rc=$?
if [ $rc = 1 ] && [ "$(cat "$tmp/out")" = "$tmp/bad.cmt" ] && cmp -s "$tmp/bad.cmt" tests/fmt/spacing.cmt; then
    pass fmt_check_dirty
else
    fail fmt_check_dirty "exit $rc, output '$(cat "$tmp/out")' (want 1 and the file name, file untouched)"
fi

# --- in place: rewritten, permissions kept; a formatted file is not touched
chmod 640 "$tmp/bad.cmt"
$FMT fmt "$tmp/bad.cmt" >"$tmp/out" 2>&1
rc=$?
perm=$(stat -c %a "$tmp/bad.cmt")
if [ $rc = 0 ] && cmp -s "$tmp/bad.cmt" tests/fmt/spacing.expected && [ "$perm" = 640 ] && [ ! -s "$tmp/out" ]; then
    pass fmt_in_place
else
    fail fmt_in_place "exit $rc, mode $perm, output '$(head -c 100 "$tmp/out")'"
fi
touch -d '2001-01-01' "$tmp/good.cmt"
$FMT fmt "$tmp/good.cmt"
if [ "$(stat -c %Y "$tmp/good.cmt")" = "$(date -d 2001-01-01 +%s)" ]; then
    pass fmt_unchanged_not_written
else
    fail fmt_unchanged_not_written "an already formatted file was rewritten"
fi

# --- through a symbolic link: the file it points to is rewritten, the
# link stays a link
cp tests/fmt/blank.cmt "$tmp/target.cmt"
ln -s target.cmt "$tmp/link.cmt"
$FMT fmt "$tmp/link.cmt" >/dev/null 2>&1
if [ -L "$tmp/link.cmt" ] && cmp -s "$tmp/target.cmt" tests/fmt/blank.expected; then
    pass fmt_symlink
else
    fail fmt_symlink "the link was replaced or its target not formatted"
fi

# --- syntax errors: diagnostics, exit 1, file untouched; other files done
cp tests/fmt/syntax_error.cmt "$tmp/broken.cmt"
cp tests/fmt/blank.cmt "$tmp/blank.cmt"
$FMT fmt "$tmp/broken.cmt" "$tmp/blank.cmt" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc = 1 ] && grep -q 'error\[E0110\]' "$tmp/err" && cmp -s "$tmp/broken.cmt" tests/fmt/syntax_error.cmt &&
   cmp -s "$tmp/blank.cmt" tests/fmt/blank.expected; then
    pass fmt_syntax_error
else
    fail fmt_syntax_error "exit $rc, stderr '$(head -c 150 "$tmp/err")'"
fi
$FMT fmt --diagnostics-format json - <tests/fmt/syntax_error.cmt >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc = 1 ] && [ ! -s "$tmp/out" ] && grep -q '"E0110"' "$tmp/err"; then
    pass fmt_syntax_error_json
else
    fail fmt_syntax_error_json "exit $rc"
fi

# --- usage and I/O errors: exit 2
$FMT fmt >/dev/null 2>&1; rc=$?
[ $rc = 2 ] && pass fmt_no_files || fail fmt_no_files "exit $rc, want 2"
$FMT fmt --bogus x.cmt >/dev/null 2>&1; rc=$?
[ $rc = 2 ] && pass fmt_unknown_option || fail fmt_unknown_option "exit $rc, want 2"
$FMT fmt "$tmp/does-not-exist.cmt" >/dev/null 2>"$tmp/err"; rc=$?
if [ $rc = 2 ] && grep -q 'does-not-exist' "$tmp/err"; then pass fmt_missing_file; else fail fmt_missing_file "exit $rc"; fi
exit $status
