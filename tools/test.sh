#!/usr/bin/env bash
# The one test command: installs dependencies, checks formatting (tools/check-format.sh), builds
# from clean, runs every unit and MPI test against Open MPI (build/), the MPI tests again against
# MPICH (build-mpich/), a small simulated sweep
# under SimGrid SMPI (build-smpi/), and a short MPI subset with ASan/UBSan (build-asan/).
# COLLSHIM_SKIP_DEPS=1 skips the apt-get step on a machine that already has the packages.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ "${COLLSHIM_SKIP_DEPS:-0}" = 1 ] || bash "$root/tools/install-deps.sh"

echo "== Formatting: every tracked C/C++ file as .clang-format says (at ${SECONDS} s)"
# Seconds, before any build: a formatting slip fails here, not after the test stages.
bash "$root/tools/check-format.sh"

# Every build here starts from clean, so each is a unity build (CMake compiles a target's sources
# in batches of 8 per compiler run): the headers (spdlog, yaml-cpp, GoogleTest, the standard library)
# are parsed once per batch, not once per file. Measured on this 2-core machine, the Open MPI build
# took 287 s as separate files and 198 s unified. Incremental builds for development stay per file
# (tools/build.sh alone). Names at file scope must therefore differ across a target's files (a
# clash fails to compile here).
unity=-DCMAKE_UNITY_BUILD=ON

echo "== Open MPI build: unit, MPI, tool and benchmark-smoke tests (at ${SECONDS} s)"
# -g1 (line tables, enough for backtraces) compiles about 30% faster than -g; the code is the same.
COLLSHIM_BUILD_DIR="$root/build" bash "$root/tools/build.sh" "$unity" \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
# Unit, tool and benchmark-smoke tests run two at a time (one per core; none of them times anything:
# the overhead benchmark counts instructions). MPI tests oversubscribe the cores on their own; running
# them one at a time keeps them fast. Each algorithm and variant runs at one of tests/mpi_matrix.json's
# proc_sets (3 to 5 process counts; together every count of 1-9, 12 and 16): the unit tests check every
# schedule at every p to 130 without MPI, so the MPI tests stay thin as algorithms are added. At every
# p, the MPI tests took 1269 s of a 3015 s run here; at the sets about 650 s (from that run's costs).
(cd "$root/build" && ctest --output-on-failure -j "$(nproc)" -LE mpi)
(cd "$root/build" && ctest --output-on-failure -j 1 -L mpi)

echo "== MPICH build: MPI tests (up to 4 ranks: MPICH busy-polls when oversubscribed) (at ${SECONDS} s)"
# Only what differs by library is repeated here: each matrix family (an algorithm, a placement) once,
# at 3 or 4 ranks (tests/mpi/generate_mpi_tests.py), and no parameter variant (label variant), whose
# schedules Open MPI's stage and the unit tests already check.
# The MPICH and sanitizer builds exist only to run tests: line tables (-g1) are all their failure
# reports need, and full debug information made up about a quarter of the MPICH build's time
# (178 s -> 131 s in CI).
COLLSHIM_BUILD_DIR="$root/build-mpich" COLLSHIM_BUILD_TARGET=mpi_suite bash "$root/tools/build.sh" -DCOLLSHIM_MPI=mpich "$unity" \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
(cd "$root/build-mpich" && ctest --output-on-failure -j 1 -L mpi -LE variant)

echo "== SimGrid SMPI build: the algorithms under simulation (a small simulated sweep) (at ${SECONDS} s)"
bash "$root/tools/test-smpi.sh" "$unity"

echo "== Sanitizer build (ASan + UBSan, LeakSanitizer on): a short subset of the MPI tests under Open MPI (at ${SECONDS} s)"
# The tests labelled sanitize (the `sanitize` rule of tests/mpi_matrix.json and the entries of
# tests/test_cases.json marked `sanitize`): one process count (3) of every algorithm of every collective
# (not the parameter variants, label variant: the same code on another schedule), of the hierarchical
# placements, the Fortran programs and the isolation, reuse and error tests, plus the lifecycle (200
# communicators, leak-checked), thread, linked-library and collshim-run report tests, and the failure
# path (a truncation) of the algorithms with opaque phases and of the grid's probed messages.
# Only what those tests run is built (mpi_sanitizer_programs, listed from the same labels when CMake
# configures: not the unit tests, the benchmark or the tuning and model programs): the instrumented
# build is the slow part.
# -O1, as the ASan documentation recommends, with line tables: half the compile time of -O2 -g
# (443 s -> 229 s here), and the reports still name file and line.
COLLSHIM_BUILD_DIR="$root/build-asan" COLLSHIM_BUILD_TARGET=mpi_sanitizer_programs bash "$root/tools/build.sh" -DCOLLSHIM_SANITIZE=ON "$unity" \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
(cd "$root/build-asan" && ctest --output-on-failure -j 1 -L sanitize)
echo "== all stages passed (at ${SECONDS} s)"
