#include "intercept/device_memory.hpp"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <array>
#include <cstdint>

namespace collshim {
namespace {

// CUDA driver API values (cuda.h): CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_MEMORYTYPE_HOST, CUDA_SUCCESS.
// Plain malloc'd memory is not the driver's: the query fails.
constexpr int cuda_attribute_memory_type = 2;
constexpr unsigned cuda_memory_type_host = 1;
constexpr int cuda_success = 0;
constexpr int hip_success = 0;
// ROCm 6 renumbered hipMemoryType to follow CUDA (hipMemoryTypeUnregistered 0, Host 1, Device 2, ...);
// before it Host was 0 and Device 1. hipRuntimeGetVersion gives HIP_VERSION (major * 10^7 + ...).
constexpr int hip_version_6 = 60000000;

// The first of `names` the process has already loaded, or null. Never loads anything.
void* loaded_library(std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (void* handle = dlopen(name, RTLD_LAZY | RTLD_NOLOAD)) return handle;
  }
  return nullptr;
}

int objects_added_callback(dl_phdr_info* info, std::size_t, void* added) {
  *static_cast<unsigned long long*>(added) = info->dlpi_adds;
  return 1;  // the first object carries the process-wide count: stop there
}

}  // namespace

DeviceMemory::DeviceMemory() { look_up(); }

DeviceMemory::~DeviceMemory() { release(); }

void DeviceMemory::release() {
  if (cuda_handle_ != nullptr) dlclose(cuda_handle_);
  if (hip_handle_ != nullptr) dlclose(hip_handle_);
  cuda_handle_ = hip_handle_ = nullptr;
  cuda_ = nullptr;
  hip_ = nullptr;
}

void DeviceMemory::look_up() {
  release();
  new_objects_loaded();  // remember the count this look saw
  cuda_handle_ = loaded_library({"libcuda.so.1", "libcuda.so"});
  if (cuda_handle_ != nullptr)
    cuda_ = reinterpret_cast<CudaPointerGetAttribute>(dlsym(cuda_handle_, "cuPointerGetAttribute"));
  hip_handle_ = loaded_library({"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"});
  if (hip_handle_ != nullptr) {
    hip_ = reinterpret_cast<HipPointerGetAttributes>(dlsym(hip_handle_, "hipPointerGetAttributes"));
    using RuntimeGetVersion = int (*)(int*);
    auto version_of = reinterpret_cast<RuntimeGetVersion>(dlsym(hip_handle_, "hipRuntimeGetVersion"));
    int version = 0;
    hip_numbering_6_ = version_of != nullptr && version_of(&version) == hip_success && version >= hip_version_6;
  }
}

bool DeviceMemory::new_objects_loaded() {
  unsigned long long added = 0;
  dl_iterate_phdr(objects_added_callback, &added);
  const bool changed = added != objects_added_;
  objects_added_ = added;
  return changed;
}

bool DeviceMemory::is_device(const void* pointer) {
  if (pointer == nullptr) return false;
  if (!runtime_loaded() && new_objects_loaded()) look_up();
  if (cuda_ != nullptr) {
    unsigned memory_type = 0;
    const auto address = reinterpret_cast<std::uintptr_t>(pointer);
    // Managed memory reports the device type (with CU_POINTER_ATTRIBUTE_IS_MANAGED set); pinned host
    // memory the host type, which the shim may touch.
    if (cuda_(&memory_type, cuda_attribute_memory_type, address) == cuda_success &&
        memory_type != cuda_memory_type_host)
      return true;
  }
  if (hip_ != nullptr) {
    // hipPointerAttribute_t begins with its memory type; the rest (under 64 bytes in every ROCm
    // release) is not read, so room to spare keeps any release's layout safe.
    alignas(16) std::array<unsigned char, 256> attributes{};
    if (hip_(attributes.data(), pointer) == hip_success) {
      int memory_type = 0;
      std::copy_n(attributes.data(), sizeof memory_type, reinterpret_cast<unsigned char*>(&memory_type));
      const bool host = hip_numbering_6_ ? memory_type == 0 || memory_type == 1 : memory_type == 0;
      if (!host) return true;
    }
  }
  return false;
}

std::string DeviceMemory::runtimes() const {
  std::string text;
  if (cuda_ != nullptr) text = "CUDA driver (libcuda.so.1)";
  if (hip_ != nullptr) text += std::string(text.empty() ? "" : ", ") + "ROCm HIP (libamdhip64.so)";
  return text;
}

bool mpi_library_device_aware() {
  using QuerySupport = int (*)();
  for (const char* name : {"MPIX_Query_cuda_support", "MPIX_Query_rocm_support", "MPIX_Query_hip_support"}) {
    auto query = reinterpret_cast<QuerySupport>(dlsym(RTLD_DEFAULT, name));
    if (query != nullptr && query() != 0) return true;
  }
  // MPICH 4: MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA = 0, ZE = 1, HIP = 2, &supported).
  using GpuQuerySupport = int (*)(int, int*);
  if (auto query = reinterpret_cast<GpuQuerySupport>(dlsym(RTLD_DEFAULT, "MPIX_GPU_query_support"))) {
    for (int gpu_type = 0; gpu_type <= 2; ++gpu_type) {
      int supported = 0;
      if (query(gpu_type, &supported) == 0 && supported != 0) return true;
    }
  }
  return false;
}

}  // namespace collshim
