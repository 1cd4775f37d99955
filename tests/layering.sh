#!/bin/sh
# The layering of cmtc's sources (README, Architecture), checked from the
# #include lines of every .c and .h file in the given folders:
#
#   tests/layering.sh DIR...     (the layers' folders, lowest first)
#
#   1. a file includes headers of its own layer or lower ones only;
#   2. the syntax tree (frontend/ast.h) is reached, directly or through
#      other headers, only from the front end (frontend/) and the tools
#      that work on the text: the formatter (backend/fmt*) and the
#      language server (backend/lsp*);
#   3. no files include each other in a cycle, and no folders do.
#
# Quoted includes are resolved beside the file, then from the current
# folder (the root); what neither holds (generated or system headers) is
# not a source of the layers.  Prints each violation and exits 1 when
# there is any; prints `layering: ok (N files, N includes)` otherwise.
set -u
[ $# -gt 0 ] || { echo "usage: tests/layering.sh DIR..." >&2; exit 2; }
edges=$(mktemp "${TMPDIR:-/tmp}/cmtc-layering.XXXXXX")
trap 'rm -f "$edges"' EXIT

# One line per file (`file FILE`) and per include (`edge FILE HEADER`),
# every path normalised from the root.
normalise() {
  printf '%s\n' "$1" | awk -F/ '{
    n = 0
    for (i = 1; i <= NF; i++) {
      if ($i == "." || $i == "") continue
      if ($i == ".." && n > 0 && part[n] != "..") { n--; continue }
      part[++n] = $i
    }
    out = part[1]
    for (i = 2; i <= n; i++) out = out "/" part[i]
    print out
  }'
}
for dir in "$@"; do
  for f in "$dir"/*.c "$dir"/*.h; do
    [ -f "$f" ] || continue
    echo "file $f"
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
      while IFS= read -r inc; do
        if [ -f "$dir/$inc" ]; then
          echo "edge $f $(normalise "$dir/$inc")"
        elif [ -f "$inc" ]; then
          echo "edge $f $(normalise "$inc")"
        fi
      done
  done
done >"$edges"

awk -v dirs="$*" '
function dir_of(path) {
  sub(/\/[^\/]*$/, "", path)
  return path
}
function ast_allowed(path, d) {
  d = dir_of(path)
  return d == "frontend" || path ~ /^backend\/(fmt|lsp)[^\/]*$/
}
# depth-first search for a cycle through file includes; state 1 = on the
# stack, 2 = done
function visit_file(f, k, h) {
  fstate[f] = 1
  fstack[++fdepth] = f
  for (k = 1; k <= nout[f]; k++) {
    h = out[f, k]
    if (fstate[h] == 1) report_cycle("files", fstack, fdepth, h)
    else if (fstate[h] == 0) visit_file(h)
  }
  fdepth--
  fstate[f] = 2
}
function visit_dir(d, k, e) {
  dstate[d] = 1
  dstack[++ddepth] = d
  for (k = 1; k <= ndout[d]; k++) {
    e = dout[d, k]
    if (dstate[e] == 1) report_cycle("folders", dstack, ddepth, e)
    else if (dstate[e] == 0) visit_dir(e)
  }
  ddepth--
  dstate[d] = 2
}
function report_cycle(what, stack, depth, back, i, start, text) {
  for (i = depth; i >= 1; i--) if (stack[i] == back) { start = i; break }
  text = stack[start]
  for (i = start + 1; i <= depth; i++) text = text " -> " stack[i]
  printf "layering: include cycle among %s: %s -> %s\n", what, text, back
  bad++
}
# the headers a file reaches, directly or not
function reaches_ast(f, k, h) {
  if (f in ast_memo) return ast_memo[f]
  ast_memo[f] = 0
  if (f == "frontend/ast.h") return ast_memo[f] = 1
  for (k = 1; k <= nout[f]; k++) {
    h = out[f, k]
    if (reaches_ast(h)) { ast_via[f] = (h == "frontend/ast.h" ? "" : h); return ast_memo[f] = 1 }
  }
  return 0
}
BEGIN {
  n = split(dirs, list, " ")
  for (i = 1; i <= n; i++) layer[list[i]] = i
}
$1 == "file" { files[$2] = 1; nfiles++; next }
$1 == "edge" {
  from = $2; to = $3; nedges++
  out[from, ++nout[from]] = to
  fd = dir_of(from); td = dir_of(to)
  if (!(td in layer)) next
  if (layer[td] > layer[fd]) {
    printf "layering: %s includes %s: layer %s (%s) is above layer %s (%s)\n", from, to, layer[td], td, layer[fd], fd
    bad++
  }
  if (fd != td && !((fd, td) in dseen)) {
    dseen[fd, td] = 1
    dout[fd, ++ndout[fd]] = td
  }
}
END {
  for (f in files)
    if (f != "frontend/ast.h" && !ast_allowed(f) && reaches_ast(f)) {
      via = ast_via[f] != "" ? " through " ast_via[f] : ""
      printf "layering: %s reaches the syntax tree (frontend/ast.h)%s: only the front end and the text tools may\n", f, via
      bad++
    }
  for (f in files) if (fstate[f] == 0) visit_file(f)
  for (i = 1; i <= n; i++) if (dstate[list[i]] == 0) visit_dir(list[i])
  if (bad) exit 1
  printf "layering: ok (%d files, %d includes)\n", nfiles, nedges
}' "$edges"
