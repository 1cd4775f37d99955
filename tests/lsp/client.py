#!/usr/bin/env python3
"""A small LSP test client (standard library only).

usage: client.py CMTC TRANSCRIPT.in

Reads a transcript, sends it to `CMTC lsp`, closes its standard input,
reads everything the server writes and prints it as canonical JSON lines
(sorted keys), then `exit: N` with the server's exit code.

Transcript lines:
  {...}            a JSON message, framed with Content-Length and sent
  raw: TEXT        bytes sent as they are; backslash escapes (\\r \\n \\xNN
                   \\\\) are decoded, nothing is added
  # ...            a comment; blank lines are ignored
  #!ignore METHOD  notifications of METHOD are not printed (for transcripts
                   about something else than textDocument/publishDiagnostics)
  #!env NAME=VALUE the server runs with this environment variable ($FILES
                   and $ROOT substituted), e.g. a fixture standard library
  #!mask REGEX     in the output, text matching REGEX is printed as <masked>
                   (numbers the cost model computes: the transcript checks
                   that they are there, not their value)
  #!write PATH TEXT  write TEXT (backslash escapes as in raw: lines) to
                   PATH under $TMP, a folder of the client's own for this
                   run, once everything before it was sent (and waited
                   for): for files that change on disk during a session
  #!wait REGEX     stop sending until the server has written a message
                   whose canonical JSON (as printed, before masking)
                   matches REGEX (one more than had matched before the
                   lines since the previous #!wait were sent), e.g. `"id":3,` or
                   `"method":"workspace/inlayHint/refresh"`: for answers
                   that come from the optimizer's worker, whose timing is
                   not the transcript's (120 s at most, then `timeout:`)

In JSON messages and raw lines, $ROOT is replaced by the repository root,
$FILES by tests/lsp/files and $TMP by the run's own folder (absolute;
percent-encoded where it appears in a file:// URI; $TMP is printed as $TMP
again in the output).  A string value "@file:PATH" (PATH relative to the
repository root) is replaced by that file's contents.  In the output the
root's absolute path is printed as $ROOT again, so expected files do not
depend on where the repository lives.

Standard output of the server must consist of well-formed frames only:
anything else is printed as a `garbage:` line (and fails the comparison).
"""
import json
import os
import re
import subprocess
import shutil
import sys
import tempfile
import threading
import time
import urllib.parse

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TMP = tempfile.mkdtemp(prefix="cmtc-lsp-")


def substitute(value):
    if isinstance(value, str):
        if value.startswith("@file:"):
            with open(os.path.join(ROOT, value[6:]), encoding="utf-8") as f:
                return f.read()
        uri_root = urllib.parse.quote(ROOT)
        if value.startswith("file://"):
            value = value.replace("$ROOT", uri_root)
            value = value.replace("$FILES", uri_root + "/tests/lsp/files")
            value = value.replace("$TMP", urllib.parse.quote(TMP))
        value = value.replace("$ROOT", ROOT).replace("$TMP", TMP)
        return value.replace("$FILES", ROOT + "/tests/lsp/files")
    if isinstance(value, list):
        return [substitute(v) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v) for k, v in value.items()}
    return value


def frame(body):
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def decode_raw(text):
    out = bytearray()
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            n = text[i + 1]
            if n == "r":
                out += b"\r"
            elif n == "n":
                out += b"\n"
            elif n == "\\":
                out += b"\\"
            elif n == "x":
                out.append(int(text[i + 2:i + 4], 16))
                i += 2
            else:
                out += ("\\" + n).encode()
            i += 2
            continue
        out += c.encode("utf-8")
        i += 1
    return bytes(out)


MASKS = []
IGNORED = set()
ENV = {}


def build_input(path):
    """The bytes to send, as segments: [(bytes, wait REGEX or None,
    (path, bytes) to write or None)]."""
    segments = []
    data = bytearray()
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("#!wait "):
                segments.append((bytes(data), re.compile(line[7:].strip()), None))
                data = bytearray()
                continue
            if line.startswith("#!write "):
                path, _, text = line[8:].partition(" ")
                segments.append((bytes(data), None, (os.path.join(TMP, path), decode_raw(text))))
                data = bytearray()
                continue
            if line.startswith("#!env "):
                name, _, value = line[6:].strip().partition("=")
                ENV[name] = substitute(value)
                continue
            if line.startswith("#!ignore "):
                IGNORED.add(line[9:].strip())
                continue
            if line.startswith("#!mask "):
                MASKS.append(re.compile(line[7:]))
                continue
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            if line.startswith("raw: "):
                text = line[5:].replace("$ROOT", ROOT)
                data += decode_raw(text)
                continue
            msg = substitute(json.loads(line))
            # ids must reach the server exactly as written (64-bit ints)
            body = json.dumps(msg, ensure_ascii=False).encode("utf-8")
            data += frame(body)
    segments.append((bytes(data), None, None))
    return segments


def check_code_descriptions(msg, problems):
    """codeDescription is optional (present when the code's page exists in
    the source tree): checked here and removed, so that expected files do
    not change when someone writes a new page."""
    if isinstance(msg, dict):
        cd = msg.pop("codeDescription", None)
        if cd is not None:
            href = cd.get("href", "") if isinstance(cd, dict) else ""
            want = "/docs/errors/%s.md" % msg.get("code")
            path = urllib.parse.unquote(href[7:]) if href.startswith("file://") else ""
            if not path.endswith(want) or not os.path.isfile(path):
                problems.append("bad codeDescription: %r" % (cd,))
        for v in msg.values():
            check_code_descriptions(v, problems)
    elif isinstance(msg, list):
        for v in msg:
            check_code_descriptions(v, problems)


