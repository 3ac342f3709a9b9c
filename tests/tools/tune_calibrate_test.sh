#!/usr/bin/env bash
# collshim-tune calibrate under the test launcher: on two faked nodes (COLLSHIM_TOPOLOGY, 4 ranks) it
# writes a description that collshim-model predicts with; on one node it stops with what it needs
# (exit 1) and writes nothing. Usage: tune_calibrate_test.sh COLLSHIM_TUNE COLLSHIM_MODEL WORK_DIR.
# Times are never checked.
set -euo pipefail
tune=$1
model=$2
out="$3/tune-calibrated.yaml"
rm -f "$out" "$out.partial"
launcher=("$COLLSHIM_MPIEXEC" -np 4 ${COLLSHIM_MPIEXEC_PREFLAGS:-})
text=$(COLLSHIM_TOPOLOGY=nodes=2,mapping=sequential timeout 120 \
  "$tune" calibrate -o "$out" --max-bytes 1KiB --iterations 3 --warmup 1 -- "${launcher[@]}")
echo "$text"
grep -q "^collshim-tune calibrate: platform description 'tune-calibrated' (measured on 4 ranks on 2 nodes, at most 2 on one) written to $out$" <<<"$text"
grep -q "^export COLLSHIM_PLATFORM=$out " <<<"$text"
grep -q '^name: tune-calibrated$' "$out"
[ ! -e "$out.partial" ]
"$model" predict --platform "$out" --procs 8 --ppn 4 --collective allgather --bytes 1KiB | grep 'platform tune-calibrated'

never="$3/tune-never-calibrated.yaml"
rm -f "$never"
status=0
text=$(env -u COLLSHIM_TOPOLOGY timeout 60 "$tune" calibrate -o "$never" --max-bytes 1KiB --iterations 2 \
  -- "${launcher[@]}" 2>&1) || status=$?
echo "$text"
[ "$status" -eq 1 ] || { echo "one node: exit status $status, expected 1"; exit 1; }
grep -q "^collshim-tune calibrate: error: the launcher started 4 ranks on 1 node; calibration needs two nodes, one of them with at least two ranks: e.g. mpirun -np 18 --map-by ppr:16:node" <<<"$text"
[ ! -e "$never" ] && [ ! -e "$never.partial" ]
echo "tune_calibrate_test: passed"
