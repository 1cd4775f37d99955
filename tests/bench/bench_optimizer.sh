#!/bin/sh
# bench_optimizer.sh — the mapping optimizer (docs/optimizer.md).
#   1. COMET's GEMM-Softmax, GEMM-LayerNorm and attention at published
#      shapes on the edge and cloud archs (the `searched_*` mappings of
#      examples/comet_*.cmt: split, tiles and fusion all holes): solve time,
#      model size, the optimal fused speedup over unfused beside COMET's
#      headline 1.42x / 3.46x / 1.82x, and the exhaustive enumerator's time
#      on the same space (cut at EXHAUSTIVE_LIMIT seconds, default 20).
#   2. GPT-3 175B layer on 8 SN10 (examples/dfmodel_gpt3_sn10.cmt,
#      `searched`: split and grouping holes) beside the hand mappings and
#      DFModel's published seconds.
#   3. Scaling: tests/opt/scaling.cmt, statements x holes x chips, up to a
#      96-layer GPT-3 on 1024 chips: time and model size.
#   4. A GPU GEMM's output tiles dealt jointly over 132 SMs against the
#      same SMs as a 12 x 11 grid (examples/gemm_h100.cmt): time, space.
# Goals on the 2-core machine: every COMET case < 1 s, GPT-3 layer < 5 s,
# 1024 chips < 60 s.  Times are wall-clock seconds of one run (the whole
# `cmtc compile -m`, parse to listing).
set -u
cd "$(dirname "$0")/../.."
CMTC=${CMTC:-build/cmtc}
LIMIT=${EXHAUSTIVE_LIMIT:-20}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

now() { date +%s.%N; }

# run FILE MAPPING [ARGS]: JSON in $tmp/out.json, stats in $tmp/stats, seconds in $tmp/secs
run() {
  f=$1; m=$2; shift 2
  t0=$(now)
  CMTC_OPT_STATS=1 "$CMTC" compile "$f" -m "$m" --format json "$@" >"$tmp/out.json" 2>"$tmp/stats"
  echo $? >"$tmp/code"
  t1=$(now)
  python3 -c "print('%.3f' % ($t1 - $t0))" >"$tmp/secs"
}

# field EXPR over the mapping object m (and its solver s)
field() {
  python3 -c "
import json
try:
    m = json.load(open('$tmp/out.json'))['mappings'][0]; s = m.get('solver', {})
    print($1)
except Exception as e:
    print('-')
"
}
stat() { sed -n "s/.* \([0-9]*\) $1.*/\1/p" "$tmp/stats" | head -1; }

