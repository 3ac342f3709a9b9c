#!/usr/bin/env bash
# The cost model deciding on one real multi-core node nobody tuned, against the MPI library's own
# choice (issue: "fast on a cluster nobody tuned"), with Open MPI's mpirun:
#   1. collshim-tune calibrate on two faked nodes of this node (COLLSHIM_TOPOLOGY) -> OUT/node.yaml;
#   2. collshim-bench --rules none with COLLSHIM_PLATFORM=OUT/node.yaml at NP ranks on the real node:
#      native, every algorithm and the `collshim` row (the model's decision, confirmed by trial calls)
#      side by side, Allgather 1 B-256 KiB and Allreduce (int64 sums) 8 B-64 KiB -> OUT/COLLECTIVE.csv.
# Nothing is tuned on the node but the calibration. Ratios come from bench/real_node/summary.py.
# usage: bench/real_node/run.sh BUILD_DIR OUT_DIR [NP] [ITERATIONS]
set -euo pipefail
build=$1; out=$2; np=${3:-$(nproc)}; iterations=${4:-50}
mkdir -p "$out"
launcher=(mpirun -np "$np")
if [ "$(id -u)" = 0 ]; then launcher+=(--allow-run-as-root); fi
if [ "$np" -gt "$(nproc)" ]; then launcher+=(--oversubscribe); fi
"$build/collshim-tune" calibrate -o "$out/node.yaml" --max-bytes 64KiB -- "${launcher[@]}" \
  -x COLLSHIM_TOPOLOGY=nodes=2,mapping=sequential
for part in "allgather 1 256KiB" "allreduce 8 64KiB"; do
  read -r collective low high <<<"$part"
  "${launcher[@]}" -x COLLSHIM_PLATFORM="$out/node.yaml" "$build/collshim-bench" --collective "$collective" \
    --min-bytes "$low" --max-bytes "$high" --rules none --iterations "$iterations" --warmup 5 --csv \
    >"$out/$collective.csv"
done
python3 "$(dirname "$0")/summary.py" "$out"/allgather.csv "$out"/allreduce.csv | tee "$out/summary.md"
