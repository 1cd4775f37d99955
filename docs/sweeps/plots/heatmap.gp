# heatmap.gp: the least latency of each cell of two numeric axes.
# Written by cmtc plot from dse_gemm_softmax.csv; the data is in heatmap.dat.  Restyle it and run
# it in this folder: `gnuplot heatmap.gp` draws heatmap.svg, and
# `gnuplot -e "format='png'" heatmap.gp` draws heatmap.png.
if (!exists("format")) format = 'svg'
if (format eq 'png') {
    set terminal pngcairo size 900,720 font 'Sans,10' noenhanced
} else {
    set terminal svg size 900,720 dynamic font 'sans-serif,13' noenhanced background '#ffffff'
}
set output 'heatmap.' . format
set encoding utf8
set border lw 1 lc rgb '#555555'
set grid lt 1 lw 1 lc rgb '#e0e0e0'
set key box lc rgb '#cccccc' Left reverse samplen 2 spacing 1.2
set tics nomirror out scale 0.6
# (heatmap.dat has both metrics.)
set title 'Least latency for each DRAM_BW and GLB_SIZE, over mapping, PES, NOC, K, M, N'."\n".'gemm_softmax'."\n".'336 of 432 points ok; not plotted: 96 infeasible'
set xlabel 'DRAM_BW (B/s)'
set ylabel 'GLB_SIZE (B)'
set xtics ('16G' 0, '64G' 1, '256G' 2)
set ytics ('5.24e+05' 0, '2.1M' 1, '8.39M' 2)
set xrange [-0.5:2.5]
set yrange [-0.5:2.5]
set tics scale 0
unset grid
unset key
set border lw 0
set palette defined (0 '#440154', 0.25 '#3b528b', 0.5 '#21918c', 0.75 '#5ec962', 1 '#fde725')
set cblabel 'latency (µs)'
plot 'heatmap.dat' using 1:2:(0.5):(0.5):($5*1000000) with boxxyerror fs solid 1 border lc rgb '#ffffff' fc palette notitle, \
     'heatmap.dat' using 1:2:7:(column(9) > 0 ? 0xffffff : 0x000000) with labels tc rgb variable notitle
