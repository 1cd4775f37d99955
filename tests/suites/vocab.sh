#!/bin/sh
# One definition per vocabulary (frontend/util/vocab.h): the word lists
# `cmtc __vocab` prints from it must be what every other place spells out
# by hand, word for word (a word missing or extra fails the case):
#
#   - the scanner's keywords (lang/cmt.re);
#   - the VS Code TextMate grammar's keyword, constant, type and function
#     alternations (docs/editors/vscode/syntaxes/cmt.tmLanguage.json);
#   - the Emacs mode's regexp-opt lists by face (docs/editors/emacs/);
#   - what the language server's completion offers at the top level, in an
#     op, an arch, a mapping line and after `overlap` / `objective` / `phase`
#     (tests/vocab/completion.in through tests/lsp/client.py; needs python3).
#
# Vim and Neovim highlight through the language server's semantic tokens:
# they hold no word list.
set -u
LC_ALL=C
export LC_ALL
CMTC=${CMTC:-build/cmtc}
case $CMTC in /*) ;; *) CMTC=$(pwd)/$CMTC ;; esac
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cmtc-vocab.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

if ! "$CMTC" __vocab >"$tmp/vocab" 2>"$tmp/err" || [ ! -s "$tmp/vocab" ]; then
  echo "FAIL: vocab: cmtc __vocab failed: $(head -c 300 "$tmp/err")"
  exit 0
fi

# The words of group $1 of `cmtc __vocab`, one a line, sorted, unique.
vocab() {
  sed -n "s/^$1: //p" "$tmp/vocab" | tr ' ' '\n' | sed '/^$/d' | sort -u
}

# $1 case name, $2 file of the words vocab.h gives, $3 file of the words
# found; both sorted and unique.
compare() {
  if [ ! -s "$3" ]; then
    echo "FAIL: $1: no words found (has the file's layout changed?)"
    return
  fi
  missing=$(comm -23 "$2" "$3" | tr '\n' ' ' | sed 's/ $//')
  extra=$(comm -13 "$2" "$3" | tr '\n' ' ' | sed 's/ $//')
  if [ -z "$missing" ] && [ -z "$extra" ]; then
    echo "PASS: $1"
  else
    echo "FAIL: $1: missing: ${missing:-none}; not in vocab.h: ${extra:-none}"
  fi
}

# the scanner: each `"word" { token = ...` rule
vocab grammar.keyword >"$tmp/want"
sed -n 's/^[[:space:]]*"\([a-z_0-9]*\)"[[:space:]]*{[[:space:]]*token[[:space:]]*=.*/\1/p' lang/cmt.re |
  sort -u >"$tmp/got"
compare "vocab_scanner_keywords" "$tmp/want" "$tmp/got"

