#!/usr/bin/env bash
# A description written by collshim-bench --calibrate (test mpi.bench.calibrate.np5) has its table
# and name, and collshim-model predicts on it; the test's regular expression checks the table.
# Usage: model_calibrated_description_test.sh COLLSHIM_MODEL CALIBRATED.yaml
set -eu
model=$1
description=$2
grep -q '^# *3 ' "$description" || { echo "FAIL: no '# 3 ...' line in $description" >&2; exit 1; }
grep -q '^name: two-faked-nodes' "$description" || { echo "FAIL: $description is not named two-faked-nodes" >&2; exit 1; }
"$model" predict --platform "$description" --procs 12 --ppn 3 --collective allgather --bytes 1KiB
