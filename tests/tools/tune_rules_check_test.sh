#!/usr/bin/env bash
# collshim-tune rules on a small sweep writes a table that collshim-config check accepts without a
# warning; the test's regular expression checks the table and the check.
# Usage: tune_rules_check_test.sh COLLSHIM_TUNE COLLSHIM_CONFIG WORK_DIR SWEEP.csv
set -eu
tune=$1
config=$2
work=$3
sweep=$4
out="$work/tune_small.yaml"
"$tune" rules "$sweep" -o "$out" --platform lab
cat "$out"
"$config" check "$out" 2>&1 | tee "$work/tune_check.txt"
if grep -q warning "$work/tune_check.txt"; then
  echo "FAIL: collshim-config check warned" >&2
  exit 1
fi
