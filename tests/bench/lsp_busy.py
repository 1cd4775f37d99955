#!/usr/bin/env python3
"""A busy editor's traffic against `cmtc lsp` (tests/bench/bench_lsp.sh).

usage: lsp_busy.py CMTC [KEYSTROKES] [INTERVAL_MS]

Two documents, typed into one keystroke every INTERVAL_MS (default 50 ms,
a fast typist): for each keystroke the client sends a didChange (full
text) and, at once, an inlay-hint request for the whole document, as VS
Code does; a still unanswered inlay-hint request of the previous keystroke
is cancelled first ($/cancelRequest).  Every fourth keystroke it also asks
for a hover and a completion, and two keystrokes later for the semantic
tokens of the document.  After the typing, it asks ten times, one request
at a time, for the references of the statement hovered and for its rename
(not applied; refused when the statement is the standard library's).  The
client advertises
workspace.inlayHint.refreshSupport, answers each
workspace/inlayHint/refresh and asks for the hints again.

  * examples/comet_edge_gemm_softmax.cmt, typing digits into a binding of
    the mapping `searched_256x256x128` (a mapping with holes: every
    keystroke changes what the optimizer must solve);
  * a 2 000-line generated file with 40 mappings with holes
    (gen_large.py --holes), typing a comment at its top.

Printed per document: latency (wall clock, from the send to the answer)
of diagnostics (didChange -> publishDiagnostics of that version), hover,
completion, inlay hints, references, rename and semantic tokens, at the
median, 99th percentile and maximum;
how many hints the last answer had and how long after the last keystroke
the hints were complete.  Nothing is asserted: the numbers are printed."""
import json
import os
import queue
import subprocess
import sys
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


class Server:
    def __init__(self, cmtc):
        self.p = subprocess.Popen([cmtc, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL)
        self.q = queue.Queue()
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        out = self.p.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    self.q.put((time.perf_counter(), None))
                    return
                line = line.strip()
                if not line:
                    break
                k, _, v = line.decode().partition(":")
                if k.lower() == "content-length":
                    length = int(v)
            msg = json.loads(out.read(length))
            self.q.put((time.perf_counter(), msg))

    def send(self, msg):
        """Sends msg; returns the time just before it was written."""
        body = json.dumps(msg).encode()
        with self.lock:
            t = time.perf_counter()
            self.p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.p.stdin.flush()
        return t

    def get(self, timeout):
        try:
            return self.q.get(timeout=timeout)
        except queue.Empty:
            return None, None


def pct(xs, p):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p * (len(xs) - 1))))]


