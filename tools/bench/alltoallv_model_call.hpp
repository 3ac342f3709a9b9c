#pragma once
// An Alltoallv of collshim-bench's patterns (alltoallv_destinations) as the shim hands it to the cost
// model: decision_cost times that decision, collshim-config explain --pattern shows it.
#include <cstdint>
#include <string>

#include "model/cost/call_prediction.hpp"

namespace collshim::bench {

struct PatternCall {
  model::ModelCall call;
  // The average block over all p² pairs: what the shim keys the call on (agreed_block_bytes).
  long long average_block_bytes = 0;
};

// Every rank sending `bytes` to each destination `pattern` lists for it (`uniform`: every rank), as
// the shim builds the model's call on a key's first call: the bytes per pair gathered up to
// model::max_gathered_procs ranks (the uniform form where every pair holds the same), every pair at
// the average beyond (p² counts on one rank would not fit).
PatternCall alltoallv_model_call(const std::string& pattern, int p, long long bytes, std::uint64_t seed);

}  // namespace collshim::bench
