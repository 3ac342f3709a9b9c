#!/usr/bin/env bash
# The one test command: installs dependencies, builds from clean, runs every unit and MPI test.
# COLLSHIM_SKIP_DEPS=1 skips the apt-get step on a machine that already has the packages.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ "${COLLSHIM_SKIP_DEPS:-0}" = 1 ] || bash "$root/tools/install-deps.sh"
bash "$root/tools/build.sh"
cd "${COLLSHIM_BUILD_DIR:-$root/build}"
# MPI tests oversubscribe the machine's cores on their own; running them one at a time keeps them fast.
ctest --output-on-failure -j 1
# The same code under SimGrid SMPI: a second build in build-smpi and a small simulated sweep.
bash "$root/tools/test-smpi.sh"
