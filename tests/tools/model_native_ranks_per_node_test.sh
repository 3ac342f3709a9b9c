#!/usr/bin/env bash
# MVAPICH2's and Intel MPI's tables as collshim-model picks them by the ranks per node the library
# sees: 16 (the placement's), then 1 (--library-ranks-per-node). Prints each run's notes, then the
# columns of its rows the test checks, chosen by the CSV's header (never by position); the test's
# regular expression checks the rows and notes.
# Usage: model_native_ranks_per_node_test.sh COLLSHIM_MODEL PLATFORM.yaml
set -euo pipefail
exec 2>&1  # the notes in the same stream as the rows: a run's notes come before its rows
columns="$(dirname "$0")/csv_columns.py"  # the CSV's columns by header name
checked=(procs ppn mapping bytes algorithm approximated nodes block_bytes library_algorithm)
model=$1
platform=$2
"$model" predict --platform "$platform" --procs 64 --ppn 16 --bytes 256 --csv --algorithms native \
  --native mvapich2 impi | "$columns" - "${checked[@]}"
"$model" predict --platform "$platform" --procs 64 --ppn 16 --bytes 256 --csv --algorithms native \
  --native mvapich2 impi --library-ranks-per-node 1 | "$columns" - "${checked[@]}"
