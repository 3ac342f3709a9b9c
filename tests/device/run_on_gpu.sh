#!/usr/bin/env bash
# The device-memory checks on a machine with an NVIDIA GPU and nvcc. Run from the repository root.
# 1. gpu_classification: the shim's classifier on real allocations (cudaMalloc and cudaMallocManaged
#    must be device memory; pinned, malloc'd and stack memory host). No MPI, no build tree.
# 2. Where MPI, CMake and the shim's libraries are installed: libcollshim and device_buffers built
#    with COLLSHIM_CUDA_TESTS, and mpi.device_buffers.cuda.np{2,3,4} run under the real MPI library:
#    calls on CUDA managed memory pass through, host calls run the forced algorithms, and every
#    result equals the library's. CLI11_PREFIX names an unpacked libcli11-dev where CLI11 is missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$(mktemp -d)}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
nvcc -std=c++17 -O1 -I"$root/src" "$root/tests/device/gpu_classification.cu" "$root/src/intercept/device_memory.cpp" \
  -o "$out/gpu_classification" -ldl
"$out/gpu_classification" | tee "$out/gpu_classification.txt"

if ! command -v mpicxx >/dev/null || ! command -v cmake >/dev/null; then
  echo "run_on_gpu: no MPI or CMake here; the MPI check is skipped"
  exit 0
fi
mpirun --version 2>&1 | sed -n 1p
ompi_info --parsable --all 2>/dev/null | grep -m1 'mpi_built_with_cuda_support:value' || true
build=${BUILD:-/tmp/collshim-gpu-build}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCOLLSHIM_FORTRAN_TESTS=OFF -DCOLLSHIM_CUDA_TESTS=ON \
  ${CLI11_PREFIX:+-DCMAKE_PREFIX_PATH=$CLI11_PREFIX} >"$out/cmake.txt"
# mpi_test_matrix writes the tests (tests/test_cases.json) for ctest; it builds collshim-config.
cmake --build "$build" -j"$(nproc)" --target collshim device_buffers mpi_test_matrix >"$out/build.txt"
# CUDA's runtime library, for device_buffers --cuda to open.
export LD_LIBRARY_PATH=${CUDA_HOME:-/usr/local/cuda}/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
ctest --test-dir "$build" -L cuda --output-on-failure | tee "$out/ctest_cuda.txt"
