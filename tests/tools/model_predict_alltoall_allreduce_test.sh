#!/usr/bin/env bash
# collshim-model predict for Alltoall (sequential) and Allreduce (cyclic) at p = 12 on 3 nodes of 4;
# the test's regular expression checks the tables.
# Usage: model_predict_alltoall_allreduce_test.sh COLLSHIM_MODEL PLATFORM.yaml
set -eu
model=$1
platform=$2
"$model" predict --platform "$platform" --procs 12 --ppn 4 --collective alltoall --bytes 1KiB
"$model" predict --platform "$platform" --procs 12 --ppn 4 --mapping cyclic --collective allreduce --bytes 1MiB
