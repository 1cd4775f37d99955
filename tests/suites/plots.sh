#!/bin/sh
# tests/suites/plots.sh — `cmtc plot` on the fixture tests/plots/sweep.csv
# (30 points, 25 ok; its README works out every number expected here):
#   plots_files      every SVG, with its .dat and .gp, nothing temporary left
#   plots_svg_*      each SVG is well-formed SVG holding its title, axis
#                    labels with units, legend and the note on the 5 points
#                    not ok
#   plots_pareto     the frontier in pareto.dat is the 4 points worked out
#                    by hand, in order of latency
#   plots_roofline   6 roofs, the 25 ok points
#   plots_breakdown  25 bars in point order
#   plots_heatmap    14 cells, the one without an ok point left out, a
#                    cell's least latency and greatest utilisation
#   plots_rerun      the kept scripts draw the same SVG again (restyling)
#   plots_*roofs, plots_log_scales, plots_no_heatmap  other sweeps: more
#                    than 8 roofs, values spanning more than 100x, one
#                    numeric axis
#   plots_bad_*      a CSV with mistakes: exit 1, file and line, the old
#                    plots kept
#   plots_no_gnuplot gnuplot missing: exit 2 and the install command
# Needs gnuplot (Debian gnuplot-nox) to draw and python3 to read the SVGs:
# the cases that need one that is missing are skipped, and say so.
CMTC=${CMTC:-build/cmtc}
case $CMTC in /*) ;; *) CMTC=$(pwd)/$CMTC ;; esac
RUN=${RUN_CMTC:-$CMTC}
root=$(pwd)
fixture=$root/tests/plots/sweep.csv
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; }
cd "$tmp" || exit 1

# --- gnuplot missing (needs neither gnuplot nor python3)
PATH=/nonexistent $RUN plot "$fixture" --plots missing >out 2>err
s=$?
if [ $s -eq 2 ] && grep -q 'gnuplot' err &&
    grep -q 'apt-get install -y --no-install-recommends gnuplot-nox' err && [ ! -e missing ]; then
    pass plots_no_gnuplot
else
    fail plots_no_gnuplot "exit $s: $(head -c 300 err)"
fi

# --- a gnuplot that never finishes, ended by SIGTERM: cmtc ends it and
# what it started, and leaves no stage folder (needs no gnuplot)
mkdir -p stuck
printf '#!/bin/sh\nsleep 600\n' >stuck/gnuplot
chmod +x stuck/gnuplot
PATH="$tmp/stuck:/usr/bin:/bin" timeout -s TERM 2 $RUN plot "$fixture" --plots hung >out 2>err
s=$?
sleep 0.3
left=$(ls -a hung 2>/dev/null | grep -c '^\.cmtc-plots-')
if [ $s -eq 124 ] && [ "$left" -eq 0 ] && ! pgrep -f "$tmp/stuck/gnuplot" >/dev/null &&
    ! pgrep -f "^sleep 600$" >/dev/null; then
    pass plots_signal_cleans_up
else
    fail plots_signal_cleans_up "exit $s, $left stage folders left; $(pgrep -af "$tmp/stuck" | head -c 200)"
fi

if ! command -v gnuplot >/dev/null 2>&1; then
    echo "SKIP: plots: gnuplot is not installed (apt-get install -y --no-install-recommends gnuplot-nox)"
    exit 0
fi

# --- the fixture
$RUN plot "$fixture" --plots plots >out 2>err
s=$?
if [ $s -ne 0 ] || [ -s err ]; then
    fail plots_run "exit $s: $(head -c 500 err)"
fi
missing=""
for f in pareto roofline breakdown heatmap; do
    for k in svg dat gp; do [ -s "plots/$f.$k" ] || missing="$missing $f.$k"; done
done
for k in svg gp; do [ -s "plots/heatmap_utilisation.$k" ] || missing="$missing heatmap_utilisation.$k"; done
leftover=$(ls -a plots | grep '\.cmtc-')
if [ -z "$missing" ] && [ -z "$leftover" ]; then
    pass plots_files
else
    fail plots_files "missing:$missing; temporary: $leftover"
fi

# svg_has NAME TEXT...: NAME.svg holds every TEXT (as gnuplot writes it)
svg_has() {
    name=$1
    shift
    lacking=""
    for text in "$@"; do
        grep -qF -- "$text" "plots/$name.svg" || lacking="$lacking [$text]"
    done
    if [ -z "$lacking" ]; then pass "plots_svg_$name"; else fail "plots_svg_$name" "lacks$lacking"; fi
}
note='25 of 30 points ok; not plotted: 3 infeasible, 1 error, 1 time_limit'
op='gemm&lt;M = 4096, N = 4096, K = 4096>'
svg_has pareto '<svg' 'Latency and energy of each point' "$op" "$note" 'latency (ms)' \
    'energy (mJ)' 'ok point (25)' 'Pareto frontier (4 points, labelled mapping tile HBM (B/s))' \
    'split2 1024 2T' 'single 512 1T'
svg_has roofline 'Roofline' "$note" 'operational intensity (FLOP/B' 'achieved (TFLOP/s)' \
    'roof 312 TFLOP/s, 1 TB/s' 'roof 624 TFLOP/s, 6.7 TB/s'
svg_has breakdown 'Where the time goes' "$note" 'time (ms)' 'point: mapping tile HBM (B/s)' \
    '>compute<' '>memory<' '>network<' '>bubble<' '>other<' 'single 64 1T' 'split2 1024 3.35T'
svg_has heatmap 'Least latency for each tile and HBM, over mapping' "$note; blank: no ok point" \
    'latency (ms)' '>tile<' 'HBM (B/s)' '>3.35T<' '>1024<' '>0.48<'
svg_has heatmap_utilisation 'Greatest utilisation for each tile and HBM, over mapping' \
    'utilisation (% of peak FLOP/s)' '>34%<' '>89%<'

if command -v python3 >/dev/null 2>&1; then
    bad=""
    for f in plots/*.svg; do
        python3 -c 'import sys, xml.etree.ElementTree as E
r = E.parse(sys.argv[1]).getroot()
sys.exit(0 if r.tag.endswith("svg") else 1)' "$f" 2>/dev/null || bad="$bad $f"
    done
    [ -z "$bad" ] && pass plots_svg_well_formed || fail plots_svg_well_formed "not SVG:$bad"
else
    echo "SKIP: plots_svg_well_formed: python3 is not installed (it parses the SVGs)"
fi

# the lines of data block N (0-based) of a gnuplot data file, comments out
block() {
    awk -v want="$2" '/^#/ {next} /^$/ {blank++; next} { if (blank >= 2) { n++ } blank = 0; if (n == want) print }' "$1"
}

# --- pareto.dat: block 0 every ok point, block 1 the frontier
points=$(block plots/pareto.dat 0 | wc -l)
frontier=$(block plots/pareto.dat 1 | awk '{printf "%s ", $1}')
if [ "$points" -eq 25 ] && [ "$frontier" = "28 24 10 9 " ]; then
    pass plots_pareto
else
    fail plots_pareto "$points points, frontier [$frontier], expected 25 and [28 24 10 9 ]"
fi

# --- roofline: 6 point blocks then 6 roof blocks, 25 points in all
roofs=$(grep -c "NaN with linespoints" plots/roofline.gp)
in_blocks=0
for b in 0 1 2 3 4 5; do in_blocks=$((in_blocks + $(block plots/roofline.dat $b | wc -l))); done
ridge=$(block plots/roofline.dat 11 | awk 'NR == 2 {print $1 " " $2}')
if [ "$roofs" -eq 6 ] && [ "$in_blocks" -eq 25 ] && [ "$ridge" = "93.13432836 6.24e+14" ]; then
    pass plots_roofline
else
    fail plots_roofline "$roofs roofs, $in_blocks points, last ridge [$ridge]"
fi

# --- breakdown: 25 bars in point order, each stack adding up to its latency
order=$(block plots/breakdown.dat 0 | awk '{printf "%s ", $1}')
sums=$(block plots/breakdown.dat 0 | awk '{
    n = split($0, f, "\"")          # the label is quoted and may hold spaces
    split(f[3], v, " ")
    s = v[1] + v[2] + v[3] + v[4] + v[5]
    if (s - v[6] > 1e-4 * v[6] || v[6] - s > 1e-4 * v[6]) bad++  # the CSV has 6 digits
} END { print bad + 0 }')
expected="0 1 2 3 4 5 6 7 8 9 10 11 15 16 18 19 20 21 22 23 24 25 26 28 29 "
if [ "$order" = "$expected" ] && [ "$sums" -eq 0 ]; then
    pass plots_breakdown
else
    fail plots_breakdown "order [$order], $sums stacks off their latency"
fi

# --- heatmap: 14 cells; (512, 1 TB/s) and (64, 3.35 TB/s) by hand
cells=$(block plots/heatmap.dat 0 | wc -l)
blank=$(block plots/heatmap.dat 0 | awk '$1 == 4 && $2 == 0' | wc -l)
least=$(block plots/heatmap.dat 0 | awk '$3 == 512 && $4 == 1e12 {print $5}')
greatest=$(block plots/heatmap.dat 0 | awk '$3 == 64 && $4 == 3.35e12 {print $6}')
if [ "$cells" -eq 14 ] && [ "$blank" -eq 0 ] && [ "$least" = "0.000479762" ] &&
    [ "$greatest" = "0.339874" ]; then
    pass plots_heatmap
else
    fail plots_heatmap "$cells cells, $blank at (1024, 1T), least [$least], greatest [$greatest]"
fi

# --- the kept scripts run as they are, in their folder
cp plots/pareto.svg pareto.before
if (cd plots && gnuplot pareto.gp 2>&1 && gnuplot -e "format='png'" roofline.gp 2>&1) >rerun.err &&
    cmp -s plots/pareto.svg pareto.before && [ -s plots/roofline.png ] && [ ! -s rerun.err ]; then
    pass plots_rerun
else
    fail plots_rerun "$(head -c 300 rerun.err)"
fi
rm -f plots/roofline.png

# --- a CSV with mistakes: exit 1, each with file and line; the plots kept
cp "$fixture" bad.csv
sed -i '5s/,0\.00218504,/,fast,/' bad.csv
$RUN plot bad.csv --plots plots >out 2>err
s=$?
if [ $s -eq 1 ] && grep -q "^bad.csv:5: error: column 'latency_s': 'fast' is not a number" err &&
    cmp -s plots/pareto.svg pareto.before && [ -z "$(ls -a plots | grep '\.cmtc-')" ]; then
    pass plots_bad_number
else
    fail plots_bad_number "exit $s: $(head -c 300 err)"
fi
sed '1s/,utilisation,/,use,/' "$fixture" >bad.csv
$RUN plot bad.csv --plots plots >out 2>err
s=$?
[ $s -eq 1 ] && grep -q "^bad.csv:1: error: no column 'utilisation' in the header" err &&
    pass plots_bad_missing_column || fail plots_bad_missing_column "exit $s: $(head -c 300 err)"
: >empty.csv
$RUN plot empty.csv --plots plots >out 2>err
s=$?
[ $s -eq 1 ] && grep -q "^empty.csv:1: error: the file is empty" err &&
    pass plots_bad_empty || fail plots_bad_empty "exit $s: $(head -c 300 err)"
$RUN plot "$fixture" --plots bad.csv/plots >out 2>err
s=$?
[ $s -eq 2 ] && grep -q "^bad.csv/plots: error: bad.csv is not a folder" err &&
    pass plots_bad_folder || fail plots_bad_folder "exit $s: $(head -c 300 err)"

# --- more than 8 roofs: the highest and the lowest, and a note; 10 points
#     of 10 machines, each flat against its own roof
{
    echo "point,x.n,status,latency_s,energy_j,time_compute_s,time_memory_s,time_network_s,time_bubble_s,time_other_s,intensity_flop_per_b,achieved_flop_per_s,peak_flop_per_s,peak_outer_b_per_s,utilisation"
    for i in 0 1 2 3 4 5 6 7 8 9; do
        echo "$i,$i,ok,1e-3,$((i + 1))e-3,1e-3,0,0,0,0,100,${i}5e12,$((i + 1))0e12,1e12,0.5"
    done
} >roofs.csv
$RUN plot roofs.csv --plots roofs >out 2>err
s=$?
if [ $s -eq 0 ] && grep -q "title 'lowest roof: 10 TFLOP/s, 1 TB/s'" roofs/roofline.gp &&
    grep -q "title 'highest roof: 100 TFLOP/s, 1 TB/s'" roofs/roofline.gp &&
    [ "$(grep -c ' with lines ' roofs/roofline.gp)" -eq 4 ] &&
    grep -qF '10 distinct roofs: the highest and lowest drawn' roofs/roofline.svg &&
    [ "$(block roofs/roofline.dat 0 | wc -l)" -eq 10 ]; then
    pass plots_many_roofs
else
    fail plots_many_roofs "exit $s: $(head -c 300 err)"
fi

# --- one numeric axis (and a text one): no heatmap, a note; the old
#     heatmap of another sweep is removed
cp -r plots onefolder
# (x.tile is the third field of the header and of every row; the second
# lines of the two-line fields start otherwise)
sed -E '/^(point|[0-9]+),/s/^([^,]*,[^,]*),[^,]*,/\1,/' "$fixture" >one_axis.csv
$RUN plot one_axis.csv --plots onefolder >out 2>err
s=$?
if [ $s -eq 0 ] && grep -q "^one_axis.csv: note: no heatmap: it needs two numeric axes" err &&
    [ ! -e onefolder/heatmap.svg ] && [ ! -e onefolder/heatmap_utilisation.svg ] &&
    [ ! -e onefolder/heatmap.dat ] && [ -s onefolder/pareto.svg ]; then
    pass plots_no_heatmap
else
    fail plots_no_heatmap "exit $s: $(head -c 300 err); $(ls onefolder | tr '\n' ' ')"
fi

# --- values spanning more than 100x: logarithmic axes; within: linear
{
    echo "point,x.a,x.b,status,latency_s,energy_j,time_compute_s,time_memory_s,time_network_s,time_bubble_s,time_other_s,intensity_flop_per_b,achieved_flop_per_s,peak_flop_per_s,peak_outer_b_per_s,utilisation"
    echo "0,1,1,ok,2e-6,5e-2,2e-6,0,0,0,0,10,1e12,1e14,1e12,0.01"
    echo "1,1,2,ok,5e-4,1e-4,5e-4,0,0,0,0,10,1e12,1e14,1e12,0.01"
    echo "2,2,1,ok,1e-5,1e-3,1e-5,0,0,0,0,10,1e12,1e14,1e12,0.01"
} >wide.csv
$RUN plot wide.csv --plots wide >out 2>err
s=$?
if [ $s -eq 0 ] && grep -q '^set logscale x$' wide/pareto.gp && grep -q '^set logscale y$' wide/pareto.gp &&
    grep -q "^set xlabel 'latency (µs)'" wide/pareto.gp && grep -q '^set logscale cb$' wide/heatmap.gp &&
    ! grep -q 'logscale' plots/pareto.gp; then
    pass plots_log_scales
else
    fail plots_log_scales "exit $s: $(head -c 300 err)"
fi
