#!/usr/bin/env bash
# collshim-tune rules takes each kind of row only where it belongs: predictions as measurements,
# measurements as --predicted, and no input at all are refused with their messages; predictions
# alone (--predicted) make a table.
# Usage: tune_rules_inputs_test.sh COLLSHIM_TUNE COLLSHIM_MODEL WORK_DIR PLATFORM.yaml SWEEP.csv
set -eu
tune=$1
model=$2
work=$3
platform=$4
sweep=$5
# refused MESSAGE ARGS...: collshim-tune ARGS fails and says MESSAGE.
refused() {
  local message=$1 out
  shift
  if out=$("$tune" "$@" 2>&1); then
    echo "FAIL: collshim-tune $* succeeded" >&2
    exit 1
  fi
  grep -q "$message" <<<"$out" || { echo "FAIL: collshim-tune $*: no '$message' in:" >&2; echo "$out" >&2; exit 1; }
}
"$model" predict --platform "$platform" --procs 16 --bytes 8 --native ompi --algorithms bruck --csv >"$work/tune_pred16.csv"
refused 'takes predictions with --predicted only' rules "$work/tune_pred16.csv" -o /dev/null
refused 'tune_small.csv:3: a measurement given to --predicted' rules "$sweep" --platform lab --predicted "$sweep" -o /dev/null
refused 'rules needs measurements (collshim-bench --csv files) or predictions' rules -o /dev/null
"$tune" rules --predicted "$work/tune_pred16.csv" -o "$work/tune_pred_only.yaml"
grep -q '^version: 1' "$work/tune_pred_only.yaml" || { echo "FAIL: tune_pred_only.yaml has no 'version: 1'" >&2; exit 1; }
