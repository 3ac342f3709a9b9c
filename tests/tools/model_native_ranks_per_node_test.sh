#!/usr/bin/env bash
# MVAPICH2's and Intel MPI's tables as collshim-model picks them by the ranks per node the library
# sees: 16 (the placement's), then 1 (--library-ranks-per-node); the test's regular expression
# checks the rows and notes.
# Usage: model_native_ranks_per_node_test.sh COLLSHIM_MODEL PLATFORM.yaml
set -eu
model=$1
platform=$2
"$model" predict --platform "$platform" --procs 64 --ppn 16 --bytes 256 --csv --algorithms native \
  --native mvapich2 impi 2>&1
"$model" predict --platform "$platform" --procs 64 --ppn 16 --bytes 256 --csv --algorithms native \
  --native mvapich2 impi --library-ranks-per-node 1 2>&1
