#pragma once
// An Alltoallv's pattern as the model sees it: a summary of a few numbers per rank, gathered with one
// MPI_Gather of a fixed-size record (model_step.hpp), instead of every rank's p counts (p² on rank 0:
// 128 MiB at p = 4096). From the records one rank rebuilds, deterministically, a pattern with the
// same per-rank totals and degrees, split on-node and off-node as the real one, and costs that.
//
// What it keeps exactly: each rank's own block, its bytes to other ranks and to ranks of its node, how
// many ranks it sends to and receives from (on its node and in all), and its largest block. What it
// draws: which peers. The on-node ones are drawn among the node's ranks, the others among other
// nodes' ranks, each rank picked as often as it receives (a bipartite configuration model: the
// receivers' in-degrees are kept where the draw allows, so a hot spot stays a hot spot). Within a
// rank's on-node and off-node blocks the bytes are spread evenly, its largest block kept.
//
// Where every rank's record is the uniform exchange's (every pair the same bytes), the summary gives
// the uniform form, which the rank symmetries apply to: the same call as an Alltoall of that size.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/cost/alltoall_profiles.hpp"

namespace collshim::model {

// One rank's record, as gathered: summary_fields long longs.
struct AlltoallRankSummary {
  long long own_bytes = 0;          // its block to itself
  long long sent_bytes = 0;         // to the other ranks, in all
  long long destinations = 0;       // other ranks it sends a non-empty block to
  long long node_destinations = 0;  // of them, on its node
  long long node_sent_bytes = 0;    // their bytes
  long long largest_bytes = 0;      // its largest block to another rank
  long long sources = 0;            // other ranks it receives a non-empty block from
  long long node_sources = 0;       // of them, on its node

  bool operator==(const AlltoallRankSummary&) const = default;
};
inline constexpr std::size_t summary_fields = 8;

// Beyond this many ranks the shim gathers no summaries and the model costs an Alltoallv at its
// average block: a rebuilt irregular pattern has no rank symmetry (ModelCall's sampling needs one),
// and costing it over every rank took 2.7-9.5 s of processor time per key at p = 16384, against
// 0.1-0.4 s for the average block (bench/model/results/decision_cost_alltoallv_summary_after.csv).
inline constexpr std::size_t max_summarized_procs = 4096;

// This rank's record from its bytes to each destination and from each source (p entries each; in
// place, both the receive counts).
AlltoallRankSummary summarize_rank(int rank, const std::vector<long long>& sent_by_destination,
                                   const std::vector<long long>& received_by_source,
                                   const std::vector<int>& node_of_rank);

// The record as gathered, and back (a run of summary_fields values per rank).
std::vector<long long> summary_values(const AlltoallRankSummary& summary);
std::vector<AlltoallRankSummary> summaries_of(const std::vector<long long>& values);

// Beyond this many non-empty blocks per rank on average, the pattern rebuilt would hold nearly p²
// blocks on one rank: the model then costs every pair at the average block, as for a uniform call.
inline constexpr long long max_rebuilt_blocks_per_rank = 128;

// The pattern the model costs: the uniform form where every record is the uniform exchange's (or
// where the rebuilt pattern would exceed max_rebuilt_blocks_per_rank, at `average_bytes`), else
// the rebuilt pattern. Deterministic: the same records and node map give the same blocks.
AlltoallBlocks blocks_from_summaries(const std::vector<AlltoallRankSummary>& summaries,
                                     const std::vector<int>& node_of_rank, long long average_bytes);

}  // namespace collshim::model
