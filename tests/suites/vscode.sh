#!/bin/sh
# VS Code: packages the extension with the pinned @vscode/vsce (as `make
# vsix` does), checks the .vsix (a zip with the manifest VS Code reads, the
# extension's files, the client library and nothing of the packager), then
# runs the packaged extension.js and vscode-languageclient in node against
# the real `cmtc lsp` (tests/editors/vscode_client.js).  VS Code itself is
# not run: Debian does not package it.
#
# Needs node and the extension's npm packages (`npm ci` in
# docs/editors/vscode, which `sh .ci/setup test` and `make vsix` run);
# without them every case is skipped, and counted as skipped.
CMTC=${CMTC:-build/cmtc}
case $CMTC in /*) ;; *) CMTC=$(pwd)/$CMTC ;; esac
. tests/editors/lib.sh
cases="vscode_vsix vscode_activate vscode_diagnostics vscode_hover vscode_definition vscode_symbols
vscode_quick_fix vscode_formatting vscode_use_completion vscode_restart vscode_no_error_shown"
ext=docs/editors/vscode
command -v node >/dev/null 2>&1 || skip_all "node is not installed"
command -v python3 >/dev/null 2>&1 || skip_all "python3 is not installed (it reads the .vsix)"
[ -x $ext/node_modules/.bin/vsce ] ||
    skip_all "the extension's npm packages are not installed (sh .ci/setup test, or make vsix)"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

if ! (cd $ext && node_modules/.bin/vsce package --out "$tmp/cmt.vsix" </dev/null) >"$tmp/vsce.log" 2>&1; then
    echo "FAIL: vscode_vsix: vsce package failed: $(grep -v '^npm warn' "$tmp/vsce.log" | head -c 400 | tr '\n' ' ')"
    for c in $cases; do [ "$c" = vscode_vsix ] || echo "FAIL: $c: no .vsix"; done
    exit 1
fi
python3 - "$tmp/cmt.vsix" "$tmp/unpacked" $ext/package.json <<'PY'
import json, re, sys, zipfile
vsix, dest, pkg_path = sys.argv[1:]
pkg = json.load(open(pkg_path))
problems = []
try:
    z = zipfile.ZipFile(vsix)
    bad = z.testzip()
    if bad:
        problems.append("corrupt member " + bad)
    names = set(z.namelist())
    manifest = z.read("extension.vsixmanifest").decode()
    ident = re.search(r"<Identity [^>]*>", manifest)
    ident = ident.group(0) if ident else ""
    for attr, want in (("Id", pkg["name"]), ("Version", pkg["version"]), ("Publisher", pkg["publisher"])):
        if '%s="%s"' % (attr, want) not in ident:
            problems.append("manifest Identity lacks %s=%s: %s" % (attr, want, ident))
    if 'Id="Microsoft.VisualStudio.Code"' not in manifest:
        problems.append("manifest does not target VS Code")
    if "<License>extension/LICENSE.txt</License>" not in manifest:
        problems.append("manifest names no license")
    packed = json.loads(z.read("extension/package.json"))
    if packed["engines"]["vscode"] != pkg["engines"]["vscode"]:
        problems.append("packed engines.vscode differs")
    client = json.loads(z.read("extension/node_modules/vscode-languageclient/package.json"))
    if client["version"] != pkg["dependencies"]["vscode-languageclient"]:
        problems.append("bundled vscode-languageclient %s, package.json pins %s"
                        % (client["version"], pkg["dependencies"]["vscode-languageclient"]))
    need = client["engines"]["vscode"].lstrip("^")
    have = pkg["engines"]["vscode"].lstrip("^")
    if tuple(map(int, have.split("."))) < tuple(map(int, need.split("."))):
        problems.append("engines.vscode ^%s is older than the ^%s the client needs" % (have, need))
    for f in ("[Content_Types].xml", "extension/extension.js", "extension/language-configuration.json",
              "extension/syntaxes/cmt.tmLanguage.json", "extension/readme.md", "extension/LICENSE.txt",
              "extension/node_modules/vscode-languageclient/node.js"):
        if f not in names:
            problems.append("missing " + f)
    extra = sorted(n for n in names if n.startswith("extension/node_modules/@vscode/") or n.endswith(".vsix")
                   or n.endswith("package-lock.json"))
    if extra:
        problems.append("packed what it should not: " + ", ".join(extra[:3]))
    z.extractall(dest)
except (OSError, KeyError, ValueError, zipfile.BadZipFile) as e:
    problems.append(str(e))
print("FAIL: vscode_vsix: " + "; ".join(problems) if problems else "PASS: vscode_vsix")
PY
timeout 120 node tests/editors/vscode_client.js "$tmp/unpacked/extension" "$CMTC" "$tmp" \
    >"$tmp/node.out" 2>"$tmp/node.err"
rc=$?
cat "$tmp/node.out"
if [ $rc -ne 0 ] && ! grep -q '^FAIL: ' "$tmp/node.out"; then
    echo "FAIL: vscode_client: node exited $rc: $(head -c 400 "$tmp/node.err" | tr '\n' ' ')"
fi
exit 0
