#include "alltoallv_model_call.hpp"

#include <algorithm>
#include <vector>

#include "bench_case.hpp"
#include "model/cost/alltoall_profiles.hpp"
#include "model/cost/alltoall_summary.hpp"

namespace collshim::bench {

PatternCall alltoallv_model_call(const std::string& pattern, int p, long long bytes, std::uint64_t seed,
                                 const std::vector<int>& node_of_rank, PatternForm form) {
  // Every pair: the uniform form, without listing p² pairs (the summary gives it too); nothing sent
  // also.
  if (pattern == "uniform" || bytes <= 0) return {{Collective::alltoallv, p, bytes}, bytes};
  // Each origin's blocks, and every rank's summary as summarize_rank makes it from its counts.
  model::AlltoallBlocks exact;
  exact.sending.resize(static_cast<std::size_t>(p));
  std::vector<model::AlltoallRankSummary> summaries(static_cast<std::size_t>(p));
  long long pairs = 0;
  for (int origin = 0; origin < p; ++origin) {
    auto& row = exact.sending[static_cast<std::size_t>(origin)];
    for (const int destination : alltoallv_destinations(pattern, origin, p, seed)) {
      row.emplace_back(destination, bytes);
      ++pairs;  // each destination is listed once
      model::AlltoallRankSummary& from = summaries[static_cast<std::size_t>(origin)];
      model::AlltoallRankSummary& to = summaries[static_cast<std::size_t>(destination)];
      if (destination == origin) {
        from.own_bytes = bytes;
        continue;
      }
      const bool on_node =
          node_of_rank[static_cast<std::size_t>(origin)] == node_of_rank[static_cast<std::size_t>(destination)];
      ++from.destinations;
      from.sent_bytes += bytes;
      from.largest_bytes = std::max(from.largest_bytes, bytes);
      ++to.sources;
      if (on_node) ++from.node_destinations, from.node_sent_bytes += bytes, ++to.node_sources;
    }
    std::sort(row.begin(), row.end());
  }
  PatternCall result;
  result.average_block_bytes = bytes * pairs / (static_cast<long long>(p) * p);
  result.call = {Collective::alltoallv, p, result.average_block_bytes};
  // (A pattern listing every pair is the uniform call, as the shim's summary finds.)
  if (pairs == static_cast<long long>(p) * p) exact = {bytes, {}};
  if (form == PatternForm::exact) {
    result.call.pairs = std::move(exact);
  } else if (static_cast<std::size_t>(p) > model::max_summarized_procs) {  // as the shim: the average block
    result.call.pairs = {result.average_block_bytes, {}};
  } else {
    result.call.pairs = model::blocks_from_summaries(summaries, node_of_rank, result.average_block_bytes);
  }
  if (result.call.pairs.uniform()) result.call.bytes = result.call.pairs.every_pair_bytes;
  result.summaries = std::move(summaries);
  return result;
}

}  // namespace collshim::bench
