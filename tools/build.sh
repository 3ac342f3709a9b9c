#!/usr/bin/env bash
# Configures and builds collshim in ./build (or $COLLSHIM_BUILD_DIR) from a clean directory: every
# target, or only $COLLSHIM_BUILD_TARGET (e.g. mpi_suite, what the MPI tests run).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${COLLSHIM_BUILD_DIR:-$root/build}
rm -rf "$build"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
cmake --build "$build" -j "$(nproc)" ${COLLSHIM_BUILD_TARGET:+--target "$COLLSHIM_BUILD_TARGET"}
