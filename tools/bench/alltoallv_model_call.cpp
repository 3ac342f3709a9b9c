#include "alltoallv_model_call.hpp"

#include <vector>

#include "bench_case.hpp"
#include "model/alltoall_profiles.hpp"
#include "decide/model_step.hpp"

namespace collshim::bench {

PatternCall alltoallv_model_call(const std::string& pattern, int p, long long bytes, std::uint64_t seed) {
  // Every pair: the uniform form, without listing p² pairs (the other patterns are sparse).
  if (pattern == "uniform") return {{Collective::alltoallv, p, bytes}, bytes};
  const bool gathered = p <= model::max_gathered_procs;
  std::vector<long long> bytes_by_pair(gathered ? static_cast<std::size_t>(p) * p : 0, 0);
  long long pairs = 0;
  for (int origin = 0; origin < p; ++origin) {
    for (const int destination : alltoallv_destinations(pattern, origin, p, seed)) {
      if (gathered) bytes_by_pair[static_cast<std::size_t>(origin) * p + destination] = bytes;
      ++pairs;  // each destination is listed once
    }
  }
  PatternCall result;
  result.average_block_bytes = bytes * pairs / (static_cast<long long>(p) * p);
  result.call = {Collective::alltoallv, p, result.average_block_bytes};
  if (gathered) {
    result.call.pairs = model::alltoall_blocks(bytes_by_pair, p);
    if (result.call.pairs.uniform()) result.call.bytes = result.call.pairs.every_pair_bytes;
  }
  return result;
}

}  // namespace collshim::bench