echo "1. COMET fused dataflows, every hole searched (split, tiles at GLB, fusion)"
printf '%-44s %8s %9s %6s %6s %9s %10s %12s\n' "case" "solve s" "configs" "rows" "cols" "vs unf." "published" "exhaustive"
for spec in gemm_softmax:1.42 gemm_layernorm:3.46 attention:1.82; do
  op=${spec%%:*}; pub=${spec#*:}
  best=0
  for arch in edge cloud; do
    f=examples/comet_${arch}_${op}.cmt
    for m in $(sed -n 's/^mapping \(searched[A-Za-z0-9_]*\) .*/\1/p' "$f"); do
      run "$f" "$m"
      secs=$(cat "$tmp/secs")
      sp=$(field "'%.2f' % m['baseline']['speedup']")
      rows=$(field "s.get('rows', '-')"); cols=$(field "s.get('columns', '-')")
      cfg=$(sed -n 's/.*: \([0-9]*\) configurations.*/\1/p' "$tmp/stats")
      run "$f" "$m" --exhaustive --time-limit "$LIMIT"
      ex=$(field "('%.2f s' % s['seconds']) if s['status'] == 'optimal' else ('cut at %g s' % $LIMIT)")
      [ "$(cat "$tmp/code")" = 0 ] || ex="cut at $LIMIT s"
      printf '%-44s %8s %9s %6s %6s %8sx %9sx %12s\n' "$arch $op $m" "$secs" "${cfg:--}" "$rows" "$cols" "$sp" "$pub" "$ex"
      best=$(python3 -c "print(max($best, float('$sp') if '$sp' != '-' else 0))")
    done
  done
  printf '%-44s %8s %9s %6s %6s %8sx %9sx\n' "  best $op over both archs" "" "" "" "" "$(python3 -c "print('%.2f' % $best)")" "$pub"
done

echo
echo "2. GPT-3 175B layer on 8 SN10 chips (examples/dfmodel_gpt3_sn10.cmt)"
f=examples/dfmodel_gpt3_sn10.cmt
printf '%-24s %12s %8s %10s %s\n' "mapping" "s / batch" "groups" "solve s" "split"
for m in kernel_by_kernel vendor optimized_tp8 optimized_tp8_seqpar searched; do
  run "$f" "$m"
  lat=$(field "'%.2f' % m['latency_s']")
  grp=$(field "len(m['groups'])")
  sol=$(field "('%.3f' % s['seconds']) if s['status'] != 'not_needed' else '-'")
  spl=$(field "'; '.join(x.strip() for x in m['mapping'].split(';') if x.strip().startswith('spatial'))")
  printf '%-24s %12s %8s %10s %s\n' "$m" "$lat" "$grp" "$sol" "$spl"
done
echo "DFModel published: kernel by kernel 4909.15 s, vendor 1212.25 s, optimized (4 partitions) 1020.52 s"
run "$f" searched
python3 -c "
import json
m = json.load(open('$tmp/out.json'))['mappings'][0]
red = ['%s %s' % (n.get('collective'), n.get('statement')) for n in m['nodes']
       if n.get('collective') in ('allreduce', 'reduce_scatter', 'reduce', 'allgather')]
t = m['mapping']
print('searched: Megatron split found: %s; collectives: %s; %d groups; %.3f s' % (
    'h -> tp' in t and 'f -> tp' in t, ', '.join(red), len(m['groups']), m['solver']['seconds']))
"

echo
echo "3. Scaling (tests/opt/scaling.cmt)"
printf '%-14s %6s %-26s %6s %8s %6s %9s %6s %6s %9s\n' "mapping" "stmts" "holes" "chips" "configs" "arcs" "lowerings" "rows" "cols" "seconds"
for m in mlp_8 mlp_64 layernorm_8 attention_64 gpt_8 gpt_8_tiles gpt_64 gpt_1024; do
  run tests/opt/scaling.cmt "$m" --time-limit 600
  body=$(sed -n "/^mapping $m /,/^}/p" tests/opt/scaling.cmt)
  holes=$(echo "$body" | grep '?' | sed 's/^ *//; s/;$//' | tr '\n' ',' | sed 's/,$//; s/,/, /g')
  stmts=$(field "len(m['groups']) and sum(len(g['statements']) for g in m['groups'])")
  arch=$(field "m['arch']")
  chips=$(echo "$arch" | sed -n 's/sn10_\([0-9]*\)chip/\1/p')
  cfg=$(sed -n 's/.*: \([0-9]*\) configurations.*/\1/p' "$tmp/stats")
  arcs=$(sed -n 's/.* \([0-9]*\) arcs.*/\1/p' "$tmp/stats")
  low=$(sed -n 's/.* \([0-9]*\) lowerings.*/\1/p' "$tmp/stats")
  rows=$(field "s.get('rows', '-')"); cols=$(field "s.get('columns', '-')")
  printf '%-14s %6s %-26s %6s %8s %6s %9s %6s %6s %9s\n' "$m" "$stmts" "$holes" "${chips:-?}" "${cfg:--}" "${arcs:--}" "${low:--}" "$rows" "$cols" "$(cat "$tmp/secs")"
done

echo
echo "4. A GPU GEMM's output tiles dealt to the SMs (examples/gemm_h100.cmt):"
echo "   jointly over std.arch.h100's 132 SMs (waves) against a 12 x 11 grid (best)"
printf '%-10s %9s %12s %10s %s\n' "mapping" "solve s" "candidates" "latency" "complete mapping"
for m in waves best; do
  run examples/gemm_h100.cmt "$m"
  printf '%-10s %9s %12s %10s %s\n' "$m" "$(cat "$tmp/secs")" \
    "$(field "s.get('candidates', '-')")" "$(field "'%.3f ms' % (m['latency_s'] * 1e3)")" \
    "$(field "m['mapping']")"
done
