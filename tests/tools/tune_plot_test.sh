#!/usr/bin/env bash
# collshim-tune plot draws PNG heat maps of a sweep (the file starts with PNG's signature); the
# test's regular expression checks the files it names.
# Usage: tune_plot_test.sh COLLSHIM_TUNE SWEEP.csv WORK_DIR
set -eu
tune=$1
sweep=$2
plots="$3/plots"
rm -rf "$plots"
"$tune" plot "$sweep" -o "$plots"
if [ "$(head -c 4 "$plots"/winners-unnamed-allgather-sequential-ppn8.png | tail -c 3)" = PNG ]; then
  echo 'a PNG file'
else
  echo "FAIL: winners-unnamed-allgather-sequential-ppn8.png is not a PNG file" >&2
  exit 1
fi
