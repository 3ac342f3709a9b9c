#!/usr/bin/env bash
# The SimGrid SMPI build in ./build-smpi (or $COLLSHIM_SMPI_BUILD_DIR): configure, build collshim-bench and
# the unit tests, run the small simulated correctness sweep (ctest -L smpi, about a minute). Arguments
# are passed on to cmake (tools/test.sh asks for a unity build).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${COLLSHIM_SMPI_BUILD_DIR:-$root/build-smpi}
rm -rf "$build"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCOLLSHIM_MPI=smpi \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" "$@"
cmake --build "$build" -j "$(nproc)" --target collshim-bench
cd "$build"
ctest --output-on-failure -L smpi
