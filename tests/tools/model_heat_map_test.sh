#!/usr/bin/env bash
# The model's heat map: predictions at process counts nobody measured, drawn by collshim-tune plot
# (winners.json names the sweep; the PNG file starts with its signature); collshim-tune rules
# refuses them as measurements, which the test's regular expressions check.
# Usage: model_heat_map_test.sh COLLSHIM_MODEL COLLSHIM_TUNE PLATFORM.yaml WORK_DIR
set -eu
model=$1
tune=$2
platform=$3
work=$4
plots="$work/model-plots"
rm -rf "$plots"
"$model" predict --csv --platform "$platform" --procs 64 1024 4096 --ppn 16 --bytes 8 4KiB \
  --algorithms recursive_multiplying sparbit bruck >"$work/predicted.csv"
"$tune" plot "$work/predicted.csv" -o "$plots"
grep -q 'allgather on fattree-contending, sequential, 16 per node (predicted by collshim-model)' "$plots/winners.json"
if [ "$(head -c 4 "$plots"/winners-fattree-contending-allgather-sequential-ppn16.png | tail -c 3)" = PNG ]; then
  echo 'a PNG file'
else
  echo "FAIL: winners-fattree-contending-allgather-sequential-ppn16.png is not a PNG file" >&2
fi
if "$tune" rules "$work/predicted.csv" -o "$work/never.yaml"; then
  echo 'rules took predictions'
fi
