# roofline.gp: achieved FLOP/s against operational intensity, under the roof of each machine.
# Written by cmtc plot from dse_dfmodel_systems.csv; the data is in roofline.dat.  Restyle it and run
# it in this folder: `gnuplot roofline.gp` draws roofline.svg, and
# `gnuplot -e "format='png'" roofline.gp` draws roofline.png.
if (!exists("format")) format = 'svg'
if (format eq 'png') {
    set terminal pngcairo size 1000,700 font 'Sans,10' noenhanced
} else {
    set terminal svg size 1000,700 dynamic font 'sans-serif,13' noenhanced background '#ffffff'
}
set output 'roofline.' . format
set encoding utf8
set border lw 1 lc rgb '#555555'
set grid lt 1 lw 1 lc rgb '#e0e0e0'
set key box lc rgb '#cccccc' Left reverse samplen 2 spacing 1.2
set tics nomirror out scale 0.6
set title 'Roofline'."\n".'gpt_layer'."\n".'76 of 80 points ok; not plotted: 4 infeasible'
set logscale xy
set xlabel 'operational intensity (FLOP/B at the outermost memory)'
set ylabel 'achieved (EFLOP/s)'
set xrange [10:100000]
set yrange [0.001:100]
set format x '%g'
set format y '%g'
set key below height 1 nobox samplen 4
plot 'roofline.dat' index 8 using 1:($2*1e-18) with lines lw 2 dt 1 lc rgb '#4e79a7' notitle, \
     NaN with linespoints pt 7 lw 2 dt 1 lc rgb '#4e79a7' title 'roof 253 PFLOP/s, 205 TB/s', \
     'roofline.dat' index 9 using 1:($2*1e-18) with lines lw 2 dt 2 lc rgb '#f28e2b' notitle, \
     NaN with linespoints pt 7 lw 2 dt 2 lc rgb '#f28e2b' title 'roof 253 PFLOP/s, 3.07 PB/s', \
     'roofline.dat' index 10 using 1:($2*1e-18) with lines lw 2 dt 3 lc rgb '#e15759' notitle, \
     NaN with linespoints pt 7 lw 2 dt 3 lc rgb '#e15759' title 'roof 566 PFLOP/s, 205 TB/s', \
     'roofline.dat' index 11 using 1:($2*1e-18) with lines lw 2 dt 4 lc rgb '#76b7b2' notitle, \
     NaN with linespoints pt 7 lw 2 dt 4 lc rgb '#76b7b2' title 'roof 566 PFLOP/s, 3.07 PB/s', \
     'roofline.dat' index 12 using 1:($2*1e-18) with lines lw 2 dt 1 lc rgb '#59a14f' notitle, \
     NaN with linespoints pt 7 lw 2 dt 1 lc rgb '#59a14f' title 'roof 915 PFLOP/s, 205 TB/s', \
     'roofline.dat' index 13 using 1:($2*1e-18) with lines lw 2 dt 2 lc rgb '#edc948' notitle, \
     NaN with linespoints pt 7 lw 2 dt 2 lc rgb '#edc948' title 'roof 915 PFLOP/s, 3.07 PB/s', \
     'roofline.dat' index 14 using 1:($2*1e-18) with lines lw 2 dt 3 lc rgb '#b07aa1' notitle, \
     NaN with linespoints pt 7 lw 2 dt 3 lc rgb '#b07aa1' title 'roof 6.91 EFLOP/s, 205 TB/s', \
     'roofline.dat' index 15 using 1:($2*1e-18) with lines lw 2 dt 4 lc rgb '#ff9da7' notitle, \
     NaN with linespoints pt 7 lw 2 dt 4 lc rgb '#ff9da7' title 'roof 6.91 EFLOP/s, 3.07 PB/s', \
     'roofline.dat' index 0 using 2:($3*1e-18) with points pt 7 ps 1 lc rgb '#4e79a7' notitle, \
     'roofline.dat' index 1 using 2:($3*1e-18) with points pt 7 ps 1 lc rgb '#f28e2b' notitle, \
     'roofline.dat' index 2 using 2:($3*1e-18) with points pt 7 ps 1 lc rgb '#e15759' notitle, \
     'roofline.dat' index 3 using 2:($3*1e-18) with points pt 7 ps 1 lc rgb '#76b7b2' notitle, \
     'roofline.dat' index 4 using 2:($3*1e-18) with points pt 7 ps 1 lc rgb '#59a14f' notitle, \
     'roofline.dat' index 5 using 2:($3*1e-18) with points pt 7 ps 1 lc rgb '#edc948' notitle, \
     'roofline.dat' index 6 using 2:($3*1e-18) with points pt 7 ps 1 lc rgb '#b07aa1' notitle, \
     'roofline.dat' index 7 using 2:($3*1e-18) with points pt 7 ps 1 lc rgb '#ff9da7' notitle
