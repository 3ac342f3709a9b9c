// A stand-in for the CUDA driver (libcuda.so.1) for tests on machines without a GPU. It defines the
// one driver entry point the shim asks, cuPointerGetAttribute, and answers "device memory" for
// the address ranges a test marks with collshim_stub_cuda_mark(); every other address gets
// CUDA_ERROR_INVALID_VALUE, as the real driver answers for plain malloc'd memory. The marked memory
// is ordinary host memory, so the MPI library can still move it when the shim passes a call on.
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace {

struct Range {
  std::uintptr_t begin, end;
  bool managed;
};

std::mutex ranges_mutex;
std::vector<Range> ranges;

// CUDA driver API values (cuda.h).
constexpr int cuda_success = 0;
constexpr int cuda_error_invalid_value = 1;
constexpr int attribute_memory_type = 2;
constexpr int attribute_is_managed = 8;
constexpr unsigned memory_type_device = 2;

}  // namespace

extern "C" {

__attribute__((visibility("default"))) void collshim_stub_cuda_mark(const void* pointer, std::size_t bytes,
                                                                    int managed) {
  const auto begin = reinterpret_cast<std::uintptr_t>(pointer);
  const std::lock_guard lock(ranges_mutex);
  ranges.push_back({begin, begin + bytes, managed != 0});
}

__attribute__((visibility("default"))) void collshim_stub_cuda_clear() {
  const std::lock_guard lock(ranges_mutex);
  ranges.clear();
}

// Managed memory reports the device memory type and the managed flag, as the driver does.
__attribute__((visibility("default"))) int cuPointerGetAttribute(void* data, int attribute,
                                                                 unsigned long long pointer) {
  const std::lock_guard lock(ranges_mutex);
  for (const Range& range : ranges) {
    if (pointer < range.begin || pointer >= range.end) continue;
    if (attribute == attribute_memory_type) {
      *static_cast<unsigned*>(data) = memory_type_device;
      return cuda_success;
    }
    if (attribute == attribute_is_managed) {
      *static_cast<unsigned*>(data) = range.managed ? 1 : 0;
      return cuda_success;
    }
    return cuda_error_invalid_value;
  }
  return cuda_error_invalid_value;
}

}  // extern "C"
