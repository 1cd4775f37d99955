#!/bin/sh
# The runner counts a skipped case as skipped, never as passed: a suite
# whose tool is missing (Neovim, python3) prints `SKIP: reason`, and
# tests/run.sh adds `, N skipped` to its last line.  Checked on a copy of
# the runner over two made-up suites, and on the real suites with a PATH
# where their tools cannot be found.
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; }
sh=$(command -v sh)

mkdir -p "$tmp/tree/tests/suites"
cp tests/run.sh "$tmp/tree/tests/"
printf 'echo "PASS: one"\necho "SKIP: two: a tool is missing"\n' >"$tmp/tree/tests/suites/a.sh"
printf 'echo "PASS: three"\n' >"$tmp/tree/tests/suites/b.sh"
ONLY=suites "$sh" "$tmp/tree/tests/run.sh" >"$tmp/out" 2>&1
status=$?
last=$(tail -n 1 "$tmp/out")
if [ $status -eq 0 ] && [ "$last" = "2 passed, 0 failed, 1 skipped" ] &&
    grep -q '^SKIP: two: a tool is missing$' "$tmp/out"; then
    pass runner_counts_skipped
else
    fail runner_counts_skipped "exit $status, last line '$last'"
fi
rm "$tmp/tree/tests/suites/a.sh"
ONLY=suites "$sh" "$tmp/tree/tests/run.sh" >"$tmp/out" 2>&1
last=$(tail -n 1 "$tmp/out")
if [ "$last" = "1 passed, 0 failed" ]; then
    pass runner_without_skips
else
    fail runner_without_skips "last line '$last'"
fi

# the real suites, their tools out of reach
for suite in nvim lsp optimizer; do
    PATH=/nonexistent "$sh" "tests/suites/$suite.sh" >"$tmp/out" 2>&1
    if grep -q '^SKIP: ' "$tmp/out" && ! grep -q '^PASS: \|^FAIL: ' "$tmp/out"; then
        pass "${suite}_skips_without_its_tool"
    else
        fail "${suite}_skips_without_its_tool" "$(head -c 200 "$tmp/out")"
    fi
done
exit 0
