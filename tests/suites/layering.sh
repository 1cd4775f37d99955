#!/bin/sh
# `make layering` (tests/layering.sh) holds on this tree and fails on each
# kind of mistake it is there to catch, each planted in a copy of the
# tree: an include of a higher layer, the optimizer included by the
# pipeline, the syntax tree reached from a pass (directly or through a
# header), and include cycles between two files and between folders.
set -u
layers=$(sed -n 's/^LAYER_DIRS *= *//p' Makefile)
[ -n "$layers" ] || { echo "FAIL: layering: no LAYER_DIRS in the Makefile"; exit 0; }
checker=$(pwd)/tests/layering.sh
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cmtc-layering.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# shellcheck disable=SC2086 # the layers are words
if out=$(sh "$checker" $layers 2>&1); then
  echo "PASS: layering holds on the tree ($out)"
else
  echo "FAIL: layering does not hold on the tree:"
  printf '%s\n' "$out"
fi

# $1 case name, $2 expected text of the report; the planting is done by
# the caller in $tmp/tree before calling
expect_failure() {
  # shellcheck disable=SC2086
  out=$(cd "$tmp/tree" && sh "$checker" $layers 2>&1)
  status=$?
  case $out in
    *"$2"*) if [ $status -eq 1 ]; then echo "PASS: layering refuses $1"; else echo "FAIL: layering $1: exit $status"; fi ;;
    *) echo "FAIL: layering $1: no \"$2\" in: $out" ;;
  esac
}
fresh() {
  rm -rf "$tmp/tree"
  mkdir -p "$tmp/tree"
  for d in $layers; do
    mkdir -p "$tmp/tree/$d"
    cp "$d"/*.[ch] "$tmp/tree/$d/" 2>/dev/null
  done
}

fresh
echo '#include "passes/passes.h"' >>"$tmp/tree/ir/ir.c"
expect_failure upward_include "ir/ir.c includes passes/passes.h: layer"
expect_failure folder_cycle "include cycle among folders:"

fresh
echo '#include "../passes/passes.h"' >>"$tmp/tree/ir/schedule.c"
expect_failure relative_upward_include "ir/schedule.c includes passes/passes.h: layer"

fresh
echo '#include "passes/optimize/optimize.h"' >>"$tmp/tree/passes/pipeline.c"
expect_failure pipeline_calls_optimizer "passes/pipeline.c includes passes/optimize/optimize.h: layer"

fresh
echo '#include "frontend/ast.h"' >>"$tmp/tree/passes/shapes.c"
expect_failure ast_in_a_pass "passes/shapes.c reaches the syntax tree (frontend/ast.h)"

fresh
echo '#include "backend/fmt.h"' >>"$tmp/tree/backend/listing.c"
expect_failure ast_through_a_header "backend/listing.c reaches the syntax tree (frontend/ast.h) through backend/fmt.h"

fresh
printf '#include "ir/cycle_b.h"\n' >"$tmp/tree/ir/cycle_a.h"
printf '#include "ir/cycle_a.h"\n' >"$tmp/tree/ir/cycle_b.h"
expect_failure file_cycle "include cycle among files: ir/cycle_"
