#!/usr/bin/env python3
"""Checks the editor set-up files in docs/editors/ (standard library only).

* VS Code: package.json contributes the `cmt` language for *.cmt with its
  configuration and grammar files, and a client entry point that starts
  `cmtc lsp`; what `vsce package` asks of the manifest is there (a
  repository, a LICENSE, no relative link in the README, engines.vscode no
  older than the locked vscode-languageclient needs, the npm packages
  pinned by package-lock.json and ignored by git); extension.js is valid
  JavaScript (when node is at hand; tests/suites/vscode.sh runs it); the
  TextMate grammar is run by a small TextMate-style tokenizer over a sample
  and must give the expected scopes (comments, keywords, declarations,
  types, functions, quantities with units, holes).
* Neovim: cmt.lua detects *.cmt and starts the server both ways (0.7's
  start_client + buf_attach_client, and vim.lsp.start), and sets
  'omnifunc' (tests/suites/nvim.sh runs it in Neovim).

Prints one PASS/FAIL line per check."""
import json
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
VSCODE = os.path.join(ROOT, "docs", "editors", "vscode")
failures = 0


def check(ok, name, why=""):
    global failures
    if ok:
        print("PASS: %s" % name)
    else:
        failures += 1
        print("FAIL: %s: %s" % (name, why))


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def tokenize(grammar, text):
    """A small TextMate engine: at each position the leftmost match among
    the patterns wins (the first listed on a tie); begin/end rules span
    lines.  Returns (text, scope) pairs, scope None for unmatched text."""
    repo = grammar.get("repository", {})

    def flatten(patterns):
        out = []
        for p in patterns:
            if "include" in p:
                r = repo[p["include"][1:]]
                out.extend(flatten(r["patterns"]) if "patterns" in r and
                           "match" not in r and "begin" not in r else [r])
            elif "patterns" in p and "match" not in p and "begin" not in p:
                out.extend(flatten(p["patterns"]))
            else:
                out.append(p)
        return out

    rules = flatten(grammar["patterns"])
    compiled = []
    for r in rules:
        key = "match" if "match" in r else "begin"
        compiled.append((r, re.compile(r[key], re.M)))
    tokens = []
    pos = 0
    while pos < len(text):
        best = None
        for r, rx in compiled:
            m = rx.search(text, pos)
            if m and m.end() > m.start() and (best is None or m.start() < best[1].start()):
                best = (r, m)
        if best is None:
            tokens.append((text[pos:], None))
            break
        r, m = best
        if m.start() > pos:
            tokens.append((text[pos:m.start()], None))
        if "begin" in r:
            end = re.compile(r["end"], re.M).search(text, m.end())
            stop = end.end() if end else len(text)
            tokens.append((text[m.start():stop], r.get("name")))
            pos = stop
            continue
        caps = r.get("captures", {})
        if caps:
            last = m.start()
            for g in range(1, (m.lastindex or 0) + 1):
                if m.start(g) < 0:
                    continue
                if m.start(g) > last:
                    tokens.append((text[last:m.start(g)], r.get("name")))
                tokens.append((m.group(g), caps.get(str(g), {}).get("name")))
                last = m.end(g)
            if last < m.end():
                tokens.append((text[last:m.end()], r.get("name")))
        else:
            tokens.append((m.group(0), r.get("name")))
        pos = m.end()
    return [(t, s) for t, s in tokens if t.strip()]


def version_tuple(spec):
    return tuple(int(x) for x in re.sub(r"^[\^~>=]+", "", spec).split("."))


