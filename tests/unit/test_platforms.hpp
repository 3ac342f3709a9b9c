#pragma once
// A small two-level platform description for the cost model's and the decision policy's unit tests:
// shared memory inside a node, a slower network between nodes.
#include "model/platform/platform.hpp"

namespace collshim::test {

inline model::Platform two_level_platform() {
  model::Platform platform;
  platform.name = "test";
  platform.shm.overhead_us = 0.5;
  platform.shm.transfer = {{1, 0.2, 10.0}};
  platform.net.overhead_us = 1.5;
  platform.net.transfer = {{1, 3.0, 5.0}};
  return platform;
}

}  // namespace collshim::test
