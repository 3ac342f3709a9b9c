// Device-memory classification against the stub CUDA driver (tests/device/stub_cuda_driver.cpp):
// nothing is device memory before a driver is loaded; once the process loads one (after the
// classifier was made, as an application that initialises CUDA after MPI_Init does), the next
// question looks it up again and the driver's answers count; plain memory stays host.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <vector>

#include "intercept/device_memory.hpp"

namespace collshim {
namespace {

using Mark = void (*)(const void*, std::size_t, int);

TEST(DeviceMemory, AsksOnlyADriverTheProcessLoadedAndFindsOneLoadedLater) {
  ASSERT_EQ(dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD), nullptr) << "a CUDA driver is already loaded";
  std::vector<char> device(256), host(256);
  DeviceMemory memory;
  EXPECT_FALSE(memory.runtime_loaded());
  EXPECT_FALSE(memory.is_device(device.data()));
  EXPECT_EQ(memory.runtimes(), "");

  void* driver = dlopen(COLLSHIM_STUB_CUDA_DRIVER, RTLD_NOW | RTLD_GLOBAL);
  ASSERT_NE(driver, nullptr) << dlerror();
  auto mark = reinterpret_cast<Mark>(dlsym(driver, "collshim_stub_cuda_mark"));
  ASSERT_NE(mark, nullptr);
  mark(device.data(), device.size(), 0);
  EXPECT_TRUE(memory.is_device(device.data()));  // looked up again: the process loaded new objects
  EXPECT_TRUE(memory.is_device(device.data() + 255));
  EXPECT_FALSE(memory.is_device(host.data()));
  EXPECT_FALSE(memory.is_device(nullptr));  // MPI_BOTTOM
  EXPECT_TRUE(memory.runtime_loaded());
  EXPECT_EQ(memory.runtimes(), "CUDA driver (libcuda.so.1)");

  DeviceMemory fresh;  // finds the loaded driver at once
  EXPECT_TRUE(fresh.runtime_loaded());
  std::vector<char> managed(64);
  mark(managed.data(), managed.size(), 1);
  EXPECT_TRUE(fresh.is_device(managed.data()));
  EXPECT_FALSE(fresh.is_device(host.data()));
}

}  // namespace
}  // namespace collshim
