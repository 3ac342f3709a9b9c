#!/usr/bin/env bash
# Instructions the shim adds to a nonblocking call it passes through, and to MPI_Wait while it holds
# no request: MPI_Iallgather + MPI_Wait of 8 bytes at 1 rank (exact: no peer to poll for), counted
# by callgrind inside the measured loop only, at two loop lengths so that the difference is the cost
# of 100 pairs. Configurations: no shim; the shim with no Allgather rule (the fast path); the shipped
# rules; COLLSHIM_NONBLOCKING=native.
# usage: bench/overhead/nonblocking_passthrough.sh [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpicxx -O2 -o "$work/iallgather_loop" "$here/iallgather_loop.cpp"
count() {  # count CALLS ENV...: instructions inside the measured loop
  local calls=$1
  shift
  env "$@" valgrind --tool=callgrind --collect-atstart=no --toggle-collect=collshim_bench_measured_loop \
    --callgrind-out-file="$work/cg.out" "$work/iallgather_loop" "$calls" > /dev/null 2>&1
  callgrind_annotate "$work/cg.out" | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'
}
per_pair() { echo $(( ($(count 200 "$@") - $(count 100 "$@")) / 100 )); }
native=$(per_pair BENCH_CONFIGURATION=native)
echo "configuration,instructions_per_iallgather_and_wait,added"
echo "native (no shim),$native,0"
for config in "fast path (no allgather rule)|COLLSHIM_CONFIG=$here/rules/no_allgather_rule.yaml" \
              "shipped rules|BENCH_CONFIGURATION=shipped" "COLLSHIM_NONBLOCKING=native|COLLSHIM_NONBLOCKING=native"; do
  label=${config%%|*}
  n=$(per_pair LD_PRELOAD="$build/libcollshim.so" "${config#*|}")
  echo "shim, $label,$n,$((n - native))"
done
