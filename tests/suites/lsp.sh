#!/bin/sh
# LSP transcript tests: each tests/lsp/NAME.in is sent to `cmtc lsp` by
# tests/lsp/client.py; its canonical output must equal NAME.expected.
# UPDATE=1 rewrites the expected files (review the diff before committing).
CMTC=${CMTC:-build/cmtc}
case $CMTC in /*) ;; *) CMTC=$(pwd)/$CMTC ;; esac
if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP: lsp: python3 is not installed (it runs the transcripts)"
    exit 0
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
# Under VALGRIND=1 every server runs under valgrind (errors fail the case).
if [ -n "$VALGRIND" ]; then
    export LSP_WRAPPER="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite"
    # inlay hints come from the optimizer within a time budget; valgrind is
    # about fifty times slower, so give the budget room
    export CMT_LSP_OPTIMIZE_SECONDS=120
fi
status=0
for in in tests/lsp/*.in; do
    name=$(basename "$in" .in)
    exp=tests/lsp/$name.expected
    if ! python3 tests/lsp/client.py "$CMTC" "$in" >"$tmp/out" 2>"$tmp/err"; then
        echo "FAIL: lsp_$name: client failed: $(head -c 300 "$tmp/err" | tr '\n' ' ')"
        status=1
        continue
    fi
    if [ -n "$UPDATE" ]; then
        cp "$tmp/out" "$exp"
    fi
    if [ ! -f "$exp" ]; then
        echo "FAIL: lsp_$name: no $exp"
        status=1
    elif cmp -s "$tmp/out" "$exp"; then
        echo "PASS: lsp_$name"
    else
        echo "FAIL: lsp_$name: output differs from $exp: $(diff "$exp" "$tmp/out" | head -4 | cut -c1-200 | tr '\n' ' ')"
        status=1
    fi
done
# The optimizer's worker (`cmtc lsp --worker`, backend/lsp_worker.c): a
# malformed snapshot is refused (status 2, nothing on standard output); a
# snapshot whose key names no mapping of the document is answered as such.
out=$(printf 'not a snapshot' | "$CMTC" lsp --worker 2>/dev/null)
st=$?
if [ $st -eq 2 ] && [ -z "$out" ]; then
    echo "PASS: lsp_worker_malformed"
else
    echo "FAIL: lsp_worker_malformed: status $st, output '$(echo "$out" | head -c 200)'"
    status=1
fi
out=$(python3 - "$(pwd)/tests/lsp/files/holes.cmt" <<'PY' | CMT_STDLIB=tests/lsp/files/lib "$CMTC" lsp --worker 2>/dev/null
import sys
path = sys.argv[1]
text = open(path, "rb").read()
uri = ("file://" + path).encode()
sys.stdout.buffer.write(b"cmtc-lsp-worker 1\nkey 0000000000000001 0000000000000002\n"
                        b"uri %d\n%s\nfile %d %d\n%s%s\nend\n"
                        % (len(uri), uri, len(path.encode()), len(text), path.encode(), text))
PY
)
st=$?
if [ $st -eq 0 ] && [ "$out" = '{"ok":false,"status":"changed"}' ]; then
    echo "PASS: lsp_worker_unknown_key"
else
    echo "FAIL: lsp_worker_unknown_key: status $st, output '$(echo "$out" | head -c 200)'"
    status=1
fi
# The worker says nothing on standard error when all goes well (under
# ASan, a leak or an error in it would: it ends with the server, freeing
# everything, and its exit status is reported).
if LSP_STDERR=1 python3 tests/lsp/client.py "$CMTC" tests/lsp/inlay.in >"$tmp/out" 2>"$tmp/err" &&
    cmp -s "$tmp/out" tests/lsp/inlay.expected && ! grep -q . "$tmp/err"; then
    echo "PASS: lsp_worker_quiet"
else
    echo "FAIL: lsp_worker_quiet: $(head -c 300 "$tmp/err" | tr '\n' ' ')"
    status=1
fi
# Inlay hint values against cmtc compile's complete mappings.
python3 tests/lsp/check_inlay.py "$CMTC" || status=1
# The editor set-up files (VS Code extension, Neovim snippet).
python3 tests/lsp/check_editors.py || status=1
exit $status
