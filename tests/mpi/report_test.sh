#!/usr/bin/env bash
# Runs report_calls under collshim-run --report out.json with forced algorithms and checks the JSON.
# usage: report_test.sh NP COLLSHIM_RUN PROGRAM CHECKER
set -eu
np=$1; run=$2; program=$3; checker=$4
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# shellcheck disable=SC2086
timeout --kill-after=10 120 "$run" --report "$out/report.json" --force allgather=ring --force alltoallv=pairwise \
  -- "$COLLSHIM_MPIEXEC" $COLLSHIM_MPIEXEC_PREFLAGS -np "$np" "$program"
python3 "$checker" "$out/report.json" "$np"
