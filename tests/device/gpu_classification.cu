// On a machine with an NVIDIA GPU: real allocations classified through the shim's own code path
// (src/intercept/device_memory.cpp), no MPI. Built and run by tests/device/run_on_gpu.sh; never
// part of the test suite, which runs without a GPU (the stub driver stands in there).
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#include "intercept/device_memory.hpp"

int main() {
  collshim::DeviceMemory before;  // made before the CUDA runtime has loaded the driver
  void* device = nullptr;
  void* managed = nullptr;
  void* pinned = nullptr;
  if (cudaMalloc(&device, 1 << 20) != cudaSuccess || cudaMallocManaged(&managed, 1 << 20) != cudaSuccess ||
      cudaMallocHost(&pinned, 1 << 20) != cudaSuccess) {
    std::printf("gpu_classification: CUDA allocation failed\n");
    return 2;
  }
  void* plain = std::malloc(1 << 20);
  collshim::DeviceMemory after;
  int failed = 0;
  auto expect = [&](collshim::DeviceMemory& memory, const char* who, const char* what, const void* p,
                    bool device_memory) {
    const bool got = memory.is_device(p);
    std::printf("%s %-28s %-18s device=%d (expected %d)\n", got == device_memory ? "ok  " : "FAIL", who, what, got,
                device_memory);
    failed += got != device_memory;
  };
  for (auto* memory : {&before, &after}) {
    const char* who = memory == &before ? "made before the driver loaded" : "made after";
    expect(*memory, who, "cudaMalloc", device, true);
    expect(*memory, who, "cudaMalloc + 4096", static_cast<char*>(device) + 4096, true);
    expect(*memory, who, "cudaMallocManaged", managed, true);
    expect(*memory, who, "cudaMallocHost", pinned, false);
    expect(*memory, who, "malloc", plain, false);
    expect(*memory, who, "stack", &failed, false);
  }
  std::printf("gpu_classification: runtimes found: %s; %d failed\n", after.runtimes().c_str(), failed);
  cudaFree(device);
  cudaFree(managed);
  cudaFreeHost(pinned);
  std::free(plain);
  return failed == 0 ? 0 : 1;
}
