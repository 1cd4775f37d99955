#!/bin/sh
# The validation runner (tests/validation/validate.c) on a fixture whose
# latencies are computed by hand in docs/cost-model.md section 9: the row
# lines, the ratio of each, a group (worked@s: 441.5 ns) and a collective
# (worked%A: the broadcast of A, 136 ns) as rows, a harness overhead added
# to a row (441.5 + 58.5 ns = 0.5 us), the geometric-mean error
# exp(mean |ln R|) - 1 (|ln 0.5| + |ln 1.0114| + five |ln 1| over 7 rows
# evaluated = 10.6 %), the worst row, the fitted rows, rows that cannot be
# evaluated (a mapping with errors, a statement no group runs: exit 1),
# and manifests it must refuse (exit 2).
set -u
CMTC=${CMTC:-build/cmtc}
VALIDATE=${VALIDATE:-build/validate}
dir=tests/validation/fixture
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cmtc-validate.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

if [ ! -x "$VALIDATE" ]; then
  echo "FAIL: validate: $VALIDATE is not built"
  exit 0
fi
"$VALIDATE" "$CMTC" "$dir/rows.txt" >"$tmp/out" 2>"$tmp/err"
status=$?
if [ $status -ne 1 ]; then
  echo "FAIL: validate fixture: exit $status, expected 1 (two rows cannot be evaluated)"
elif ! diff -u "$dir/rows.expected" "$tmp/out" >"$tmp/diff"; then
  echo "FAIL: validate fixture: output differs:"
  cat "$tmp/diff"
else
  echo "PASS: validate fixture: rows, ratios, summary"
fi

# $1 case name, $2 manifest text, $3 expected message
refuse() {
  printf '%s\n' "$2" >"$tmp/rows.txt"
  cp "$dir/worked.cmt" "$tmp/"
  "$VALIDATE" "$CMTC" "$tmp/rows.txt" >"$tmp/out" 2>"$tmp/err"
  status=$?
  if [ $status -ne 2 ]; then
    echo "FAIL: validate refuses $1: exit $status"
  elif ! grep -q "$3" "$tmp/err"; then
    echo "FAIL: validate refuses $1: no \"$3\" in: $(cat "$tmp/err")"
  else
    echo "PASS: validate refuses $1"
  fi
}
refuse "a short line" "R worked.cmt worked 1 ns" "expected ROW FILE MAPPING"
refuse "a bad number" "R worked.cmt worked -3 ns fit" "not a positive number"
refuse "a bad unit" "R worked.cmt worked 3 hours fit" "is not s, ms, us or ns"
refuse "a bad use" "R worked.cmt worked 3 ns maybe" "should be fit, report or part"
refuse "shell words" "R worked.cmt w;rm 3 ns fit" "letters, digits"
refuse "an empty part" "R worked.cmt worked@ 3 ns fit" "MAPPING@STATEMENT"
refuse "an undeclared overhead" "R worked.cmt worked 3 ns fit +host" "names no overhead"
refuse "a bad overhead" "overhead host -2 us" "expected overhead NAME VALUE UNIT"
refuse "an overhead twice" "overhead host 2 us
overhead host 3 us" "declared twice"
refuse "an overhead on a sum" "overhead host 2 us
R worked.cmt worked 3 ns fit
S = R 3 ns report +host" "takes no overhead"
