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
# Completion in a document of 6000 constants offers the first 5000 names
# and says the list is incomplete (it had offered all, in time quadratic in
# their number: 35 s for 200 000).
if python3 - "$CMTC" <<'PY'
import json, subprocess, sys
proc = subprocess.Popen([sys.argv[1], "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def send(msg):
    body = json.dumps(msg).encode()
    proc.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    proc.stdin.flush()
def receive(want):
    while True:
        length = 0
        while True:
            line = proc.stdout.readline()
            if not line:
                sys.exit("server closed")
            if line in (b"\r\n", b"\n"):
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        msg = json.loads(proc.stdout.read(length))
        if msg.get("id") == want:
            return msg
text = "".join("const C%d = %d;\n" % (i, i) for i in range(6000))
uri = "file:///tmp/cmtc_completion_many.cmt"
send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
      "params": {"processId": None, "rootUri": None, "capabilities": {}}})
receive(1)
send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
send({"jsonrpc": "2.0", "method": "textDocument/didOpen",
      "params": {"textDocument": {"uri": uri, "languageId": "cmt", "version": 1, "text": text}}})
send({"jsonrpc": "2.0", "id": 2, "method": "textDocument/completion",
      "params": {"textDocument": {"uri": uri}, "position": {"line": 5, "character": 0}}})
r = receive(2)["result"]
send({"jsonrpc": "2.0", "id": 3, "method": "shutdown"})
receive(3)
send({"jsonrpc": "2.0", "method": "exit"})
proc.wait(timeout=30)
names = [i["label"] for i in r["items"]]
ok = r["isIncomplete"] is True and len(names) == 5000 and len(set(names)) == 5000
sys.exit(0 if ok else "incomplete %s, %d items" % (r["isIncomplete"], len(names)))
PY
then
    echo "PASS: lsp_completion_many_names"
else
    echo "FAIL: lsp_completion_many_names"
    status=1
fi
# Inlay hint values against cmtc compile's complete mappings.
python3 tests/lsp/check_inlay.py "$CMTC" || status=1
# The editor set-up files (VS Code extension, Neovim snippet).
python3 tests/lsp/check_editors.py || status=1
exit $status
