#pragma once
// Which buffers live in GPU memory. The shim's algorithms read and write buffers on the host
// (memcpy in the call layouts, MPI_Reduce_local, packed scratch, shared-memory windows), so a call
// whose buffers are device or managed memory must go to the MPI library, which may be device-aware.
//
// The GPU runtimes are never loaded by the shim: their query functions are looked up only in objects
// the process has already loaded (dlopen with RTLD_NOLOAD), once at MPI_Init and again when a call
// finds none and the process has loaded new objects since the last look (a GPU runtime is often
// initialised after MPI_Init). Free of MPI, so a GPU check program links it alone.
//  - CUDA: the driver's cuPointerGetAttribute (libcuda.so.1), memory type (managed memory reports
//    the device type);
//  - ROCm: hipPointerGetAttributes (libamdhip64.so), whose memory-type numbering changed in ROCm 6
//    (hipRuntimeGetVersion tells which).
// Level Zero's zeMemGetAllocProperties needs the application's context handle, which the shim
// does not have: not checked.
#include <string>

namespace collshim {

class DeviceMemory {
 public:
  DeviceMemory();  // looks the runtimes up
  ~DeviceMemory();
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  // True when `pointer` is device or managed memory of a loaded GPU runtime. Null (MPI_BOTTOM) is host.
  bool is_device(const void* pointer);
  // Whether a GPU runtime's query was found (at the last look).
  bool runtime_loaded() const { return cuda_ != nullptr || hip_ != nullptr; }
  // The runtimes found, for the log: "CUDA driver (libcuda.so.1)", "" if none.
  std::string runtimes() const;

 private:
  void look_up();
  void release();
  bool new_objects_loaded();

  using CudaPointerGetAttribute = int (*)(void* data, int attribute, unsigned long long pointer);
  using HipPointerGetAttributes = int (*)(void* attributes, const void* pointer);
  void* cuda_handle_ = nullptr;
  void* hip_handle_ = nullptr;
  CudaPointerGetAttribute cuda_ = nullptr;
  HipPointerGetAttributes hip_ = nullptr;
  bool hip_numbering_6_ = false;          // ROCm 6 or later: 0 unregistered, 1 host; before: 0 host
  unsigned long long objects_added_ = 0;  // dl_iterate_phdr's count at the last look
};

// Whether the MPI library says it takes device buffers (MPIX_Query_cuda_support,
// MPIX_Query_rocm_support, MPIX_GPU_query_support), asked of whatever library the process linked.
bool mpi_library_device_aware();

}  // namespace collshim
