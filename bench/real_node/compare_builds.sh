#!/usr/bin/env bash
# Two revisions of the shim on one real node, side by side: builds each source tree, then runs
# bench/real_node/run.sh for A, B, B, A, ROUNDS times (the ABBA order spreads a drift of the node
# over both) with one platform description, calibrated once. The finished jobs are packed into
# OUT/jobs.tar.gz after each job, so a run stopped early still returns them. A job is not started
# once DEADLINE_S seconds have passed since the start.
# usage: bench/real_node/compare_builds.sh SRC_A SRC_B OUT [NP] [ITERATIONS] [PART...]
#   env: ROUNDS (default 1), DEADLINE_S (default 330), JOB_TIMEOUT_S (one job's limit, default 240), CMAKE_ARGS (extra
#   cmake arguments, e.g. a CLI11 prefix)
set -uo pipefail
src_a=$(cd "$1" && pwd); src_b=$(cd "$2" && pwd); out=$3; np=${4:-$(nproc)}; iterations=${5:-50}
parts=("${@:6}")
deadline=${DEADLINE_S:-330}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
log="$out/compare_builds.log"
start=$SECONDS
{
  lscpu | grep -E '^(Model name|CPU\(s\)|Thread|Core|Socket)' || true
  mpirun --version 2>&1 | sed -n 1p
} | tee "$log"
for side in a b; do
  src_var=src_$side
  build="/tmp/collshim-$side"
  # shellcheck disable=SC2086  # CMAKE_ARGS is a list of arguments
  if ! { cmake -S "${!src_var}" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCOLLSHIM_FORTRAN_TESTS=OFF \
    ${CMAKE_ARGS:-} && cmake --build "$build" -j"$(nproc)" --target collshim collshim-bench collshim-tune; } \
    >"$out/build-$side.txt" 2>&1; then
    echo "compare_builds: the build of $side (${!src_var}) failed: $out/build-$side.txt" | tee -a "$log"
    exit 1
  fi
  echo "built $side at $((SECONDS - start)) s" | tee -a "$log"
done
jobs=() done_jobs=()
for ((round = 0; round < ${ROUNDS:-1}; ++round)); do
  jobs+=("a$((2 * round + 1))" "b$((2 * round + 1))" "b$((2 * round + 2))" "a$((2 * round + 2))")
done
for job in "${jobs[@]}"; do
  if [ $((SECONDS - start)) -gt "$deadline" ]; then
    echo "compare_builds: $job not started, $((SECONDS - start)) s past the start" | tee -a "$log"
    continue
  fi
  dir="/tmp/real-node-$job"
  mkdir -p "$dir"
  [ -f /tmp/real-node-a1/node.yaml ] && cp /tmp/real-node-a1/node.yaml "$dir/"
  done_jobs+=("real-node-$job")
  job_start=$SECONDS
  timeout "${JOB_TIMEOUT_S:-240}" bash "$here/run.sh" "/tmp/collshim-${job:0:1}" "$dir" "$np" "$iterations" "${parts[@]}" >"$dir/job.txt" 2>&1
  echo "$job: status $?, $((SECONDS - job_start)) s" | tee -a "$log"
  tar -C /tmp -czf "$out/jobs.tar.gz" "${done_jobs[@]}"
done
echo "done at $((SECONDS - start)) s" | tee -a "$log"
