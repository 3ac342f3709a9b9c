#!/usr/bin/env bash
# collshim-model predict --native: the libraries' own Allgather decisions at p = 64 and 24, 16 per
# node, and their Alltoall at p = 8 on one node; the test's regular expression checks the rows.
# Usage: model_native_decisions_test.sh COLLSHIM_MODEL PLATFORM.yaml
set -eu
model=$1
platform=$2
"$model" predict --platform "$platform" --procs 64 24 --ppn 16 --bytes 8 64KiB --csv --algorithms native \
  --native ompi mpich 2>&1
"$model" predict --platform "$platform" --procs 8 --collective alltoall --bytes 8 --csv --algorithms linear \
  --native ompi mvapich2 2>&1
