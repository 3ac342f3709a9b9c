#!/usr/bin/env bash
# collshim-model predict --hostfile: 24 ranks of a host-per-core file grouped into nodes by the
# pattern (the test's regular expression checks 16 + 8 in the row's columns, chosen by the CSV's
# header, never by position); --ppn with --hostfile is refused.
# Usage: model_hostfile_test.sh COLLSHIM_MODEL PLATFORM.yaml HOSTFILE
set -euo pipefail
columns="$(dirname "$0")/csv_columns.py"  # the CSV's columns by header name
model=$1
platform=$2
hostfile=$3
"$model" predict --platform "$platform" --hostfile "$hostfile" --node-pattern '(.*)-c[0-9]+' --procs 24 --bytes 8 \
  --algorithms ring --csv |
  "$columns" - platform collective pattern procs ppn mapping bytes algorithm approximated nodes block_bytes \
    library_algorithm
if out=$("$model" predict --platform "$platform" --hostfile "$hostfile" --ppn 4 --procs 4 2>&1); then
  echo "FAIL: --ppn with --hostfile was accepted" >&2
  exit 1
fi
echo "$out"
