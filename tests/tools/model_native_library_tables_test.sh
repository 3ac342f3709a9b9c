#!/usr/bin/env bash
# The real libraries' tables (config/libraries): Open MPI 4.1's and MPICH 4's rows at p = 64, 16 per
# node (notes left out; the columns the test checks, chosen by the CSV's header, never by position),
# then only the note of Open MPI 5.0 (its rows left out); the test's regular expression checks both.
# Usage: model_native_library_tables_test.sh COLLSHIM_MODEL PLATFORM.yaml
set -euo pipefail
columns="$(dirname "$0")/csv_columns.py"  # the CSV's columns by header name
model=$1
platform=$2
"$model" predict --platform "$platform" --procs 64 --ppn 16 --bytes 8 64KiB --csv --algorithms native \
  --native ompi-4.1 mpich-4 ompi-5.0 2>/dev/null |
  "$columns" - procs ppn mapping bytes algorithm approximated nodes block_bytes library_algorithm
"$model" predict --platform "$platform" --procs 64 --ppn 16 --bytes 8 --csv --algorithms native \
  --native ompi-5.0 2>&1 >/dev/null
