#!/bin/sh
# bench_eval.sh — how fast cmtc costs a mapping.
#  1. evaluate_mapping (the optimizer's inner loop, no text) on every
#     complete mapping of the examples: the median of 2001 timed calls
#     (`cmtc compile --time-eval`); the goal is under 1 ms for COMET cases.
#  2. the whole `cmtc compile` of each complete mapping of each example
#     (check, lowering with reasons, baseline, listing): median of 5 runs.
set -u
cd "$(dirname "$0")/../.."
CMTC=${CMTC:-build/cmtc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

now_ns() { date +%s%N; }

printf '%-28s %-34s %14s %16s\n' "example" "mapping" "evaluate (us)" "compile (ms)"
printf '%-28s %-34s %14s %16s\n' "-------" "-------" "-------------" "------------"
worst=0
for f in examples/*.cmt; do
  name=$(basename "$f" .cmt)
  # complete mappings: no `?` between `mapping NAME` and the closing brace
  awk '/^mapping /{name=$2; hole=0} /\?/{hole=1} /^}/{if (name != "" && !hole) print name; name=""}' "$f" \
    > "$tmp/maps"
  while read -r m; do
    line=$("$CMTC" compile "$f" -m "$m" --time-eval 2001 2>/dev/null)
    us=$(echo "$line" | sed -n 's/.*evaluate median \([0-9.]*\) us.*/\1/p')
    : > "$tmp/times"
    for i in 1 2 3 4 5; do
      a=$(now_ns)
      "$CMTC" compile "$f" -m "$m" > /dev/null 2>&1
      b=$(now_ns)
      echo $(( (b - a) / 1000 )) >> "$tmp/times"
    done
    ms=$(sort -n "$tmp/times" | sed -n 3p | awk '{printf "%.2f", $1 / 1000}')
    printf '%-28s %-34s %14s %16s\n' "$name" "$m" "${us:-error}" "$ms"
    case $name in comet_*)
      if [ -n "$us" ] && awk "BEGIN{exit !($us > $worst)}"; then worst=$us; fi ;;
    esac
  done < "$tmp/maps"
done
echo
echo "slowest COMET evaluation: $worst us (goal: under 1000 us)"
