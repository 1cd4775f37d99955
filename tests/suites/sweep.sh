#!/bin/sh
# `cmtc sweep` (docs/sweeps.md) for real: the example's CSV is the one kept
# in docs/sweeps/; one worker and two give the same rows; three shards run
# as concurrent processes merge to exactly the rows of the whole run; a
# row cut short by an interruption is redone and an interrupted sweep is
# finished by a rerun; failed points are rows with their status; JSON
# Lines parse; the Slurm scripts are valid shell (and run through a real
# Slurm when one is installed); bad input is refused with a message; and
# the serving study and four points of DFModel's systems study give
# docs/sweeps/'s rows.
set -u
CMTC=${CMTC:-build/cmtc}
case $CMTC in /*) ;; *) CMTC=$(pwd)/$CMTC ;; esac
RUN=${RUN_CMTC:-$CMTC}
root=$(pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cmtc-sweep.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1: $2"; }
# relative, as the rows' messages name them
small=tests/sweep/small.cmt
example=examples/dse_gemm_softmax.cmt

# --- the example's rows are docs/sweeps/'s
if $RUN sweep "$example" -j 2 -o "$tmp/study.csv" 2>"$tmp/err" &&
    cmp -s "$tmp/study.csv" "$root/docs/sweeps/dse_gemm_softmax.csv"; then
  pass sweep_example_rows
else
  fail sweep_example_rows "differs from docs/sweeps/dse_gemm_softmax.csv: $(diff "$tmp/study.csv" "$root/docs/sweeps/dse_gemm_softmax.csv" | head -c 400) $(head -c 300 "$tmp/err")"
fi
# --- the serving study's rows are docs/sweeps/'s
if $RUN sweep examples/llama3_8b_serving.cmt -j 2 -o "$tmp/serving.csv" 2>"$tmp/err" &&
    cmp -s "$tmp/serving.csv" "$root/docs/sweeps/llama3_8b_serving.csv"; then
  pass sweep_serving_rows
else
  fail sweep_serving_rows "differs from docs/sweeps/llama3_8b_serving.csv: $(diff "$tmp/serving.csv" "$root/docs/sweeps/llama3_8b_serving.csv" | head -c 300) $(head -c 200 "$tmp/err")"
fi

# --- DFModel's systems study (80 points, minutes): the rows of four
# quick points, two shards of the whole, are docs/sweeps/'s own rows
systems=examples/dse_dfmodel_systems.cmt
systems_csv="$root/docs/sweeps/dse_dfmodel_systems.csv"
ok_systems=true
for shard in 3/40 5/40; do
  if ! $RUN sweep "$systems" --shard "$shard" -j 1 -o "$tmp/systems.csv" 2>"$tmp/err"; then
    ok_systems=false
    break
  fi
  tail -n +2 "$tmp/systems.csv" >"$tmp/systems_rows"
  cut -d, -f1 "$tmp/systems_rows" | while read -r point; do
    grep "^$point," "$systems_csv"
  done >"$tmp/systems_kept"
  if [ ! -s "$tmp/systems_rows" ] || ! cmp -s "$tmp/systems_rows" "$tmp/systems_kept"; then
    ok_systems=false
    break
  fi
done
if $ok_systems; then
  pass sweep_systems_rows_are_docs
else
  fail sweep_systems_rows_are_docs "shard $shard differs from $systems_csv: $(diff "$tmp/systems_rows" "$tmp/systems_kept" 2>/dev/null | head -c 300) $(head -c 200 "$tmp/err")"
fi
rows=$(($(wc -l <"$tmp/study.csv") - 1))
[ "$rows" -ge 200 ] && pass "sweep_example_points ($rows)" || fail sweep_example_points "$rows rows"

# --- one worker and two
$RUN sweep "$small" -j 1 -o "$tmp/j1.csv" 2>/dev/null
$RUN sweep "$small" -j 2 -o "$tmp/j2.csv" 2>"$tmp/err"
if [ -s "$tmp/j1.csv" ] && cmp -s "$tmp/j1.csv" "$tmp/j2.csv"; then
  pass sweep_jobs_agree
else
  fail sweep_jobs_agree "$(diff "$tmp/j1.csv" "$tmp/j2.csv" | head -c 300)"
fi
# 24 points, 6 infeasible: rows, never a lost sweep
ok=$(grep -c ',ok,' "$tmp/j1.csv")
bad=$(grep -c ',infeasible,"tests/sweep/small.cmt:[0-9]*:[0-9]*: error\[E0350\]' "$tmp/j1.csv")
if [ "$(wc -l <"$tmp/j1.csv")" -eq 25 ] && [ "$ok" -eq 18 ] && [ "$bad" -eq 6 ] &&
    grep -q "6 of 24 points did not evaluate" "$tmp/err"; then
  pass sweep_failed_points_are_rows
else
  fail sweep_failed_points_are_rows "$ok ok, $bad infeasible: $(head -c 200 "$tmp/err")"
fi

# --- three shards as concurrent processes, merged
for i in 1 2 3; do
  $RUN sweep "$small" --shard $i/3 -j 1 -o "$tmp/part$i.csv" 2>/dev/null &
done
wait
$RUN sweep "$small" --merge -o "$tmp/merged.csv" "$tmp/part1.csv" "$tmp/part2.csv" "$tmp/part3.csv" 2>"$tmp/err"
parts=$(($(cat "$tmp/part1.csv" "$tmp/part2.csv" "$tmp/part3.csv" | wc -l) - 3))
if cmp -s "$tmp/merged.csv" "$tmp/j1.csv" && [ "$parts" -eq 24 ]; then
  pass sweep_shards_merge_to_the_whole
else
  fail sweep_shards_merge_to_the_whole "$parts rows in the parts; $(diff "$tmp/merged.csv" "$tmp/j1.csv" | head -c 300)"
fi
# --merge -o naming the sweep's own source is refused, the source kept
cp "$small" "$tmp/own.cmt"
$RUN sweep "$tmp/own.cmt" --merge -o "$tmp/own.cmt" "$tmp/part1.csv" 2>"$tmp/err"
status=$?
if [ $status -eq 2 ] && cmp -s "$small" "$tmp/own.cmt" && grep -q "is an input file" "$tmp/err"; then
  pass sweep_merge_refuses_its_source
else
  fail sweep_merge_refuses_its_source "exit $status; $(head -c 200 "$tmp/err")"
fi
# an option once (a second -o had silently won); --set twice for one axis
$RUN sweep "$small" -o "$tmp/o1.csv" -o "$tmp/o2.csv" 2>"$tmp/err"
status=$?
if [ $status -eq 2 ] && grep -q "is given twice" "$tmp/err" && [ ! -e "$tmp/o1.csv" ]; then
  pass sweep_option_twice_refused
else
  fail sweep_option_twice_refused "exit $status; $(head -c 200 "$tmp/err")"
fi
$RUN sweep "$small" --set 'M = [64]' --set 'M = [128]' -o "$tmp/s2.csv" 2>"$tmp/err"
status=$?
if [ $status -ne 0 ] && grep -q "E0396.*--set 2 gives axis .M. again" "$tmp/err"; then
  pass sweep_set_axis_twice_refused
else
  fail sweep_set_axis_twice_refused "exit $status; $(head -c 200 "$tmp/err")"
fi
# resuming from a file whose rows this sweep did not write: refused at the
# line (a latency 'abc' had been kept, and the finished CSV failed to plot)
{ head -1 "$tmp/j1.csv"; sed -n 2p "$tmp/j1.csv" | sed 's/,ok,/,weird,/'; } >"$tmp/corrupt.csv"
$RUN sweep "$small" -j 1 -o "$tmp/corrupt.csv" 2>"$tmp/err"
status=$?
if [ $status -eq 2 ] && grep -q "corrupt.csv:2: error: column 'status'" "$tmp/err"; then
  pass sweep_resume_refuses_foreign_rows
else
  fail sweep_resume_refuses_foreign_rows "exit $status; $(head -c 300 "$tmp/err")"
fi
# GNU parallel, when installed, runs the same shards
if command -v parallel >/dev/null 2>&1; then
  parallel --will-cite -j 3 "$RUN" sweep "$small" --shard {}/3 -j 1 -o "$tmp/gp{}.csv" ::: 1 2 3 2>/dev/null
  $RUN sweep "$small" --merge -o "$tmp/gp.csv" "$tmp/gp1.csv" "$tmp/gp2.csv" "$tmp/gp3.csv" 2>/dev/null
  cmp -s "$tmp/gp.csv" "$tmp/j1.csv" && pass sweep_shards_gnu_parallel || fail sweep_shards_gnu_parallel "$(diff "$tmp/gp.csv" "$tmp/j1.csv" | head -c 300)"
else
  echo "SKIP: sweep_shards_gnu_parallel: GNU parallel is not installed"
fi
# a missing part: a warning and exit 1, the rows there are kept
$RUN sweep "$small" --merge -o "$tmp/some.csv" "$tmp/part1.csv" 2>"$tmp/err"
s=$?
if [ $s -eq 1 ] && grep -q "has 8 of 24 points" "$tmp/err" && [ "$(wc -l <"$tmp/some.csv")" -eq 9 ]; then
  pass sweep_merge_missing_part
else
  fail sweep_merge_missing_part "exit $s: $(head -c 200 "$tmp/err")"
fi

# --- a row cut short is evaluated again; the rows already there are kept
head -n 11 "$tmp/j1.csv" >"$tmp/cut.csv"
printf '10,solved,262144,1.6e' >>"$tmp/cut.csv"
$RUN sweep "$small" -o "$tmp/cut.csv" 2>"$tmp/err"
if cmp -s "$tmp/cut.csv" "$tmp/j1.csv" && grep -q "holds 10 of the 24 points already; evaluating the other 14" "$tmp/err"; then
  pass sweep_resume_after_a_cut_row
else
  fail sweep_resume_after_a_cut_row "$(head -c 300 "$tmp/err")"
fi
# a file of another sweep is refused, and left alone
cp "$tmp/study.csv" "$tmp/other.csv"
$RUN sweep "$small" -o "$tmp/other.csv" 2>"$tmp/err"
s=$?
if [ $s -eq 2 ] && grep -q "the header is not this sweep's" "$tmp/err" && cmp -s "$tmp/other.csv" "$tmp/study.csv"; then
  pass sweep_refuses_another_sweeps_file
else
  fail sweep_refuses_another_sweeps_file "exit $s: $(head -c 200 "$tmp/err")"
fi

# --- interrupted: exit 130, whole rows only; a rerun finishes it (the
# wait for 30 rows is bounded at a minute: under ASan on a loaded machine
# 10 s gave 22)
$RUN sweep "$example" -j 2 -o "$tmp/int.csv" 2>"$tmp/err" &
pid=$!
n=0
while [ "$( (wc -l <"$tmp/int.csv") 2>/dev/null || echo 0)" -lt 31 ] && [ $n -lt 1200 ]; do
  sleep 0.05
  n=$((n + 1))
done
kill -INT $pid
wait $pid
s=$?
got=$(($(wc -l <"$tmp/int.csv") - 1))
if [ $s -eq 130 ] && grep -q "interrupted: .* run the same command again" "$tmp/err" &&
    [ "$got" -ge 30 ] && [ "$got" -lt 432 ] && [ "$(tail -c 1 "$tmp/int.csv" | od -An -c | tr -d ' ')" = '\n' ]; then
  pass "sweep_interrupt_keeps_rows ($got of 432)"
else
  fail sweep_interrupt_keeps_rows "exit $s, $got rows: $(head -c 200 "$tmp/err")"
fi
$RUN sweep "$example" -j 2 -o "$tmp/int.csv" 2>"$tmp/err"
if cmp -s "$tmp/int.csv" "$tmp/study.csv" && grep -q "holds $got of the 432 points" "$tmp/err"; then
  pass sweep_rerun_finishes_it
else
  fail sweep_rerun_finishes_it "$(diff "$tmp/int.csv" "$tmp/study.csv" | head -c 300) $(head -c 200 "$tmp/err")"
fi

# --- an edited sweep file: the old rows are evaluated again, not kept
cp "$small" "$tmp/edit.cmt"
$RUN sweep "$tmp/edit.cmt" -j 2 -o "$tmp/edit.csv" 2>/dev/null
cp "$tmp/edit.csv" "$tmp/edit_before.csv"
# the same sweep with the DRAM energy doubled: every row's figures change
sed 's/read_energy \([0-9]*\) pJ\/B/read_energy 2\1 pJ\/B/' "$small" > "$tmp/edit.cmt"
$RUN sweep "$tmp/edit.cmt" -j 2 -o "$tmp/edit.csv" 2>"$tmp/err"
$RUN sweep "$tmp/edit.cmt" -j 2 -o "$tmp/edit_fresh.csv" 2>/dev/null
if ! cmp -s "$small" "$tmp/edit.cmt" && cmp -s "$tmp/edit.csv" "$tmp/edit_fresh.csv" &&
    ! cmp -s "$tmp/edit.csv" "$tmp/edit_before.csv" &&
    grep -q "holds 24 rows computed from other inputs" "$tmp/err"; then
  pass sweep_edited_file_reevaluates
else
  fail sweep_edited_file_reevaluates "$(head -c 300 "$tmp/err")"
fi
# a part made from other inputs is refused by --merge
if ! $RUN sweep "$tmp/edit.cmt" --merge -o "$tmp/edit_merged.csv" "$tmp/edit_before.csv" 2>"$tmp/err" &&
    grep -q "computed from other inputs" "$tmp/err"; then
  pass sweep_merge_refuses_other_inputs
else
  fail sweep_merge_refuses_other_inputs "$(head -c 300 "$tmp/err")"
fi

# --- JSON Lines
$RUN sweep "$small" --format jsonl -o "$tmp/rows.jsonl" 2>/dev/null
if command -v python3 >/dev/null 2>&1; then
  if python3 - "$tmp/rows.jsonl" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert [r["point"] for r in rows] == list(range(24)), "points"
ok = [r for r in rows if r["status"] == "ok"]
assert len(ok) == 18
for r in ok:
    parts = sum(r[k] for k in ("time_compute_s", "time_memory_s", "time_network_s", "time_bubble_s", "time_other_s"))
    assert abs(parts - r["latency_s"]) <= 1e-9 * r["latency_s"], (parts, r["latency_s"])
    assert r["axes"]["mapping"] in ("solved", "fixed")
EOF
  then pass sweep_jsonl_rows; else fail sweep_jsonl_rows "does not parse or does not sum"; fi
  # every CSV row has the header's fields, and JSON Lines the same names
  if python3 - "$tmp/j1.csv" "$tmp/rows.jsonl" <<'EOF'
import csv, json, sys
rows = list(csv.reader(open(sys.argv[1])))
assert all(len(r) == len(rows[0]) for r in rows), set(len(r) for r in rows)
names = [c for c in rows[0] if c != "point" and not c.startswith("x.")]
for line in open(sys.argv[2]):
    keys = [k for k in json.loads(line) if k not in ("point", "axes")]
    assert set(keys) <= set(names), set(keys) - set(names)
EOF
  then pass sweep_columns_line_up; else fail sweep_columns_line_up "the fields of a row do not match the header"; fi
else
  echo "SKIP: sweep_jsonl_rows: python3 is not installed"
fi

# --- --set replaces an axis, checked like the file
$RUN sweep "$small" --set 'M = [128]' --set 'mapping = [solved]' -o "$tmp/set.csv" 2>/dev/null
if [ "$(wc -l <"$tmp/set.csv")" -eq 5 ] && [ "$(cut -d, -f5 "$tmp/set.csv" | sort -u | tr '\n' ' ')" = "128 x.M " ]; then
  pass sweep_set_replaces_an_axis
else
  fail sweep_set_replaces_an_axis "$(head -c 300 "$tmp/set.csv")"
fi
$RUN sweep "$small" --set 'M = range(8, 2, 1)' >"$tmp/out" 2>"$tmp/err"
s=$?
if [ $s -eq 1 ] && grep -q -- "--set 1:1:17: error\[E0391\]" "$tmp/err"; then
  pass sweep_set_checked
else
  fail sweep_set_checked "exit $s: $(head -c 300 "$tmp/err")"
fi

# --- bad input
check_refused() { # name, expected exit, expected message, command...
  name=$1; want=$2; msg=$3; shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"
  s=$?
  if [ $s -eq "$want" ] && grep -q -- "$msg" "$tmp/err"; then pass "$name"; else fail "$name" "exit $s: $(head -c 300 "$tmp/err")"; fi
}
check_refused sweep_shard_3_of_2 2 "--shard takes I/N with 1 <= I <= N" $RUN sweep "$small" --shard 3/2
check_refused sweep_shard_0 2 "--shard takes I/N" $RUN sweep "$small" --shard 0/2
check_refused sweep_jobs_0 2 "-j takes a number of processes" $RUN sweep "$small" -j 0
check_refused sweep_output_in_no_folder 2 "cannot write '$tmp/none/x.csv'" $RUN sweep "$small" -o "$tmp/none/x.csv"
if [ -w /dev/full ]; then
  check_refused sweep_output_full_disk 2 "No space left on device" $RUN sweep "$small" -o /dev/full
else
  echo "SKIP: sweep_output_full_disk: no /dev/full"
fi
check_refused sweep_no_sweep 2 "declares no sweep" $RUN sweep "$root/tests/golden/compile_worked.cmt"
check_refused sweep_unknown_sweep 2 "no sweep 'big'" $RUN sweep "$small" -s big
check_refused sweep_overwrite_input 2 "is an input file" $RUN sweep "$small" -o "$small"
check_refused sweep_merge_without_parts 2 "--merge needs -o OUT and the parts" $RUN sweep "$small" --merge -o "$tmp/m.csv"

# --- Slurm: the scripts are shell; a real Slurm runs them when there is one
$RUN sweep "$small" -j 3 --emit-slurm "$tmp/slurm" >"$tmp/out" 2>"$tmp/err"
s=$?
if [ $s -eq 0 ] && sh -n "$tmp/slurm/array.sbatch" && sh -n "$tmp/slurm/merge.sbatch" &&
    sh -n "$tmp/slurm/submit.sh" && grep -q '^#SBATCH --array=1-3$' "$tmp/slurm/array.sbatch" &&
    grep -q -- '--shard "$SLURM_ARRAY_TASK_ID/3"' "$tmp/slurm/array.sbatch" &&
    grep -q -- '--merge' "$tmp/slurm/merge.sbatch"; then
  pass sweep_emit_slurm_scripts
else
  fail sweep_emit_slurm_scripts "exit $s: $(head -c 300 "$tmp/err")"
fi
# the array's tasks, run as Slurm would (SLURM_ARRAY_TASK_ID 1..3), and
# the merge: the rows of the whole sweep
for i in 1 2 3; do SLURM_ARRAY_TASK_ID=$i sh "$tmp/slurm/array.sbatch" 2>/dev/null & done
wait
sh "$tmp/slurm/merge.sbatch" 2>/dev/null
if cmp -s "$tmp/slurm/small.csv" "$tmp/j1.csv"; then
  pass sweep_slurm_tasks_as_processes
else
  fail sweep_slurm_tasks_as_processes "$(ls "$tmp/slurm") $(diff "$tmp/slurm/small.csv" "$tmp/j1.csv" 2>&1 | head -c 200)"
fi
# A real Slurm: a private single-node cluster (munged, slurmctld, slurmd on
# this machine, on ports and in folders of its own, stopped at the end)
# runs the array and the merge; root and Debian's slurmd, slurmctld,
# slurm-client and munge are needed (.ci/setup test installs them).
slurm_stop() {
  for f in "$tmp/slurm_cluster/slurmd.pid" "$tmp/slurm_cluster/slurmctld.pid" "$tmp/slurm_cluster/munged.pid"; do
    [ -s "$f" ] && kill "$(cat "$f")" 2>/dev/null
  done
}
if [ "$(id -u)" -eq 0 ] && command -v slurmctld >/dev/null 2>&1 && command -v slurmd >/dev/null 2>&1 &&
    command -v sbatch >/dev/null 2>&1 && command -v munged >/dev/null 2>&1; then
  c=$tmp/slurm_cluster
  mkdir -p "$c/state" "$c/spool" "$c/munge" && chmod 700 "$c/munge"
  head -c 1024 /dev/urandom >"$c/munge/munge.key" && chmod 400 "$c/munge/munge.key"
  host=$(hostname -s)
  port=$((20000 + ($$ % 20000) * 2))
  cat >"$c/slurm.conf" <<EOF
ClusterName=cmtctest
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
AuthInfo=socket=$c/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$c/state
SlurmdSpoolDir=$c/spool
SlurmctldPidFile=$c/slurmctld.pid
SlurmdPidFile=$c/slurmd.pid
SlurmctldLogFile=$c/slurmctld.log
SlurmdLogFile=$c/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
NodeName=$host CPUs=2 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF="$c/slurm.conf"
  trap 'slurm_stop; rm -rf "$tmp"' EXIT
  munged --socket="$c/munge/munge.sock" --key-file="$c/munge/munge.key" --pid-file="$c/munged.pid" \
    --log-file="$c/munged.log" --seed-file="$c/munge/seed" -f 2>"$c/start.err"
  sleep 1
  slurmctld -f "$c/slurm.conf" 2>>"$c/start.err"
  sleep 1
  slurmd -f "$c/slurm.conf" 2>>"$c/start.err"
  n=0
  until sinfo -h -o %t 2>/dev/null | grep -q idle || [ $n -ge 60 ]; do sleep 0.5; n=$((n + 1)); done
  if ! sinfo -h -o %t 2>/dev/null | grep -q idle; then
    fail sweep_slurm_cluster "the private Slurm did not come up: $(head -c 300 "$c/start.err") $(tail -c 300 "$c/slurmctld.log" 2>/dev/null)"
  else
    $RUN sweep "$small" -j 3 --emit-slurm "$tmp/slurm_real" >/dev/null 2>&1
    (cd / && sh "$tmp/slurm_real/submit.sh" >/dev/null 2>"$tmp/err")
    n=0
    while [ ! -s "$tmp/slurm_real/small.csv" ] && [ $n -lt 240 ]; do sleep 0.5; n=$((n + 1)); done
    sleep 0.5
    if cmp -s "$tmp/slurm_real/small.csv" "$tmp/j1.csv"; then
      pass "sweep_slurm_cluster (an array of 3 and the merge through slurmctld in $((n / 2)) s)"
    else
      fail sweep_slurm_cluster "$(ls "$tmp/slurm_real") $(head -c 300 "$tmp/err") $(cat "$tmp/slurm_real"/*.log 2>/dev/null | head -c 300)"
    fi
  fi
  slurm_stop
  unset SLURM_CONF
else
  echo "SKIP: sweep_slurm_cluster: a private Slurm needs root and Debian's slurmd, slurmctld, slurm-client and munge; the scripts were run as its tasks instead"
fi

# --- progress: on a terminal only
$RUN sweep "$small" -o "$tmp/p.csv" 2>"$tmp/err"
if ! grep -q 'points  .*/s  ETA' "$tmp/err"; then pass sweep_no_progress_on_a_pipe; else fail sweep_no_progress_on_a_pipe "$(head -c 200 "$tmp/err")"; fi
if command -v script >/dev/null 2>&1; then
  rm -f "$tmp/p.csv"
  script -qec "$RUN sweep $small -o $tmp/p.csv" /dev/null >"$tmp/tty" 2>&1
  if grep -q '24/24 points' "$tmp/tty"; then pass sweep_progress_on_a_terminal; else fail sweep_progress_on_a_terminal "$(head -c 300 "$tmp/tty")"; fi
else
  echo "SKIP: sweep_progress_on_a_terminal: script (util-linux) is not installed"
fi

# --- --plots: drawn from the CSV just written
if command -v gnuplot >/dev/null 2>&1; then
  $RUN sweep "$small" -o "$tmp/pl.csv" --plots "$tmp/plots" 2>"$tmp/err"
  s=$?
  missing=""
  for p in pareto roofline breakdown heatmap heatmap_utilisation; do
    grep -q '<svg' "$tmp/plots/$p.svg" 2>/dev/null || missing="$missing $p"
  done
  if [ $s -eq 0 ] && [ -z "$missing" ]; then pass sweep_plots; else fail sweep_plots "exit $s, missing:$missing: $(head -c 300 "$tmp/err")"; fi
  $RUN sweep "$small" --plots "$tmp/plots2" >/dev/null 2>"$tmp/err"
  s=$?
  if [ $s -eq 2 ] && grep -q -- "--plots draws from a CSV file" "$tmp/err"; then pass sweep_plots_need_a_file; else fail sweep_plots_need_a_file "exit $s: $(head -c 200 "$tmp/err")"; fi
else
  echo "SKIP: sweep_plots: gnuplot is not installed (Debian: gnuplot-nox)"
fi