def run(cmtc, name, path, text, edits, hover_pos, completion_pos, interval):
    """edits: the document's text after each keystroke."""
    s = Server(cmtc)
    uri = "file://" + path
    doc = {"uri": uri}
    whole = {"start": {"line": 0, "character": 0}, "end": {"line": 100000, "character": 0}}
    next_id = [100]
    pending = {}  # id -> (kind, send time)
    lat = {"diagnostics": [], "hover": [], "completion": [], "inlay": [], "references": [],
           "rename": [], "tokens": []}
    diag_sent = {}
    counts = {"refresh": 0, "cancelled": 0, "modified": 0, "errors": 0}
    last_hints = [None, 0.0]  # the last inlay result, when it came

    def request(method, params, kind):
        i = next_id[0]
        next_id[0] += 1
        t = s.send({"jsonrpc": "2.0", "id": i, "method": method, "params": params})
        pending[i] = (kind, t)
        return i

    def handle(t, m):
        if m is None:
            raise SystemExit("%s: the server closed its output" % name)
        if m.get("method") == "textDocument/publishDiagnostics":
            v = m["params"].get("version")
            if v in diag_sent:
                lat["diagnostics"].append((t - diag_sent.pop(v)) * 1000)
        elif m.get("method") == "workspace/inlayHint/refresh":
            counts["refresh"] += 1
            s.send({"jsonrpc": "2.0", "id": m["id"], "result": None})
            request("textDocument/inlayHint", {"textDocument": doc, "range": whole}, "inlay")
        elif "id" in m and m["id"] in pending:
            kind, t0 = pending.pop(m["id"])
            if "error" in m:
                code = m["error"].get("code")
                if code == -32800:
                    counts["cancelled"] += 1
                elif code == -32801:
                    counts["modified"] += 1
                elif kind == "rename":
                    # a refusal (a name of the standard library) is an answer
                    lat[kind].append((t - t0) * 1000)
                else:
                    counts["errors"] += 1
                return
            lat[kind].append((t - t0) * 1000)
            if kind == "inlay":
                last_hints[0], last_hints[1] = m["result"], t

    def pump(until):
        while True:
            left = until - time.perf_counter()
            t, m = s.get(max(left, 0) if left > 0 else 0.0005)
            if t is None:
                if left <= 0:
                    return
                continue
            handle(t, m)

    s.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {
        "workspace": {"inlayHint": {"refreshSupport": True}}}}})
    while True:
        t, m = s.get(60)
        if m is None or m.get("id") == 1:
            break
    s.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    s.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": {"uri": uri, "languageId": "cmt", "version": 1, "text": text}}})
    inlay_id = request("textDocument/inlayHint", {"textDocument": doc, "range": whole}, "inlay")
    pump(time.perf_counter() + interval)
    # the open (the first check, the standard library read) is not timed
    lat["inlay"].clear()
    start = time.perf_counter()
    for k, t_edit in enumerate(edits):
        v = k + 2
        if inlay_id in pending:
            s.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": inlay_id}})
        diag_sent[v] = s.send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": v}, "contentChanges": [{"text": t_edit}]}})
        inlay_id = request("textDocument/inlayHint", {"textDocument": doc, "range": whole},
                           "inlay")
        if k % 4 == 3:
            request("textDocument/hover", {"textDocument": doc, "position": hover_pos}, "hover")
            request("textDocument/completion", {"textDocument": doc, "position": completion_pos},
                    "completion")
        if k % 4 == 1:
            # as VS Code asks after an edit
            request("textDocument/semanticTokens/full", {"textDocument": doc}, "tokens")
        pump(start + (k + 1) * interval)
    typed = time.perf_counter()
    # after the last keystroke: wait until every request is answered and the
    # hints stop changing (refreshes answered), at most 120 s
    deadline = typed + 120
    while time.perf_counter() < deadline:
        quiet_until = time.perf_counter() + 3.0
        before = (len(pending), last_hints[1], counts["refresh"])
        pump(quiet_until)
        if not pending and not diag_sent and (len(pending), last_hints[1],
                                              counts["refresh"]) == before:
            break
    complete_s = last_hints[1] - typed if last_hints[0] is not None else float("nan")
    # then, as a user asks for them (one at a time, not per keystroke): the
    # references of the statement hovered and its rename (not applied)
    for _ in range(10):
        for method, kind, extra in (
                ("textDocument/references", "references",
                 {"context": {"includeDeclaration": True}}),
                ("textDocument/rename", "rename", {"newName": "renamed_by_bench"})):
            params = {"textDocument": doc, "position": hover_pos}
            params.update(extra)
            i = request(method, params, kind)
            while i in pending:
                pump(time.perf_counter() + 0.01)
    nhints = len(last_hints[0] or [])
    s.send({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
    pump(time.perf_counter() + 0.2)
    s.send({"jsonrpc": "2.0", "method": "exit"})
    try:
        s.p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        s.p.kill()
    print("%s: %d keystrokes %d ms apart" % (name, len(edits), int(interval * 1000)))
    print("  %-34s %5s %9s %9s %9s" % ("latency (ms)", "n", "median", "p99", "max"))
    for kind, label in (("diagnostics", "didChange -> publishDiagnostics"),
                        ("hover", "hover"), ("completion", "completion"),
                        ("inlay", "inlayHint (answered ones)"),
                        ("references", "references"), ("rename", "rename"),
                        ("tokens", "semanticTokens/full")):
        xs = lat[kind]
        print("  %-34s %5d %9.2f %9.2f %9.2f" % (label, len(xs), pct(xs, 0.5), pct(xs, 0.99),
                                                 max(xs) if xs else float("nan")))
    if os.environ.get("LSP_BUSY_VERBOSE"):
        for kind in lat:
            print("  %s: %s" % (kind, " ".join("%.1f" % x for x in lat[kind])))
    when = ("%.2f s after the last keystroke" % complete_s if complete_s > 0 else
            "complete before the last keystroke")
    print("  inlay hints: %d cancelled (-32800), %d content modified (-32801), %d refreshes, "
          "%d other errors; the last answer has %d hints, %s" % (
              counts["cancelled"], counts["modified"], counts["refresh"], counts["errors"],
              nhints, when))
    d = lat["diagnostics"]
    h = lat["hover"]
    print("  goal p99 < 20 ms for diagnostics and hover: diagnostics %s (%.2f ms), hover %s "
          "(%.2f ms)" % ("met" if pct(d, 0.99) < 20 else "NOT met", pct(d, 0.99),
                         "met" if pct(h, 0.99) < 20 else "NOT met", pct(h, 0.99)))


def main():
    cmtc = sys.argv[1]
    keys = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    interval = (float(sys.argv[3]) if len(sys.argv) > 3 else 50) / 1000

    # 1. a COMET example: digits typed into M of the searched mapping
    path = os.path.join(ROOT, "examples", "comet_edge_gemm_softmax.cmt")
    text = open(path, encoding="utf-8").read()
    anchor = "mapping searched_256x256x128 for gemm_softmax<M = 256,"
    assert anchor in text
    head, tail = text.split(anchor, 1)
    digits = ["16", "32", "64", "128", "256", "512"]
    edits = []
    for k in range(keys):
        m = digits[k % len(digits)]
        edits.append(head + anchor.replace("M = 256", "M = " + m) + tail)
    lines = text[:text.index(anchor)].count("\n")
    # hover on the statement C in a `fuse` line (its cost in the mappings of
    # its op), completion after `tile ` in the searched mapping
    op_line = next(i for i, l in enumerate(text.split("\n")) if l.startswith("  fuse C, "))
    run(cmtc, "comet_edge_gemm_softmax.cmt (%d lines, 2 mappings with holes)" % text.count("\n"),
        path, text, edits, {"line": op_line, "character": 7},
        {"line": lines + 3, "character": 7}, interval)

    # 2. a 2 000-line file with 40 mappings with holes: a comment typed at the top
    gen = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "bench", "gen_large.py"),
                          "2000", "--holes"], capture_output=True, text=True, check=True).stdout
    tmpdir = os.environ.get("TMPDIR", "/tmp")
    path = os.path.join(tmpdir, "cmtc_bench_busy_%d.cmt" % os.getpid())
    with open(path, "w", encoding="utf-8") as f:
        f.write(gen)
    try:
        comment = "// tuning the searched mappings below "
        edits = []
        for k in range(keys):
            typed = (comment * 4)[:k + 1]
            edits.append(typed + "\n" + gen)
        glines = gen.split("\n")
        op_line = next(i for i, l in enumerate(glines) if l.lstrip().startswith("C[m, n]")) + 1
        map_line = next(i for i, l in enumerate(glines) if l.startswith("mapping searched_")) + 1
        run(cmtc, "gen_large.py 2000 --holes (%d lines, %d mappings with holes)" % (
            gen.count("\n"), gen.count("mapping searched_")), path, gen, edits,
            {"line": op_line, "character": 3}, {"line": map_line + 2, "character": 7}, interval)
    finally:
        os.unlink(path)


if __name__ == "__main__":
    main()
