#!/usr/bin/env bash
# collshim-tune rules --predicted: the model's predictions at p = 256 (the libraries' decisions
# costed) fill the cells the sweep lacks; collshim-config check accepts the table. The test's
# regular expression checks the table.
# Usage: tune_rules_predicted_test.sh COLLSHIM_TUNE COLLSHIM_MODEL WORK_DIR PLATFORM.yaml SWEEP.csv COLLSHIM_CONFIG
set -eu
tune=$1
model=$2
work=$3
platform=$4
sweep=$5
config=$6
"$model" predict --platform "$platform" --procs 256 --ppn 16 --bytes 8 1KiB 64KiB --native ompi mpich \
  --algorithms bruck recursive_multiplying:k=4 ring sparbit --csv >"$work/tune_pred.csv"
"$tune" rules "$sweep" --platform lab --robust --predicted "$work/tune_pred.csv" -o "$work/tune_pred.yaml"
cat "$work/tune_pred.yaml"
"$config" check "$work/tune_pred.yaml"
