#!/bin/sh
# The one test runner.  Runs, in order: C unit tests, golden files
# (tests/golden/NAME.cmt beside NAME.expected), the example of every
# docs/errors page, a clean check of every example and standard-library
# file, then every tests/suites/*.sh.  Each case prints PASS or FAIL, or
# SKIP with the reason when it needs a tool that is not installed (an
# editor: Neovim, Vim with ALE, Emacs with eglot, node and the VS Code
# extension's npm packages; python3, script, /dev/full): a skipped case is
# counted as skipped, never as passed.  The last line is `N passed, N
# failed`, followed by `, N skipped` when anything was skipped.
#
#   CMTC      the compiler to test (default build/cmtc)
#   UNIT_DIR  folder of built unit tests (default build/unit)
#   UPDATE=1  rewrite golden expectations from the current output
#   VALGRIND=1 run every cmtc invocation under valgrind
#   ONLY=word run only the sections whose name contains word
#   GOLDEN=word run (or update) only the golden files whose name has word
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
CMTC=${CMTC:-build/cmtc}
case $CMTC in /*) ;; *) CMTC="$root/$CMTC" ;; esac
UNIT_DIR=${UNIT_DIR:-build/unit}
if [ "${VALGRIND:-0}" = 1 ]; then
  # by its full path: a suite that empties PATH (plots.sh hides
  # gnuplot) still runs cmtc under it
  RUN_CMTC="$(command -v valgrind) -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite $CMTC"
  # the interpreter's property test: fewer random cases under valgrind,
  # and no optimizer time limit (one cutting into lp_solve's presolve
  # makes it read uninitialised values)
  export CMT_VERIFY_CASES=${CMT_VERIFY_CASES:-50}
  export CMT_VERIFY_TIME_LIMIT=${CMT_VERIFY_TIME_LIMIT:-0}
else
  RUN_CMTC="$CMTC"
fi
export CMTC RUN_CMTC
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cmtc-tests.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
passed=0
failed=0
skipped=0

pass() { passed=$((passed + 1)); [ -n "${VERBOSE:-}" ] && echo "PASS: $1"; return 0; }
fail() { failed=$((failed + 1)); echo "FAIL: $1"; }
section() { case $1 in *${ONLY:-}*) return 0 ;; *) return 1 ;; esac; }

# Counts PASS:/FAIL:/SKIP: lines of a sub-runner's output in file $1; the
# failures and the skips (with their reasons) are shown.
count_lines() {
  p=$(grep -c '^PASS: ' "$1")
  f=$(grep -c '^FAIL: ' "$1")
  s=$(grep -c '^SKIP: ' "$1")
  passed=$((passed + p))
  failed=$((failed + f))
  skipped=$((skipped + s))
  grep -E '^(FAIL|SKIP): ' "$1"
  [ -n "${VERBOSE:-}" ] && grep '^PASS: ' "$1"
  return 0
}

if section unit; then
  for t in "$UNIT_DIR"/*; do
    [ -x "$t" ] || continue
    name=$(basename "$t")
    if [ "${VALGRIND:-0}" = 1 ]; then
      valgrind -q --error-exitcode=99 --leak-check=full "$t" > "$tmp/unit.out" 2>&1
    else
      "$t" > "$tmp/unit.out" 2>&1
    fi
    status=$?
    count_lines "$tmp/unit.out"
    if [ $status -ne 0 ] && ! grep -q '^FAIL: ' "$tmp/unit.out"; then
      fail "unit/$name exited $status without a failing check"
      tail -5 "$tmp/unit.out"
    fi
  done
fi

# Runs one golden case: $1 = folder, $2 = NAME.cmt; args from `// cmtc: ARGS`.
golden_case() {
  dir=$1 file=$2
  base=${file%.cmt}
  args=check
  first=$(head -n 1 "$dir/$file")
  case $first in "// cmtc: "*) args=${first#// cmtc: } ;; esac
  (cd "$dir" && $RUN_CMTC $args "$file" > "$tmp/golden.raw" 2>&1; echo "exit: $?" >> "$tmp/golden.raw")
  # the solver's wall-clock seconds vary from run to run: masked as `T s`;
  # the checkout's own path (in notes on standard-library files) as `ROOT`
  sed -e 's/\(solver [a-z_]* in \)[0-9.]* s/\1T s/' -e "s|$root/|ROOT/|g" \
    "$tmp/golden.raw" > "$tmp/golden.out"
  if [ "${UPDATE:-0}" = 1 ]; then
    cp "$tmp/golden.out" "$dir/$base.expected"
    pass "$dir/$file (updated)"
  elif [ ! -f "$dir/$base.expected" ]; then
    fail "$dir/$file: no $base.expected (run with UPDATE=1 and read it)"
  elif cmp -s "$tmp/golden.out" "$dir/$base.expected"; then
    pass "$dir/$file"
  else
    fail "$dir/$file: output differs from $base.expected"
    diff -u "$dir/$base.expected" "$tmp/golden.out" | head -30
  fi
}

if section golden; then
  for f in tests/golden/*${GOLDEN:-}*.cmt; do
    [ -f "$f" ] || continue
    golden_case tests/golden "$(basename "$f")"
  done
fi

if section errors; then
  for page in docs/errors/[EW]*.md; do
    [ -f "$page" ] || continue
    code=$(basename "$page" .md)
    awk '/^```cmt/{on=1; next} on && /^```/{exit} on{print}' "$page" > "$tmp/$code.cmt"
    if [ ! -s "$tmp/$code.cmt" ]; then
      # Codes no input can raise (internal consistency checks) say so.
      grep -q '<!-- no example:' "$page" || fail "$page has no \`\`\`cmt example"
      continue
    fi
    args=check
    first=$(head -n 1 "$tmp/$code.cmt")
    case $first in "// cmtc: "*) args=${first#// cmtc: } ;; esac
    (cd "$tmp" && $RUN_CMTC $args "$code.cmt" > "$tmp/err.out" 2>&1)
    if grep -q "\[$code\]" "$tmp/err.out"; then
      pass "$page raises $code"
    else
      fail "$page: its example does not raise $code"
      head -10 "$tmp/err.out"
    fi
  done
fi

if section clean; then
  for f in examples/*.cmt stdlib/std/*/*.cmt; do
    [ -f "$f" ] || continue
    if $RUN_CMTC check "$f" > "$tmp/clean.out" 2>&1; then
      pass "$f checks clean"
    else
      fail "$f does not check clean"
      head -20 "$tmp/clean.out"
    fi
  done
