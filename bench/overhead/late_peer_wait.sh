#!/usr/bin/env bash
# What the shim itself executes while a program waits for a late peer: 2 ranks (Open MPI), rank 0
# sleeps 100 ms before each of 3 MPI_Iallgather + MPI_Wait (bench/overhead/late_peer_loop.cpp),
# which the shim runs with recursive doubling; callgrind on rank 1 counts the measured loop's
# instructions, all of them and those in libcollshim.so. A wait that polls through the shim spends
# its 300 ms there; one that blocks inside the library (OperationTable::wait_for_any) leaves the
# shim only a few passes. The library's own share depends on how long valgrind ran it.
# usage: bench/overhead/late_peer_wait.sh [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpicxx -O2 -o "$work/late_peer_loop" "$here/late_peer_loop.cpp"
cat > "$work/rank1.sh" <<'WRAP'
#!/bin/sh
if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then
  exec valgrind --tool=callgrind --collect-atstart=no --toggle-collect=collshim_bench_measured_loop \
    --callgrind-out-file="$CALLGRIND_OUT" "$@"
fi
exec "$@"
WRAP
chmod +x "$work/rank1.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun --oversubscribe -np 2 -x CALLGRIND_OUT="$work/cg.out" -x LD_PRELOAD="$build/libcollshim.so" \
  -x COLLSHIM_ALLGATHER=recursive_doubling "$work/rank1.sh" "$work/late_peer_loop" 3 > /dev/null 2>&1
total=$(callgrind_annotate "$work/cg.out" | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
shim=$(callgrind_annotate --threshold=100 "$work/cg.out" | awk '/libcollshim/ {gsub(",", "", $1); s += $1} END {print s + 0}')
echo "waits,instructions_in_loop,instructions_in_libcollshim,shim_per_wait"
echo "3,$total,$shim,$((shim / 3))"
