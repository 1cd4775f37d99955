#!/bin/sh
# Language server latency on a generated 2 000-line file: the time from
# sending a textDocument/didChange (full text) to receiving its
# publishDiagnostics, over 200 changes alternating between a clean text and
# one with an error (goal: within 10 ms).  Also a hover and a formatting
# request on the same document, and as a baseline the round trip of a
# request the server answers without work (an unknown method).  Last, an
# inlay-hint request after each of 10 versions of examples/tutorial.cmt
# (they differ by a blank line): the first waits for the optimizer's worker
# (this client has no refresh support), the others find its answer cached
# (the mapping's code did not change).  Then a busy editor's traffic
# (tests/bench/lsp_busy.py): a didChange and an inlay-hint request per
# keystroke on an example with holes and on a 2 000-line file with 40
# mappings with holes, with hovers and completions in between: diagnostics
# p50 and p99, hover, completion and inlay-hint latency.
set -eu
CMTC=${CMTC:-build/cmtc}
case $CMTC in /*) ;; *) CMTC=$(pwd)/$CMTC ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$(dirname "$0")/gen_large.py" 2000 > "$tmp/doc.cmt"
python3 - "$CMTC" "$tmp/doc.cmt" <<'PY'
import json, os, subprocess, sys, time

cmtc, path = sys.argv[1], sys.argv[2]
text = open(path, encoding="utf-8").read()
lines = text.count("\n")
# the error variant: a constant refers to a name that does not exist
broken = text.replace("const SEQ_0 = 2_048;", "const SEQ_0 = no_such_name;", 1)
assert broken != text
uri = "file://" + os.path.abspath(path)
p = subprocess.Popen([cmtc, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)

def send(msg):
    body = json.dumps(msg).encode()
    p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    p.stdin.flush()

def recv():
    length = None
    while True:
        line = p.stdout.readline()
        if not line:
            raise SystemExit("the server closed its output")
        line = line.strip()
        if not line:
            break
        k, _, v = line.decode().partition(":")
        if k.lower() == "content-length":
            length = int(v)
    return json.loads(p.stdout.read(length))

def until(pred):
    while True:
        m = recv()
        if pred(m):
            return m

TICK = os.sysconf("SC_CLK_TCK")

def cpu_ms():
    """The server's own CPU time (user + system), free of the noise other
    processes add to wall-clock latencies on a busy machine."""
    f = open("/proc/%d/stat" % p.pid).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) * 1000.0 / TICK

def stats(xs):
    xs = sorted(xs)
    med = xs[len(xs) // 2] if len(xs) % 2 else (xs[len(xs) // 2 - 1] + xs[len(xs) // 2]) / 2
    p99 = xs[min(len(xs) - 1, int(round(0.99 * (len(xs) - 1))))]
    return med, p99, xs[-1]

send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})
until(lambda m: m.get("id") == 1)
send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
    "uri": uri, "languageId": "cmt", "version": 1, "text": text}}})
first = until(lambda m: m.get("method") == "textDocument/publishDiagnostics")
assert first["params"]["diagnostics"] == [], first["params"]["diagnostics"][:1]

changes, errors_seen = [], 0
cpu = {}
c0 = cpu_ms()
for v in range(2, 202):
    t = broken if v % 2 else text
    t0 = time.perf_counter()
    send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
        "textDocument": {"uri": uri, "version": v}, "contentChanges": [{"text": t}]}})
    m = until(lambda m: m.get("method") == "textDocument/publishDiagnostics"
              and m["params"].get("version") == v)
    changes.append((time.perf_counter() - t0) * 1000)
    if m["params"]["diagnostics"]:
        errors_seen += 1
assert errors_seen == 100, errors_seen
cpu["changes"] = (cpu_ms() - c0) / len(changes)

def timed_requests(method, params, n):
    out = []
    c0 = cpu_ms()
    for i in range(n):
        t0 = time.perf_counter()
        send({"jsonrpc": "2.0", "id": 1000 + i, "method": method, "params": params})
        until(lambda m: m.get("id") == 1000 + i)
        out.append((time.perf_counter() - t0) * 1000)
    cpu[method] = (cpu_ms() - c0) / n
    return out

doc = {"textDocument": {"uri": uri}}
hover = timed_requests("textDocument/hover", dict(doc, position={"line": 10, "character": 3}), 100)
fmt = timed_requests("textDocument/formatting", dict(doc, options={"tabSize": 2, "insertSpaces": True}), 20)
syms = timed_requests("textDocument/documentSymbol", doc, 50)
base = timed_requests("bench/nothing", {}, 100)

# inlay hints: the tutorial's `searched` mapping, a fresh version before
# each request (the first waits for the worker, the rest are cached)
tut_path = os.path.join(os.getcwd(), "examples", "tutorial.cmt")
tut = open(tut_path, encoding="utf-8").read()
tut_uri = "file://" + tut_path
send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
    "uri": tut_uri, "languageId": "cmt", "version": 1, "text": tut}}})
inlay = []
c0 = cpu_ms()
for v in range(2, 12):
    send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
        "textDocument": {"uri": tut_uri, "version": v},
        "contentChanges": [{"text": tut + "\n" * (v % 2)}]}})
    t0 = time.perf_counter()
    send({"jsonrpc": "2.0", "id": 5000 + v, "method": "textDocument/inlayHint", "params": {
        "textDocument": {"uri": tut_uri},
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 9999, "character": 0}}}})
    r = until(lambda m: m.get("id") == 5000 + v)
    inlay.append((time.perf_counter() - t0) * 1000)
    assert r["result"], "no inlay hints for examples/tutorial.cmt"
cpu["inlay"] = (cpu_ms() - c0) / len(inlay)
send({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
until(lambda m: m.get("id") == 2)
send({"jsonrpc": "2.0", "method": "exit"})
p.wait(timeout=10)

print("%-40s %5s %10s %9s %9s %13s" % ("what (%d-line document)" % lines, "runs", "median ms",
                                        "p99 ms", "max ms", "server CPU ms"))
for name, key, xs in (("didChange -> publishDiagnostics", "changes", changes),
                      ("hover", "textDocument/hover", hover),
                      ("formatting (whole document)", "textDocument/formatting", fmt),
                      ("documentSymbol", "textDocument/documentSymbol", syms),
                      ("baseline: unknown method round trip", "bench/nothing", base),
                      ("inlayHint (tutorial, worker then cache)", "inlay", inlay)):
    med, p99, mx = stats(xs)
    print("%-40s %5d %10.2f %9.2f %9.2f %13.2f" % (name, len(xs), med, p99, mx, cpu[key]))
print("(latencies are wall clock from the client; server CPU ms is per request, "
      "from /proc, %s)" % ("load average %.1f on %d cores" % (os.getloadavg()[0], os.cpu_count())))
med, p99, _ = stats(changes)
print("goal: diagnostics within 10 ms of a change: %s (wall median %.2f ms, p99 %.2f ms; "
      "server CPU %.2f ms per change)" % ("met" if p99 <= 10 else "NOT met", med, p99,
                                           cpu["changes"]))
PY
echo
python3 "$(dirname "$0")/lsp_busy.py" "$CMTC" "${LSP_BUSY_KEYS:-40}" "${LSP_BUSY_INTERVAL_MS:-50}"
