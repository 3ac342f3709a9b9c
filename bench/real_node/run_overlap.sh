#!/usr/bin/env bash
# The nonblocking collectives on this real node: collshim-bench --overlap (IMB-NBC's overlap, see
# docs/nonblocking.md) at NP ranks, native's MPI_I<collective> and every algorithm's schedule side by
# side in one run, with the blocking call's time and a persistent start's alongside -> OUT/PART-npNP.csv,
# for each part: allgather (8 B-64 KiB), allreduce (int64 sums, 8 B-64 KiB), alltoallv (uniform and
# sparse_sqrt patterns, 8 B-4 KiB per pair).
# usage: bench/real_node/run_overlap.sh BUILD_DIR OUT_DIR [NP] [ITERATIONS] [PART...]
set -euo pipefail
build=$1; out=$2; np=${3:-2}; iterations=${4:-50}
parts=("${@:5}")
if [ ${#parts[@]} -eq 0 ]; then parts=(allgather allreduce alltoallv_uniform alltoallv_sparse_sqrt); fi
mkdir -p "$out"
launcher=(mpirun -np "$np")
if [ "$(id -u)" = 0 ]; then launcher+=(--allow-run-as-root); fi
if [ "$np" -gt "$(nproc)" ]; then launcher+=(--oversubscribe); fi
for part in "${parts[@]}"; do
  case $part in
    allgather) args=(--collective allgather --min-bytes 8 --max-bytes 64KiB) ;;
    allreduce) args=(--collective allreduce --min-bytes 8 --max-bytes 64KiB) ;;
    alltoallv_uniform | alltoallv_sparse_sqrt)
      args=(--collective alltoallv --pattern "${part#alltoallv_}" --min-bytes 8 --max-bytes 4KiB) ;;
    *) echo "run_overlap.sh: unknown part $part" >&2; exit 2 ;;
  esac
  "${launcher[@]}" "$build/collshim-bench" --overlap --csv "${args[@]}" --iterations "$iterations" --warmup 5 \
    --platform "$(hostname)-$(nproc)core" >"$out/$part-np$np.csv"
  echo "$out/$part-np$np.csv"
done
