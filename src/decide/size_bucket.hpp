#pragma once
// The size bucket of a call: what tuning keys, settled decisions and the report's rows are keyed by
// (a decision is cached per exact size, settled per bucket).
#include <bit>
#include <cstdint>
#include <string>

namespace collshim {

// -1 for 0 bytes, else floor(log2(block_bytes)).
inline int size_bucket(long long block_bytes) {
  if (block_bytes <= 0) return -1;
  return std::bit_width(static_cast<std::uint64_t>(block_bytes)) - 1;
}

// "1KiB-2KiB", or "0B" for the empty bucket.
inline std::string bucket_text(int bucket) {
  if (bucket < 0) return "0B";
  auto size = [](int power) {
    static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    return std::to_string(1LL << (power % 10)) + units[power / 10];
  };
  return size(bucket) + "-" + size(bucket + 1);
}

}  // namespace collshim
