#!/usr/bin/env bash
# collshim-tune calibrate under the test launcher: on two faked nodes (COLLSHIM_TOPOLOGY, 4 ranks) it
# writes a description that collshim-model predicts with; on one node it stops with what it needs
# (exit 1) and writes nothing; it names the nodes it measured. Usage: tune_calibrate_test.sh COLLSHIM_TUNE COLLSHIM_MODEL WORK_DIR.
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

# The two nodes it measured are named, in its output and in the description's comments: here the
# fullest other node; on three nodes the farther of the two others by a ping-pong.
grep -q "^collshim-bench: calibrating between node 0 (.*) and node 1 (.*) of 2 nodes: the fullest of the other nodes" <<<"$text"
grep -q "^# between node 0 (.*) and node 1 (.*) of 2 nodes" "$out"
far="$3/tune-calibrated-far.yaml"
text=$(COLLSHIM_TOPOLOGY=nodes=3,mapping=sequential timeout 120 "$tune" calibrate -o "$far" --max-bytes 64 \
  --iterations 3 --warmup 1 -- "$COLLSHIM_MPIEXEC" -np 6 ${COLLSHIM_MPIEXEC_PREFLAGS:-})
echo "$text"
grep -q "^collshim-bench: calibrating between node 0 (.*) and node [12] (.*) of 3 nodes: the farthest of 2 candidate nodes by a 1 B ping-pong" <<<"$text"
grep -q "^# between node 0 .* of 3 nodes: the farthest of 2 candidate nodes" "$far"

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