def check_packaging(pkg):
    """What `vsce package` needs, checked without node."""
    repo = pkg.get("repository")
    url = repo.get("url") if isinstance(repo, dict) else repo
    check(isinstance(url, str) and url.startswith("https://"), "vscode_repository_field",
          "package.json has no repository URL (vsce asks for one)")
    check(any(os.path.isfile(os.path.join(VSCODE, n)) for n in ("LICENSE", "LICENSE.md", "LICENSE.txt")),
          "vscode_license_file", "no LICENSE beside package.json (vsce asks for one)")
    with open(os.path.join(VSCODE, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    links = [l for l in re.findall(r"\]\(([^)\s]+)", readme)
             if not re.match(r"^(https?:|mailto:|#)", l)]
    check(not links, "vscode_readme_links", "relative links vsce rejects: %s" % links)
    try:
        lock = load(os.path.join(VSCODE, "package-lock.json"))
        locked = lock["packages"]["node_modules/vscode-languageclient"]
        want = pkg["dependencies"]["vscode-languageclient"]
        check(locked["version"] == want, "vscode_client_pinned",
              "package-lock.json has vscode-languageclient %s, package.json %s" % (locked["version"], want))
        check(version_tuple(pkg["engines"]["vscode"]) >= version_tuple(locked["engines"]["vscode"]),
              "vscode_engine_matches_client", "engines.vscode %s, but vscode-languageclient %s needs %s"
              % (pkg["engines"]["vscode"], locked["version"], locked["engines"]["vscode"]))
        check("node_modules/@vscode/vsce" in lock["packages"], "vscode_vsce_pinned",
              "package-lock.json does not pin @vscode/vsce")
    except (OSError, KeyError, ValueError) as e:
        check(False, "vscode_package_lock", str(e))
    check(os.path.isfile(os.path.join(VSCODE, ".vscodeignore")), "vscode_vscodeignore", "no .vscodeignore")
    with open(os.path.join(ROOT, ".gitignore"), encoding="utf-8") as f:
        ignored = f.read().split()
    check("node_modules/" in ignored or "node_modules" in ignored, "vscode_node_modules_ignored",
          ".gitignore does not ignore node_modules/")


def main():
    pkg_path = os.path.join(VSCODE, "package.json")
    try:
        pkg = load(pkg_path)
        langs = pkg["contributes"]["languages"]
        grams = pkg["contributes"]["grammars"]
        ok = any(l["id"] == "cmt" and ".cmt" in l["extensions"] for l in langs)
        check(ok, "vscode_language_contribution", "no language cmt for .cmt")
        conf = [l.get("configuration") for l in langs if l["id"] == "cmt"][0]
        lc = load(os.path.join(VSCODE, conf))
        check(lc["comments"]["lineComment"] == "//" and lc["comments"]["blockComment"] == ["/*", "*/"],
              "vscode_language_configuration", "comment markers")
        gpath = os.path.join(VSCODE, grams[0]["path"])
        grammar = load(gpath)
        check(grams[0]["language"] == "cmt" and grammar["scopeName"] == grams[0]["scopeName"],
              "vscode_grammar_contribution", "grammar language or scope name")
        main_js = os.path.join(VSCODE, pkg["main"])
        with open(main_js, encoding="utf-8") as f:
            js = f.read()
        check("vscode-languageclient" in pkg.get("dependencies", {}) and
              "'lsp'" in js and "LanguageClient" in js,
              "vscode_client_starts_cmtc_lsp", "client must spawn `cmtc lsp`")
    except (OSError, KeyError, IndexError, ValueError) as e:
        check(False, "vscode_files", str(e))
        return 1
    check_packaging(pkg)
    node = shutil.which("node")
    if node:
        r = subprocess.run([node, "--check", main_js], capture_output=True, text=True)
        check(r.returncode == 0, "vscode_extension_js_syntax", r.stderr[:200])
    else:
        print("SKIP: vscode_extension_js_syntax: node is not installed")

    sample = ('use std.ops.gemm; // a comment\n'
              'const BUF = 2 MiB; /* block\n   comment */\n'
              'op f<M = 4> { in A[M] : int8; out B[M] : fp16; B[m] = exp(A[m]) * 1.5e3; }\n'
              'arch a { memory DRAM { bandwidth 64GB/s; } compute mac matrix { } }\n'
              'mapping x for f on a { tile DRAM: m ?; spatial m -> x; }\n')
    try:
        toks = tokenize(grammar, sample)
    except (re.error, KeyError) as e:
        check(False, "vscode_grammar_tokenizes", str(e))
        return 1
    want = [
        ("use", "keyword.control.import.cmt"),
        ("std.ops.gemm", "entity.name.namespace.cmt"),
        ("// a comment", "comment.line.double-slash.cmt"),
        ("const", "keyword.declaration.cmt"),
        ("BUF", "entity.name.function.cmt"),
        ("2", "constant.numeric.cmt"),
        ("MiB", "keyword.other.unit.cmt"),
        ("/* block\n   comment */", "comment.block.cmt"),
        ("op", "keyword.declaration.cmt"),
        ("int8", "storage.type.cmt"),
        ("exp", "support.function.cmt"),
        ("1.5e3", "constant.numeric.cmt"),
        ("GB/s", "keyword.other.unit.cmt"),
        ("DRAM", "entity.name.type.cmt"),
        ("matrix", "constant.language.cmt"),
        ("?", "keyword.operator.hole.cmt"),
        ("->", "keyword.operator.arrow.cmt"),
    ]
    for text, scope in want:
        got = [s for t, s in toks if t == text]
        label = re.sub(r"\W+", "_", text).strip("_") or {"?": "hole", "->": "arrow"}[text]
        check(scope in got, "vscode_grammar_%s" % label,
              "%r has scopes %r, want %s" % (text, got, scope))

    lua_path = os.path.join(ROOT, "docs", "editors", "nvim", "cmt.lua")
    with open(lua_path, encoding="utf-8") as f:
        lua = f.read()
    check("*.cmt" in lua and "start_client" in lua and "buf_attach_client" in lua and
          "vim.lsp.start" in lua and "'lsp'" in lua and "vim.lsp.omnifunc" in lua,
          "nvim_config_contents",
          "cmt.lua must detect *.cmt and start `cmtc lsp` on 0.7 and later")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
