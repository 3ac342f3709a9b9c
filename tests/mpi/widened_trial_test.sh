#!/usr/bin/env bash
# When the description is wrong, confirmation widens its trial (docs/cost-model.md): model_decisions
# under the cost model (COLLSHIM_PLATFORM, two faked nodes, no rule) with the delay injector behind
# the shim, so that native's Allgather and Alltoallv run 2-6 ms where the description predicts
# microseconds. Wherever the model costed native exactly (its debug line gives native's time, not
# "at least"), native's measured / predicted ratio is then thousands of times the others', far beyond
# the model's error: every rank must widen that key's trial alike (the info line), the report must
# label its settled rows "model, widened" and list the key under widened_trials (why, what it tried),
# and the written rules must say so. Results equal the MPI
# library's throughout.
# usage: widened_trial_test.sh NP SHIM PROGRAM PLATFORM DELAY_LIBRARY
set -eu
np=$1; shim=$2; program=$3; platform=$4; delay=$5
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
printf 'version: 1\nrules: []\n' > "$out/none.yaml"
# 160 calls per size: a widened key's two trials take up to 68 + 85 calls before its pick runs.
"$here/run_mpi_test.sh" --np "$np" --timeout 400 --preload "$shim:$delay" \
  --env DELAY_INJECTOR_US=2000-6000 --env COLLSHIM_TOPOLOGY=nodes=2,mapping=sequential --env COLLSHIM_CONFIG="$out/none.yaml" \
  --env COLLSHIM_PLATFORM="$platform" --env COLLSHIM_TUNE_RECHECK=0 --env COLLSHIM_LOG=debug \
  --env COLLSHIM_REPORT="$out/report.json" --env COLLSHIM_TUNE_OUT="$out/settled.yaml" \
  --expect-output "model_decisions: [0-9]+ checks passed, 0 failed" -- "$program" 160 > "$out/log.txt" ||
  { cat "$out/log.txt"; fail "the job failed"; }
# "MPI_Allgather: p=4 block 4B-7B: cost model: ..., native (ring) 12.3 us; picks ..." on every rank.
exact=$(grep -o "MPI_Allgather: p=$np block [^:]*: cost model: .*native ([^)]*) [0-9.]* us.*; picks" "$out/log.txt" |
  sed 's/^MPI_Allgather: p=[0-9]* block \([^:]*\):.*/\1/' | sort -u)
[ -n "$exact" ] || { grep "cost model:" "$out/log.txt" | head; fail "no Allgather key with native costed exactly"; }
for block in $exact; do
  count=$(grep -c "MPI_Allgather: block $block: the trial's measured times disagree with the cost model's predictions: measured / predicted .*native [0-9.]*.* apart, beyond the model's 1.37x; first trial .*; widened to " "$out/log.txt" || true)
  [ "$count" -eq "$np" ] || { grep "block $block" "$out/log.txt" | head; fail "block $block: widened on $count of $np ranks"; }
done
python3 "$here/check_model_report.py" "$out/report.json" --sources "tuning trial" "model, widened"
# The report's own record of each widened key (rank 0's): where, the ratios, what it tried and kept.
python3 - "$out/report.json" <<'PY' || fail "the report's widened_trials do not name the widened keys"
import json, sys
widened = json.load(open(sys.argv[1])).get("widened_trials", [])
assert any(w.startswith("MPI_Allgather on ") and "measured / predicted" in w and "widened to " in w and "; kept "
           in w for w in widened), widened
print(f"report: {len(widened)} widened trials, e.g. {widened[0]}")
PY
grep -q "The trial was widened by [1-9] more of the model's ranked candidates: its measured/predicted ratios were" \
  "$out/settled.yaml" || { cat "$out/settled.yaml"; fail "the written rules do not say the trial was widened"; }
echo "widened_trial_test: passed (Allgather blocks widened: $(echo $exact))"