fi

# The suites run TEST_JOBS at a time (default: the processors), the three
# longest first so that they do not end up in one queue; each writes its
# own file, read back in a fixed order.
if section suites; then
  jobs=${TEST_JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)}
  case $jobs in ''|*[!0-9]*|0) jobs=1 ;; esac
  order=
  for s in tests/suites/optimizer.sh tests/suites/examples.sh tests/suites/sweep.sh \
           tests/suites/*.sh; do
    [ -f "$s" ] || continue
    case " $order " in *" $s "*) continue ;; esac
    order="$order $s"
  done
  started=0
  for s in $order; do
    # a free place: fewer running than jobs (each writes its status at the end)
    while [ $((started - $(ls "$tmp" | grep -c '^suite\..*\.status$'))) -ge "$jobs" ]; do
      sleep 1
    done
    out="$tmp/suite.$(basename "$s" .sh)"
    (sh "$s" > "$out.out" 2>&1; echo $? > "$out.status") &
    started=$((started + 1))
  done
  wait
  for s in $order; do
    out="$tmp/suite.$(basename "$s" .sh)"
    status=$(cat "$out.status" 2>/dev/null || echo 99)
    count_lines "$out.out"
    if [ "$status" -ne 0 ] && ! grep -q '^FAIL: ' "$out.out"; then
      fail "$s exited $status without a failing case"
      tail -10 "$out.out"
    fi
  done
fi

if [ "$skipped" -eq 0 ]; then
  echo "$passed passed, $failed failed"
else
  echo "$passed passed, $failed failed, $skipped skipped"
fi
[ "$failed" -eq 0 ]
