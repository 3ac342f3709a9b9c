#!/usr/bin/env bash
# The one test command: installs dependencies, builds from clean, runs every unit and MPI test against
# Open MPI (build/), the MPI tests again against MPICH (build-mpich/), and a small simulated sweep
# under SimGrid SMPI (build-smpi/).
# COLLSHIM_SKIP_DEPS=1 skips the apt-get step on a machine that already has the packages.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ "${COLLSHIM_SKIP_DEPS:-0}" = 1 ] || bash "$root/tools/install-deps.sh"

echo "== Open MPI build: unit, MPI, tool and benchmark-smoke tests"
COLLSHIM_BUILD_DIR="$root/build" bash "$root/tools/build.sh"
# MPI tests oversubscribe the machine's cores on their own; running them one at a time keeps them fast.
(cd "$root/build" && ctest --output-on-failure -j 1)

echo "== MPICH build: MPI tests (up to 4 ranks: MPICH busy-polls when oversubscribed)"
COLLSHIM_BUILD_DIR="$root/build-mpich" bash "$root/tools/build.sh" -DCOLLSHIM_MPI=mpich
(cd "$root/build-mpich" && ctest --output-on-failure -j 1 -L mpi)

echo "== SimGrid SMPI build: the algorithms under simulation (a small simulated sweep)"
bash "$root/tools/test-smpi.sh"
