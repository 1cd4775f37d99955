#!/usr/bin/env python3
"""Inlay hints show what the optimizer chose: for every mapping with holes
in tests/lsp/files/holes.cmt, the hints' tooltip must name the same
complete mapping as `cmtc compile --format json` prints for it, and each
hint must sit right after a `?` of that mapping.  (tests/lsp/inlay.in
checks the positions and the protocol; this ties the values to the
compiler, whose cost model may change.)

usage: check_inlay.py CMTC"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
import client  # noqa: E402

ROOT = client.ROOT
FILE = os.path.join(ROOT, "tests", "lsp", "files", "holes.cmt")


def main():
    cmtc = sys.argv[1]
    text = open(FILE, encoding="utf-8").read()
    lines = text.split("\n")
    uri = "file://" + FILE
    msgs = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"capabilities": {"general": {"positionEncodings": ["utf-8"]}}}},
        {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "cmt", "version": 1, "text": text}}},
        {"jsonrpc": "2.0", "id": 2, "method": "textDocument/inlayHint", "params": {
            "textDocument": {"uri": uri},
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 999, "character": 0}}}},
        {"jsonrpc": "2.0", "id": 3, "method": "shutdown"},
        {"jsonrpc": "2.0", "method": "exit"},
    ]
    data = b"".join(client.frame(json.dumps(m).encode()) for m in msgs)
    # `cmtc compile` has no time limit; give the server's optimizer room too,
    # so that a loaded machine (or a sanitizer build) cannot make it stop at
    # its budget with a worse answer than the one compared against
    env = dict(os.environ, CMT_LSP_OPTIMIZE_SECONDS=os.environ.get("CMT_LSP_OPTIMIZE_SECONDS", "60"))
    out = subprocess.run([cmtc, "lsp"], input=data, capture_output=True, timeout=300,
                         env=env).stdout
    hints = None
    for f in client.parse_frames(out):
        m = json.loads(f) if f.startswith("{") else {}
        if m.get("id") == 2:
            hints = m.get("result")
    comp = subprocess.run([cmtc, "compile", FILE, "--format", "json"], capture_output=True,
                          text=True, timeout=120)
    try:
        mappings = {m["name"]: m["mapping"] for m in json.loads(comp.stdout)["mappings"]}
    except (ValueError, KeyError) as e:
        print("FAIL: lsp_inlay_values: cmtc compile --format json: %s" % e)
        return 1
    status = 0
    if not hints:
        print("FAIL: lsp_inlay_values: no inlay hints")
        return 1
    # which mapping is each hint in: the last `mapping NAME` line above it
    seen = set()
    bad = []
    for h in hints:
        line, col = h["position"]["line"], h["position"]["character"]
        name = None
        for k in range(line, -1, -1):
            if lines[k].startswith("mapping "):
                name = lines[k].split()[1]
                break
        seen.add(name)
        want = mappings.get(name)
        if not lines[line][:col].endswith("?"):
            bad.append("hint at %d:%d is not right after a ?" % (line + 1, col))
        if want is None or not h["tooltip"].endswith(": " + want):
            bad.append("mapping %s: tooltip %r, compile says %r" % (name, h["tooltip"], want))
        label = h["label"][2:] if h["label"].startswith("= ") else ""
        if not label:
            bad.append("empty label at %d:%d" % (line + 1, col))
    holes = sum(l.count("?") for l in lines if not l.lstrip().startswith("//"))
    if len(hints) != holes:
        bad.append("%d hints for %d holes" % (len(hints), holes))
    if bad:
        print("FAIL: lsp_inlay_values: " + "; ".join(bad))
        status = 1
    else:
        print("PASS: lsp_inlay_values")
    return status


if __name__ == "__main__":
    sys.exit(main())
