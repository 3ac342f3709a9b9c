#!/usr/bin/env bash
# collshim-model predict --native: the libraries' own Allgather decisions at p = 64 and 24, 16 per
# node, and their Alltoall at p = 8 on one node. Prints the rows' columns the test checks, chosen by
# the CSV's header (never by position); the test's regular expression checks them.
# Usage: model_native_decisions_test.sh COLLSHIM_MODEL PLATFORM.yaml
set -euo pipefail
exec 2>&1  # notes and errors in the same stream as the rows, in order
columns="$(dirname "$0")/csv_columns.py"  # the CSV's columns by header name
checked=(procs ppn mapping bytes algorithm approximated nodes block_bytes library_algorithm)
model=$1
platform=$2
"$model" predict --platform "$platform" --procs 64 24 --ppn 16 --bytes 8 64KiB --csv --algorithms native \
  --native ompi mpich | "$columns" - "${checked[@]}"
"$model" predict --platform "$platform" --procs 8 --collective alltoall --bytes 8 --csv --algorithms linear \
  --native ompi mvapich2 | "$columns" - "${checked[@]}"
