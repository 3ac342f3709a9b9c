#!/usr/bin/env bash
# The device-memory check on a machine with an NVIDIA GPU and nvcc: builds gpu_classification with the
# shim's classifier and runs it (cudaMalloc and cudaMallocManaged must be device memory; pinned,
# malloc'd and stack memory host). No MPI, no build tree needed. Run from the repository root.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$(mktemp -d)}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
nvcc -std=c++17 -O1 -I"$root/src" "$root/tests/device/gpu_classification.cu" "$root/src/intercept/device_memory.cpp" \
  -o "$out/gpu_classification" -ldl
"$out/gpu_classification" | tee "$out/gpu_classification.txt"
