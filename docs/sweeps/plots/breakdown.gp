# breakdown.gp: the time of each ok point, stacked by what it is spent on.
# Written by cmtc plot from dse_gemm_softmax.csv; the data is in breakdown.dat.  Restyle it and run
# it in this folder: `gnuplot breakdown.gp` draws breakdown.svg, and
# `gnuplot -e "format='png'" breakdown.gp` draws breakdown.png.
if (!exists("format")) format = 'svg'
if (format eq 'png') {
    set terminal pngcairo size 2400,700 font 'Sans,10' noenhanced
} else {
    set terminal svg size 2400,700 dynamic font 'sans-serif,13' noenhanced background '#ffffff'
}
set output 'breakdown.' . format
set encoding utf8
set border lw 1 lc rgb '#555555'
set grid lt 1 lw 1 lc rgb '#e0e0e0'
set key box lc rgb '#cccccc' Left reverse samplen 2 spacing 1.2
set tics nomirror out scale 0.6
set title 'Where the time goes'."\n".'gemm_softmax'."\n".'336 of 432 points ok; not plotted: 96 infeasible'
set style data histograms
set style histogram rowstacked
set style fill solid 1 noborder
set boxwidth 1 relative
set grid noxtics ytics
set xtics rotate by 90 right scale 0
set ylabel 'time (ms)'
set xlabel 'point'
set yrange [0:*]
set key outside right top vertical width 1
plot 'breakdown.dat' using ($3*1000):xtic(int($0) % 9 == 0 ? stringcolumn(2) : '') title 'compute' lc rgb '#4e79a7', \
     'breakdown.dat' using ($4*1000) title 'memory' lc rgb '#f28e2b', \
     'breakdown.dat' using ($7*1000) title 'other' lc rgb '#b07aa1'
