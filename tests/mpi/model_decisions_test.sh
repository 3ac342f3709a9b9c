#!/usr/bin/env bash
# The cost model decides inside the shim (COLLSHIM_PLATFORM, faked nodes, no rule), in four jobs of
# model_decisions: the model alone (COLLSHIM_TUNE=off), confirmed by timed calls with its decisions
# written out (COLLSHIM_TUNE_OUT), those written rules replayed (no trial, no prediction), a library
# whose choices the model does not know (confirmed by timed calls all the same), and a bad platform
# description (a clean error naming file, line and column). Results equal the MPI library's
# in every job; every report row was run alike on every rank. The jobs with no trial calls (the model
# alone, the replay) make 16 calls per size instead of 160 (a widened confirmation takes up to 153).
# usage: model_decisions_test.sh NP SHIM PROGRAM PLATFORM BAD_PLATFORM
set -eu
np=$1; shim=$2; program=$3; platform=$4; bad_platform=$5
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
common=(--np "$np" --timeout 200 --preload "$shim" --env COLLSHIM_TOPOLOGY=nodes=2,mapping=sequential
        --env COLLSHIM_CONFIG="$out/none.yaml" --env COLLSHIM_MODEL_MARGIN=0)
printf 'version: 1\nrules: []\n' > "$out/none.yaml"

echo "== the model alone"
"$here/run_mpi_test.sh" "${common[@]}" --env COLLSHIM_PLATFORM="$platform" --env COLLSHIM_TUNE=off \
  --env COLLSHIM_REPORT="$out/alone.json" --env COLLSHIM_LOG=info \
  --expect-output "cost model decides where no rule does \(its pick alone\): platform .*library .*decisions (ompi-4\.1|mpich-4)\)" \
  --expect-output "model_decisions: [0-9]+ checks passed, 0 failed" -- "$program" 16
python3 "$here/check_model_report.py" "$out/alone.json" --sources "model"

echo "== confirmed by timed calls, written out"
"$here/run_mpi_test.sh" "${common[@]}" --env COLLSHIM_PLATFORM="$platform" --env COLLSHIM_TUNE_OUT="$out/settled.yaml" \
  --env COLLSHIM_REPORT="$out/confirmed.json" --env COLLSHIM_LOG=debug \
  --expect-output "cost model: .* us.*; picks " \
  --expect-output "model_decisions: [0-9]+ checks passed, 0 failed" -- "$program" > "$out/confirmed.txt"
python3 "$here/check_model_report.py" "$out/confirmed.json" --sources "tuning trial"
grep -q "Cost model (.*): picked .*; predicted best candidate .* us, native .* us; platform $platform" "$out/settled.yaml" \
  || { echo "FAIL: the written rules lack the model's evidence"; cat "$out/settled.yaml"; exit 1; }
grep -q "Confirmed by timed calls: " "$out/settled.yaml" || { echo "FAIL: no confirmed rule written"; exit 1; }

echo "== the written decisions replayed"
"$here/run_mpi_test.sh" "${common[@]}" --env COLLSHIM_PLATFORM="$platform" --env COLLSHIM_CONFIG="$out/settled.yaml" \
  --env COLLSHIM_REPORT="$out/replay.json" --env COLLSHIM_LOG=debug --forbid-output "cost model: " \
  --expect-output "model_decisions: [0-9]+ checks passed, 0 failed" -- "$program" 16
python3 "$here/check_model_report.py" "$out/replay.json" --replays "$out/confirmed.json"

echo "== a library whose own choices are not known: only timed calls may leave native"
# COLLSHIM_MPI_LIBRARY names an Open MPI whose decisions no table holds (6.0), so the model has no
# native decisions: it still ranks
# the candidates, and native and its best three run timed calls (without the ranking, no trial would run).
"$here/run_mpi_test.sh" "${common[@]}" --env COLLSHIM_PLATFORM="$platform" --env "COLLSHIM_MPI_LIBRARY=ompi 6.0.0" \
  --env COLLSHIM_REPORT="$out/unknown.json" --env COLLSHIM_LOG=debug \
  --expect-output "cost model: .* us.*the MPI library's own choice is not known.*; picks native" \
  --expect-output "model_decisions: [0-9]+ checks passed, 0 failed" -- "$program"
python3 "$here/check_model_report.py" "$out/unknown.json" --sources "tuning trial"

echo "== a bad platform description"
"$here/run_mpi_test.sh" "${common[@]}" --env COLLSHIM_PLATFORM="$bad_platform" --expect-failure \
  --expect-output "collshim: error: COLLSHIM_PLATFORM: .*bad_platform.yaml:[0-9]+:[0-9]+: " \
  --expect-output "stopping the job at MPI_Init" -- "$program"
echo "model_decisions_test: passed"