# VS Code: the alternation `\\b(a|b|c)` of the pattern named by scope $2
grammar=docs/editors/vscode/syntaxes/cmt.tmLanguage.json
for pair in keyword:keyword.control.cmt constant:constant.language.cmt type:storage.type.cmt \
            function:support.function.cmt; do
  group=${pair%%:*}
  scope=${pair#*:}
  vocab "grammar.$group" >"$tmp/want"
  awk -v scope="\"name\": \"$scope\"" 'index($0, scope) { want = 1; next }
       want && /"match"/ { print; exit }' "$grammar" |
    sed 's/^[^(]*(\([^)]*\)).*/\1/' | tr '|' '\n' | sed '/^$/d' | sort -u >"$tmp/got"
  compare "vocab_vscode_$group" "$tmp/want" "$tmp/got"
done

# Emacs: the strings of each (regexp-opt '(...)) list, by the face that
# follows it
awk '
  /regexp-opt .\(/ { collecting = 1; n = 0 }
  collecting {
    line = $0
    sub(/.*regexp-opt .\(/, "", line)
    while (match(line, /"[^"]*"/)) {
      words[++n] = substr(line, RSTART + 1, RLENGTH - 2)
      line = substr(line, RSTART + RLENGTH)
    }
    if ($0 ~ /"\)/) { collecting = 0; pending = 1 }
    next
  }
  pending && match($0, /font-lock-[a-z-]*-face/) {
    face = substr($0, RSTART + 10, RLENGTH - 15)
    for (i = 1; i <= n; i++) print face, words[i]
    pending = 0
  }' docs/editors/emacs/cmt-mode.el >"$tmp/emacs"
for pair in keyword:keyword constant:constant type:type function:builtin; do
  group=${pair%%:*}
  face=${pair#*:}
  vocab "grammar.$group" >"$tmp/want"
  sed -n "s/^$face //p" "$tmp/emacs" | sort -u >"$tmp/got"
  compare "vocab_emacs_$group" "$tmp/want" "$tmp/got"
done

# the language server: the words (keywords, functions, attributes) each
# completion answers with
if ! command -v python3 >/dev/null 2>&1; then
  echo "SKIP: vocab_completion: python3 is not installed (it runs the transcript)"
  exit 0
fi
if ! python3 tests/lsp/client.py "$CMTC" tests/vocab/completion.in >"$tmp/lsp" 2>"$tmp/err"; then
  echo "FAIL: vocab_completion: client failed: $(head -c 300 "$tmp/err" | tr '\n' ' ')"
  exit 0
fi
python3 - "$tmp/lsp" "$tmp" <<'PY'
import json, sys
places = {2: "top", 3: "op", 4: "arch", 5: "mapping", 6: "overlap", 7: "objective", 8: "phase"}
words = {p: set() for p in places.values()}
for line in open(sys.argv[1]):
    if not line.startswith("{"):
        continue
    m = json.loads(line)
    r = m.get("result")
    if m.get("id") in places and isinstance(r, dict):
        for it in r.get("items", []):
            if it.get("detail") in ("keyword", "function", "attribute"):
                words[places[m["id"]]].add(it["label"])
for p, w in words.items():
    with open("%s/lsp_%s" % (sys.argv[2], p), "w") as f:
        f.writelines(x + "\n" for x in sorted(w))
PY
for place in top op arch mapping overlap objective phase; do
  vocab "complete.$place" >"$tmp/want"
  sort -u "$tmp/lsp_$place" >"$tmp/got"
  compare "vocab_completion_$place" "$tmp/want" "$tmp/got"
done

# hover: every attribute key (the ones that are not keywords: `cost` and
# `array` are written as syntax of their own) has a description
python3 - "$tmp" <<'PY' >"$tmp/hover.in"
import json, sys
tmp = sys.argv[1]
vocab = dict(l.rstrip("\n").split(": ", 1) for l in open(tmp + "/vocab"))
keywords = set(vocab["grammar.keyword"].split())
keys = [k for k in dict.fromkeys(vocab["attribute"].split()) if k not in keywords]
open(tmp + "/hover_keys", "w").write("\n".join(keys) + "\n")
text = "arch words {\n" + "".join("  %s 1;\n" % k for k in keys) + "}\n"
uri = "file://$FILES/hover.cmt"
print("#!ignore textDocument/publishDiagnostics")
print(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  "params": {"processId": None, "rootUri": None, "capabilities": {}}}))
print(json.dumps({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
print(json.dumps({"jsonrpc": "2.0", "method": "textDocument/didOpen",
                  "params": {"textDocument": {"uri": uri, "languageId": "cmt", "version": 1,
                                              "text": text}}}))
for i, k in enumerate(keys):
    print(json.dumps({"jsonrpc": "2.0", "id": 100 + i, "method": "textDocument/hover",
                      "params": {"textDocument": {"uri": uri},
                                 "position": {"line": 1 + i, "character": 3}}}))
print(json.dumps({"jsonrpc": "2.0", "id": 99, "method": "shutdown"}))
print(json.dumps({"jsonrpc": "2.0", "method": "exit"}))
PY
if ! python3 tests/lsp/client.py "$CMTC" "$tmp/hover.in" >"$tmp/hover" 2>"$tmp/err"; then
  echo "FAIL: vocab_hover: client failed: $(head -c 300 "$tmp/err" | tr '\n' ' ')"
  exit 0
fi
python3 - "$tmp" <<'PY'
import json, sys
tmp = sys.argv[1]
keys = open(tmp + "/hover_keys").read().split()
said = {}
for line in open(tmp + "/hover"):
    if line.startswith("{"):
        m = json.loads(line)
        if isinstance(m.get("id"), int) and m["id"] >= 100 and isinstance(m.get("result"), dict):
            said[m["id"] - 100] = m["result"]["contents"]["value"]
bare = [k for i, k in enumerate(keys) if ("attribute `%s`: " % k) not in said.get(i, "")]
if keys and not bare:
    print("PASS: vocab_hover_describes_every_attribute (%d keys)" % len(keys))
else:
    print("FAIL: vocab_hover_describes_every_attribute: no description for %s" % " ".join(bare or ["any"]))
PY
