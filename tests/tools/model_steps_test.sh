#!/usr/bin/env bash
# collshim-model predict --steps: on one node with every rank alike, the ring's steps (column 5 of
# the steps file) add up to its prediction (column 9 of the rows) within 0.002 us. Prints
# "STEPS SUM PREDICTION" and nothing else.
# Usage: model_steps_test.sh COLLSHIM_MODEL PLATFORM.yaml WORK_DIR
set -eu
model=$1
platform=$2
work=$3
"$model" predict --platform "$platform" --procs 8 --ppn 8 --bytes 4KiB --algorithms ring --csv \
  --steps "$work/steps.csv" >"$work/rows.csv"
awk -F, 'FNR == 1 {next} NR == FNR {s += $5; n++; next} {t = $9}
         END {printf "%d %.3f %.3f\n", n, s, t; exit !(t > 0 && s - t < 0.002 && t - s < 0.002)}' \
  "$work/steps.csv" "$work/rows.csv" || { echo "FAIL: the steps do not add up to the prediction" >&2; exit 1; }
