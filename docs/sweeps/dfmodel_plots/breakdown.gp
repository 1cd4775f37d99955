# breakdown.gp: the time of each ok point, stacked by what it is spent on.
# Written by cmtc plot from dse_dfmodel_systems.csv; the data is in breakdown.dat.  Restyle it and run
# it in this folder: `gnuplot breakdown.gp` draws breakdown.svg, and
# `gnuplot -e "format='png'" breakdown.gp` draws breakdown.png.
if (!exists("format")) format = 'svg'
if (format eq 'png') {
    set terminal pngcairo size 1628,700 font 'Sans,10' noenhanced
} else {
    set terminal svg size 1628,700 dynamic font 'sans-serif,13' noenhanced background '#ffffff'
}
set output 'breakdown.' . format
set encoding utf8
set border lw 1 lc rgb '#555555'
set grid lt 1 lw 1 lc rgb '#e0e0e0'
set key box lc rgb '#cccccc' Left reverse samplen 2 spacing 1.2
set tics nomirror out scale 0.6
set title 'Where the time goes'."\n".'gpt_layer'."\n".'76 of 80 points ok; not plotted: 4 infeasible'
set style data histograms
set style histogram rowstacked
set style fill solid 1 border lc rgb '#ffffff'
set boxwidth 0.75 relative
set grid noxtics ytics
set xtics rotate by 90 right scale 0
set ylabel 'time (s)'
set xlabel 'point'
set yrange [0:*]
set key outside right top vertical width 1
plot 'breakdown.dat' using ($3*1):xtic(int($0) % 2 == 0 ? stringcolumn(2) : '') title 'compute' lc rgb '#4e79a7', \
     'breakdown.dat' using ($4*1) title 'memory' lc rgb '#f28e2b', \
     'breakdown.dat' using ($5*1) title 'network' lc rgb '#59a14f', \
     'breakdown.dat' using ($6*1) title 'bubble' lc rgb '#bab0ac'
