# pareto.gp: latency against energy of the ok points, the Pareto frontier joined.
# Written by cmtc plot from dse_gemm_softmax.csv; the data is in pareto.dat.  Restyle it and run
# it in this folder: `gnuplot pareto.gp` draws pareto.svg, and
# `gnuplot -e "format='png'" pareto.gp` draws pareto.png.
if (!exists("format")) format = 'svg'
if (format eq 'png') {
    set terminal pngcairo size 1000,700 font 'Sans,10' noenhanced
} else {
    set terminal svg size 1000,700 dynamic font 'sans-serif,13' noenhanced background '#ffffff'
}
set output 'pareto.' . format
set encoding utf8
set border lw 1 lc rgb '#555555'
set grid lt 1 lw 1 lc rgb '#e0e0e0'
set key box lc rgb '#cccccc' Left reverse samplen 2 spacing 1.2
set tics nomirror out scale 0.6
set title 'Latency and energy of each point'."\n".'gemm_softmax'."\n".'336 of 432 points ok; not plotted: 96 infeasible'
set xlabel 'latency (ms)'
set ylabel 'energy (mJ)'
set logscale x
set logscale y
set offsets 0, 0, 0, 0
set key below height 1 nobox
plot 'pareto.dat' index 0 using ($2*1000):($3*1000) with points pt 7 ps 0.9 lc rgb '#9aa5b1' \
       title 'ok point (336)', \
     'pareto.dat' index 1 using ($2*1000):($3*1000) with linespoints lw 2 pt 7 ps 1.3 lc rgb '#e15759' \
       title 'Pareto frontier (9 points)'
