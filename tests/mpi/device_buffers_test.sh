#!/usr/bin/env bash
# Device buffers with the stub CUDA driver: runs device_buffers with an algorithm forced for every
# collective and checks the JSON report against the calls the program says it made. With `cuda` in
# place of the stub (tests/device/run_on_gpu.sh, on a machine with a GPU), the program's device
# buffers are the CUDA runtime's managed memory and nothing is preloaded but the shim. FORM
# (blocking, the default, or nonblocking) is the form of the program's calls, and of the report's rows.
# usage: device_buffers_test.sh NP SHIM STUB_DRIVER|cuda PROGRAM [FORM]
set -eu -o pipefail  # the run's own checks fail the test, not only the report's
np=$1; shim=$2; stub=$3; program=$4; form=${5:-blocking}
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
if [ "$stub" = cuda ]; then preload=$shim; program_args=(--cuda); else preload=$stub:$shim; program_args=(); fi
program_args+=(--form "$form")
# The blocking form logs the first pass-through on each rank once; the nonblocking one logs every
# operation's decision.
if [ "$form" = blocking ]; then
  passes_through=(--expect-lines "$np" "passes through to the MPI library \(the shim's algorithms touch host memory only\)")
else
  passes_through=(--expect-output "algorithm=native \(device memory\)")
fi
"$here/run_mpi_test.sh" --np "$np" --timeout 120 --preload "$preload" \
  --env COLLSHIM_ALLGATHER=ring --env COLLSHIM_ALLGATHERV=bruck --env COLLSHIM_ALLTOALL=bruck \
  --env COLLSHIM_ALLTOALLV=pairwise --env COLLSHIM_ALLREDUCE=rabenseifner --env COLLSHIM_GATHERV=binomial \
  --env COLLSHIM_SCATTERV=traff --env COLLSHIM_REPORT="$out/report.json" --env COLLSHIM_LOG=debug \
  --expect-output "device_buffers: [0-9]+ checks passed, 0 failed" \
  --expect-output "GPU buffers possible \(CUDA driver \(libcuda.so.1\) loaded\)" \
  "${passes_through[@]}" \
  -- "$program" "${program_args[@]}" | tee "$out/output.txt"
python3 "$here/check_device_report.py" "$out/report.json" "$out/output.txt" "$form"
