#!/bin/sh
# Outputs are written whole or not at all: `compile -o OUT` and
# `--emit-lp FILE` go through a temporary file renamed into place, so a
# failed compile (exit 1 or 3) or a failed write leaves the old OUT as it
# was and no temporary file behind; neither may name an input file (by
# device and inode: a link or another spelling is the same file); a full
# device (/dev/full) is an error, exit 2, not a silent success; writing to
# a device that works (/dev/stdout) still works.
CMTC=${CMTC:-build/cmtc}
case $CMTC in /*) ;; *) CMTC=$(pwd)/$CMTC ;; esac
RUN=${RUN_CMTC:-$CMTC}
root=$(pwd)
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; }
cd "$tmp" || exit 1

cp "$root/tests/golden/compile_worked.cmt" good.cmt
printf 'use "good.cmt";\nconst Z = 1;\n' >uses_good.cmt
printf 'const A = ;\n' >broken.cmt
cat >infeasible.cmt <<EOF
use std.ops.gemm;
use "$root/tests/opt/archs.cmt";
mapping big for gemm<M = 64, N = 64, K = 64> on tiny_single {
  tile SRAM: m 64, n 64, k ?;
}
EOF
holes=$root/tests/golden/opt_model.cmt

# no_temp NAME: no temporary file is left in this folder
no_temp() {
    leftover=$(ls -a | grep '\.cmtc-' | head -3)
    if [ -n "$leftover" ]; then fail "$1" "temporary files left: $leftover"; else pass "$1"; fi
}

# kept NAME STATUS WANTED FILE CONTENT: exit WANTED, FILE still CONTENT
kept() {
    if [ "$2" -ne "$3" ]; then
        fail "$1" "exit $2, expected $3: $(head -c 300 err)"
    elif [ "$(cat "$4")" != "$5" ]; then
        fail "$1" "$4 changed: $(head -c 100 "$4")"
    else
        pass "$1"
    fi
}

# --- a failed compile leaves OUT as it was (before: empty)
echo previous >out.txt
$RUN compile broken.cmt -o out.txt >/dev/null 2>err
kept output_kept_on_errors $? 1 out.txt previous
$RUN compile infeasible.cmt -o out.txt >/dev/null 2>err
kept output_kept_on_solver_failure $? 3 out.txt previous
if grep -q "'out.txt' is left as it was" err; then
    pass output_kept_is_said
else
    fail output_kept_is_said "$(head -c 300 err)"
fi
no_temp output_failed_leaves_no_temp

# --- a successful compile replaces OUT, keeping its permissions
chmod 640 out.txt
if $RUN compile good.cmt -o out.txt 2>err && grep -q '^mapping worked' out.txt &&
    [ "$(stat -c %a out.txt)" = 640 ]; then
    pass output_replaced
else
    fail output_replaced "$(head -c 300 err) mode $(stat -c %a out.txt)"
fi
# a new file gets the mode a plain create would (umask 027: 640)
if (umask 027 && $RUN compile good.cmt -o new.txt 2>err) && [ "$(stat -c %a new.txt)" = 640 ]; then
    pass output_new_file_mode
else
    fail output_new_file_mode "mode $(stat -c %a new.txt 2>&1)"
fi
# through a symbolic link the file it names is replaced, the link stays
ln -s out.txt link.txt
echo previous >out.txt
if $RUN compile good.cmt -o link.txt 2>err && [ -L link.txt ] && grep -q '^mapping worked' out.txt; then
    pass output_through_link
else
    fail output_through_link "$(head -c 300 err)"
fi
no_temp output_success_leaves_no_temp

# --- -o and --emit-lp never overwrite an input (before: the source was lost)
cp good.cmt saved.cmt
ln good.cmt hard.cmt
ln -s good.cmt soft.cmt
for target in good.cmt ./good.cmt "$tmp/good.cmt" hard.cmt soft.cmt; do
    label=${target#"$tmp/"}; [ "$label" = "$target" ] || label="absolute $label"
    $RUN compile good.cmt -o "$target" >/dev/null 2>err
    status=$?
    if [ $status -eq 2 ] && cmp -s good.cmt saved.cmt && grep -q 'is the input file' err; then
        pass "output_refuses_input $label"
    else
        fail "output_refuses_input $label" "exit $status: $(head -c 300 err)"
    fi
done
$RUN compile uses_good.cmt -o good.cmt >/dev/null 2>err
status=$?
if [ $status -eq 2 ] && cmp -s good.cmt saved.cmt; then
    pass output_refuses_used_module
else
    fail output_refuses_used_module "exit $status: $(head -c 300 err)"
fi
$RUN compile - -o good.cmt <good.cmt >/dev/null 2>err
status=$?
if [ $status -eq 2 ] && cmp -s good.cmt saved.cmt; then
    pass output_refuses_redirected_stdin
else
    fail output_refuses_redirected_stdin "exit $status: $(head -c 300 err)"
fi
cp "$holes" holes.cmt
cp holes.cmt holes_saved.cmt
$RUN compile holes.cmt --emit-lp holes.cmt -o /dev/null >/dev/null 2>err
status=$?
if [ $status -eq 2 ] && cmp -s holes.cmt holes_saved.cmt && grep -q "\-\-emit-lp 'holes.cmt' is the input" err; then
    pass emit_lp_refuses_input
else
    fail emit_lp_refuses_input "exit $status: $(head -c 300 err)"
fi
$RUN compile holes.cmt --emit-lp same.txt -o same.txt >/dev/null 2>err
if [ $? -eq 2 ] && grep -q 'name the same file' err; then
    pass output_and_emit_lp_differ
else
    fail output_and_emit_lp_differ "$(head -c 300 err)"
fi

# --- a full device is an error (before: --emit-lp /dev/full exited 0)
if [ -w /dev/full ]; then
    $RUN compile holes.cmt --emit-lp /dev/full -o /dev/null >/dev/null 2>err
    status=$?
    if [ $status -eq 2 ] && grep -q 'E0374.*/dev/full: No space left on device' err; then
        pass emit_lp_dev_full
    else
        fail emit_lp_dev_full "exit $status: $(head -c 300 err)"
    fi
    $RUN compile good.cmt -o /dev/full >/dev/null 2>err
    status=$?
    if [ $status -eq 2 ] && grep -q "cannot write '/dev/full': No space left on device" err; then
        pass output_dev_full
    else
        fail output_dev_full "exit $status: $(head -c 300 err)"
    fi
    $RUN compile good.cmt --format json >/dev/full 2>err
    status=$?
    if [ $status -eq 2 ] && grep -q 'cannot write standard output: No space left on device' err; then
        pass stdout_dev_full
    else
        fail stdout_dev_full "exit $status: $(head -c 300 err)"
    fi
    $RUN fmt - <good.cmt >/dev/full 2>err
    status=$?
    if [ $status -eq 2 ] && grep -q 'cannot write standard output' err; then
        pass fmt_stdout_dev_full
    else
        fail fmt_stdout_dev_full "exit $status: $(head -c 300 err)"
    fi
    # every command, not only compile and fmt: diagnostics, explain, help
    # and --version had exited 1 or 0 with nothing written
    printf "const X = 1 zz;\n" >bad.cmt
    for args in "check bad.cmt --diagnostics-output stdout" "explain E0212" "help compile" \
        "--version"; do
        $RUN $args >/dev/full 2>err
        status=$?
        if [ $status -eq 2 ] && [ "$(grep -c 'cannot write standard output' err)" -eq 1 ]; then
            pass "stdout_dev_full: $args"
        else
            fail "stdout_dev_full: $args" "exit $status: $(head -c 300 err)"
        fi
    done
else
    echo "SKIP: output_dev_full: /dev/full is not available"
fi

# --- devices that work are written directly
$RUN compile good.cmt >plain.txt 2>/dev/null
if $RUN compile good.cmt -o /dev/stdout >via_dev.txt 2>err && cmp -s plain.txt via_dev.txt; then
    pass output_dev_stdout
else
    fail output_dev_stdout "$(head -c 300 err)"
fi
if $RUN compile holes.cmt --emit-lp /dev/stdout -o /dev/null >lp.txt 2>err && grep -q '^min:' lp.txt; then
    pass emit_lp_dev_stdout
else
    fail emit_lp_dev_stdout "$(head -c 300 err)"
fi
if $RUN compile holes.cmt --emit-lp model.lp -o /dev/null 2>err && grep -q '^min:' model.lp; then
    pass emit_lp_file
else
    fail emit_lp_file "$(head -c 300 err)"
fi
$RUN compile good.cmt -o no_such_folder/out.txt >/dev/null 2>err
if [ $? -eq 2 ] && grep -q "cannot write 'no_such_folder/out.txt': No such file or directory" err; then
    pass output_missing_folder
else
    fail output_missing_folder "$(head -c 300 err)"
fi
no_temp output_leaves_no_temp
exit 0
