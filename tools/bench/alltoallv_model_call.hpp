#pragma once
// An Alltoallv of collshim-bench's patterns (alltoallv_destinations) as the shim hands it to the cost
// model: decision_cost times that decision, collshim-config explain --pattern shows it.
#include <cstdint>
#include <string>
#include <vector>

#include "model/cost/alltoall_summary.hpp"
#include "model/cost/call_prediction.hpp"

namespace collshim::bench {

struct PatternCall {
  model::ModelCall call;
  // The average block over all p² pairs: what the shim keys the call on (agreed_block_bytes).
  long long average_block_bytes = 0;
  // Every rank's summary, as the shim gathers them (empty for `uniform`).
  std::vector<model::AlltoallRankSummary> summaries;
};

// How the model sees the pattern: as the shim does, rebuilt from every rank's summary
// (model::gather_alltoall_pattern), or every pair's block as it is (for comparison).
enum class PatternForm { summary, exact };

// Every rank sending `bytes` to each destination `pattern` lists for it (`uniform`: every rank), on
// `node_of_rank`. Neither form lists p² pairs unless the pattern has them.
PatternCall alltoallv_model_call(const std::string& pattern, int p, long long bytes, std::uint64_t seed,
                                 const std::vector<int>& node_of_rank, PatternForm form = PatternForm::summary);

}  // namespace collshim::bench
