#!/usr/bin/env bash
# collshim-tune rules on a sweep of two libraries: a rule set per library, which collshim-config check
# accepts and collshim-tune verify --measured judges with each library's rules. The test's regular
# expression checks the table and the verification.
# Usage: tune_rules_per_library_test.sh COLLSHIM_TUNE COLLSHIM_CONFIG WORK_DIR SWEEP.csv
set -eu
tune=$1
config=$2
work=$3
sweep=$4
out="$work/tune_two.yaml"
"$tune" rules "$sweep" -o "$out"
cat "$out"
"$config" check "$out"
"$tune" verify "$out" --measured "$sweep"
