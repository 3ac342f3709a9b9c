#!/usr/bin/env bash
# The cost model deciding on one real multi-core node nobody tuned, against the MPI library's own
# choice (issue: "fast on a cluster nobody tuned"), with Open MPI's mpirun:
#   1. collshim-tune calibrate on two faked nodes of this node (COLLSHIM_TOPOLOGY) -> OUT/node.yaml;
#   2. collshim-bench --rules none with COLLSHIM_PLATFORM=OUT/node.yaml at NP ranks on the real node:
#      native, every algorithm and the `collshim` row (the model's decision, confirmed by trial calls)
#      side by side -> OUT/PART.csv, for each part: allgather (1 B-256 KiB), allreduce (int64 sums,
#      8 B-64 KiB), alltoall (1 B-4 KiB), sparse_8 and power_law (Alltoallv patterns, 8-512 B).
# Nothing is tuned on the node but the calibration (kept if OUT/node.yaml exists). Ratios come from
# bench/real_node/summary.py.
# usage: bench/real_node/run.sh BUILD_DIR OUT_DIR [NP] [ITERATIONS] [PART...]   (default: allgather allreduce)
set -euo pipefail
build=$1; out=$2; np=${3:-$(nproc)}; iterations=${4:-50}
parts=("${@:5}")
if [ ${#parts[@]} -eq 0 ]; then parts=(allgather allreduce); fi
mkdir -p "$out"
launcher=(mpirun -np "$np")
if [ "$(id -u)" = 0 ]; then launcher+=(--allow-run-as-root); fi
if [ "$np" -gt "$(nproc)" ]; then launcher+=(--oversubscribe); fi
if [ ! -f "$out/node.yaml" ]; then
  "$build/collshim-tune" calibrate -o "$out/node.yaml" --max-bytes 64KiB -- "${launcher[@]}" \
    -x COLLSHIM_TOPOLOGY=nodes=2,mapping=sequential
fi
csvs=()
for part in "${parts[@]}"; do
  case $part in
    allgather) args=(--collective allgather --min-bytes 1 --max-bytes 256KiB) ;;
    allreduce) args=(--collective allreduce --min-bytes 8 --max-bytes 64KiB) ;;
    alltoall) args=(--collective alltoall --min-bytes 1 --max-bytes 4KiB) ;;
    sparse_8 | power_law) args=(--collective alltoallv --pattern "$part" --min-bytes 8 --max-bytes 512) ;;
    *) echo "run.sh: unknown part '$part' (allgather, allreduce, alltoall, sparse_8, power_law)" >&2; exit 2 ;;
  esac
  "${launcher[@]}" -x COLLSHIM_PLATFORM="$out/node.yaml" "$build/collshim-bench" "${args[@]}" --rules none \
    --iterations "$iterations" --warmup 5 --csv >"$out/$part.csv"
  csvs+=("$out/$part.csv")
done
python3 "$(dirname "$0")/summary.py" "${csvs[@]}" | tee "$out/summary.md"
