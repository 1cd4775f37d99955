#!/bin/sh
# Inputs that are not ordinary source files: an endless device, standard
# input that never ends, a file past the size cap, a folder, a FIFO with
# and without a writer, a FIFO on the module path.  Each gets a clear
# message and exit 2 (E0203 for a module), within a time bound: the size
# cap is checked while reading, and opening a FIFO never waits.
CMTC=${CMTC:-build/cmtc}
case $CMTC in /*) ;; *) CMTC=$(pwd)/$CMTC ;; esac
RUN=${RUN_CMTC:-$CMTC}
tmp=$(mktemp -d) || exit 1
writer=
trap '[ -n "$writer" ] && kill "$writer" 2>/dev/null; rm -rf "$tmp"' EXIT
pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; }

# expect NAME STATUS WANTED-STATUS PATTERN FILE
expect() {
    if [ "$2" -eq 124 ]; then
        fail "$1" "still running after the time limit"
    elif [ "$2" -ne "$3" ]; then
        fail "$1" "exit $2, expected $3: $(head -c 300 "$5")"
    elif ! grep -q "$4" "$5"; then
        fail "$1" "no '$4' in: $(head -c 300 "$5")"
    else
        pass "$1"
    fi
}

cap='larger than 256 MiB, the most cmtc reads from one file'
timeout 120 $RUN check /dev/zero >"$tmp/out" 2>&1
expect input_dev_zero $? 2 "cannot read '/dev/zero': $cap" "$tmp/out"
timeout 120 $RUN check - </dev/zero >"$tmp/out" 2>&1
expect input_stdin_zero $? 2 "cannot read standard input: $cap" "$tmp/out"
timeout 120 $RUN compile - </dev/zero >"$tmp/out" 2>&1
expect input_compile_stdin_zero $? 2 "cannot read '-'\|cannot read standard input: $cap" "$tmp/out"
timeout 120 $RUN fmt - </dev/zero >"$tmp/out" 2>&1
expect input_fmt_stdin_zero $? 2 "cannot read standard input: $cap" "$tmp/out"

# a (sparse) regular file past the cap is refused before reading
if truncate -s 300M "$tmp/big.cmt" 2>/dev/null; then
    timeout 20 $RUN check "$tmp/big.cmt" >"$tmp/out" 2>&1
    expect input_file_past_cap $? 2 "big.cmt': $cap" "$tmp/out"
else
    echo "SKIP: input_file_past_cap: truncate cannot make a sparse file here"
fi

timeout 20 $RUN check "$tmp" >"$tmp/out" 2>&1
expect input_folder $? 2 "it is a folder, not a file" "$tmp/out"
timeout 20 $RUN fmt "$tmp" >"$tmp/out" 2>&1
expect input_fmt_folder $? 2 "it is a folder, not a file" "$tmp/out"

mkfifo "$tmp/pipe.cmt"
timeout 20 $RUN check "$tmp/pipe.cmt" >"$tmp/out" 2>&1
expect input_fifo_without_writer $? 2 "it is a FIFO that no process is writing to" "$tmp/out"

# with a writer (blocked opening the FIFO until a reader comes), the FIFO
# is read like standard input; retried until the writer has opened it
printf 'const A = 4;\nconst B = A * 2;\n' >"$tmp/small.cmt"
cat "$tmp/small.cmt" >"$tmp/pipe.cmt" &
writer=$!
tries=0
while :; do
    timeout 20 $RUN check "$tmp/pipe.cmt" >"$tmp/out" 2>&1
    status=$?
    grep -q 'no process is writing' "$tmp/out" && [ $tries -lt 100 ] || break
    tries=$((tries + 1))
    sleep 0.1
done
if [ $status -eq 0 ] && [ ! -s "$tmp/out" ]; then
    pass input_fifo_with_writer
else
    fail input_fifo_with_writer "exit $status: $(head -c 300 "$tmp/out")"
fi
kill "$writer" 2>/dev/null
wait "$writer" 2>/dev/null
writer=

# through a pipe (process substitution is a pipe too)
if cat "$tmp/small.cmt" | timeout 20 $RUN check /dev/stdin >"$tmp/out" 2>&1; then
    pass input_dev_stdin_pipe
else
    fail input_dev_stdin_pipe "$(head -c 300 "$tmp/out")"
fi

# a FIFO on the module path is not read (it would stall the language
# server): E0203, at once
printf 'use "pipe.cmt";\nconst C = 1;\n' >"$tmp/uses_fifo.cmt"
timeout 20 $RUN check "$tmp/uses_fifo.cmt" >"$tmp/out" 2>&1
expect input_module_fifo $? 1 "E0203" "$tmp/out"
exit 0