def canonical(msg):
    text = json.dumps(msg, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    text = text.replace(urllib.parse.quote(TMP), "$TMP").replace(TMP, "$TMP")
    text = text.replace(urllib.parse.quote(ROOT), "$ROOT")
    return text.replace(ROOT, "$ROOT")


def complete_bodies(out):
    """The canonical JSON of each complete frame in out (so far)."""
    texts = []
    i = 0
    while True:
        end = out.find(b"\r\n\r\n", i)
        if end < 0:
            return texts
        length = None
        for h in out[i:end].decode("latin-1").split("\r\n"):
            name, _, value = h.partition(":")
            if name.strip().lower() == "content-length" and value.strip().isdigit():
                length = int(value.strip())
        if length is None or len(out) < end + 4 + length:
            return texts
        try:
            texts.append(canonical(json.loads(out[end + 4:end + 4 + length].decode("utf-8"))))
        except (ValueError, UnicodeDecodeError):
            pass
        i = end + 4 + length


def converse(proc, segments):
    """Sends the segments, waiting where a transcript says #!wait; returns
    (stdout, stderr, notes)."""
    out, err, notes = bytearray(), bytearray(), []

    def pump(src, dst):
        while True:
            chunk = src.read1(65536) if hasattr(src, "read1") else src.read(65536)
            if not chunk:
                return
            dst += chunk

    readers = [threading.Thread(target=pump, args=(proc.stdout, out), daemon=True),
               threading.Thread(target=pump, args=(proc.stderr, err), daemon=True)]
    for t in readers:
        t.start()
    try:
        for data, wait, write in segments:
            # a wait is for a new match: one more than before this segment
            seen = 0 if wait is None else sum(
                1 for t in complete_bodies(bytes(out)) if wait.search(t))
            proc.stdin.write(data)
            proc.stdin.flush()
            if write is not None:
                os.makedirs(os.path.dirname(write[0]), exist_ok=True)
                with open(write[0], "wb") as f:
                    f.write(write[1])
            if wait is None:
                continue
            deadline = time.monotonic() + 120
            while sum(1 for t in complete_bodies(bytes(out)) if wait.search(t)) <= seen:
                if time.monotonic() > deadline or proc.poll() is not None:
                    notes.append("timeout: no message matched %s" % wait.pattern)
                    break
                time.sleep(0.01)
        proc.stdin.close()
    except BrokenPipeError:
        pass
    try:
        proc.wait(timeout=300)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        notes.append("timeout: the server did not finish within 300 s")
    for t in readers:
        t.join()
    return bytes(out), bytes(err), notes


def parse_frames(out):
    """Splits the server's output into bodies; reports anything else."""
    lines = []
    i = 0
    while i < len(out):
        end = out.find(b"\r\n\r\n", i)
        if end < 0:
            lines.append("garbage: %r" % out[i:i + 200])
            break
        header = out[i:end].decode("latin-1")
        length = None
        ok = True
        for h in header.split("\r\n"):
            name, sep, value = h.partition(":")
            if not sep:
                ok = False
            elif name.strip().lower() == "content-length":
                length = int(value.strip())
        if not ok or length is None:
            lines.append("garbage: %r" % out[i:i + 200])
            break
        body = out[end + 4:end + 4 + length]
        if len(body) != length:
            lines.append("garbage: truncated frame %r" % body[:200])
            break
        try:
            msg = json.loads(body.decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as e:
            lines.append("garbage: invalid JSON body (%s)" % e)
            break
        i = end + 4 + length
        if isinstance(msg, dict) and msg.get("method") in IGNORED and "id" not in msg:
            continue
        problems = []
        check_code_descriptions(msg, problems)
        lines.extend(problems)
        text = canonical(msg)
        for m in MASKS:
            text = m.sub("<masked>", text)
        lines.append(text)
    return lines


def main():
    if len(sys.argv) != 3:
        sys.stderr.write("usage: client.py CMTC TRANSCRIPT.in\n")
        return 2
    cmtc, transcript = sys.argv[1], sys.argv[2]
    try:
        return run(cmtc, transcript)
    finally:
        shutil.rmtree(TMP, ignore_errors=True)


def run(cmtc, transcript):
    segments = build_input(transcript)
    cmd = [cmtc, "lsp"]
    wrapper = os.environ.get("LSP_WRAPPER")
    if wrapper:
        cmd = wrapper.split() + cmd
    # The server may stop reading early (after `exit`): a broken pipe is
    # expected then, and everything it wrote is still read.
    env = dict(os.environ)
    env.update(ENV)
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=ROOT, env=env)
    if len(segments) == 1:
        notes = []
        try:
            out, err = proc.communicate(input=segments[0][0], timeout=300)
        except BrokenPipeError:
            out, err = proc.stdout.read(), proc.stderr.read()
            proc.wait()
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            notes.append("timeout: the server did not finish within 300 s")
    else:
        out, err, notes = converse(proc, segments)
    for line in parse_frames(out):
        print(line)
    for note in notes:
        print(note)
    print("exit: %d" % proc.returncode)
    if os.environ.get("LSP_STDERR"):
        sys.stderr.write(err.decode("utf-8", "replace"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
