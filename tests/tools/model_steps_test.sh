#!/usr/bin/env bash
# collshim-model predict --steps: on one node with every rank alike, the ring's steps (their step_us)
# add up to its prediction (the row's predicted_us) within 0.002 us. Prints "STEPS SUM PREDICTION"
# and nothing else.
# Usage: model_steps_test.sh COLLSHIM_MODEL PLATFORM.yaml WORK_DIR
set -eu
columns="$(dirname "$0")/csv_columns.py"  # the CSV's columns by header name
model=$1
platform=$2
work=$3
"$model" predict --platform "$platform" --procs 8 --ppn 8 --bytes 4KiB --algorithms ring --csv \
  --steps "$work/steps.csv" >"$work/rows.csv"
"$columns" "$work/steps.csv" step_us >"$work/step_us.txt"
"$columns" "$work/rows.csv" predicted_us >"$work/predicted_us.txt"
awk 'NR == FNR {s += $1; n++; next} {t = $1}
     END {printf "%d %.3f %.3f\n", n, s, t; exit !(t > 0 && s - t < 0.002 && t - s < 0.002)}' \
  "$work/step_us.txt" "$work/predicted_us.txt" || { echo "FAIL: the steps do not add up to the prediction" >&2; exit 1; }
