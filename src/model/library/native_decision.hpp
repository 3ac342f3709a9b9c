#pragma once
// What an MPI library runs for a collective call, so that the cost model can cost `native` too: its
// fixed decision logic (size and process-count thresholds) picks one of its algorithms, and where
// collshim has a schedule with the same messages, that schedule stands for it. Without this the
// model ranks collshim's algorithms but cannot say where they beat the library (the tuner
// fills unmeasured cells only where native is costed too).
//
// The decisions are data, one file per library and version (config/libraries/*.yaml, read by
// library_decisions.hpp); this header holds what they produce (NativeDecision) and the stand-ins that
// are schedules of the model's own, where the library runs one collshim does not (MPICH's recursive
// doubling at a p that is not a power of two, Open MPI's linear Alltoall in its order, the XOR pair
// exchange, MVAPICH2's and MPICH's scattered rounds: mpich_recursive_doubling.hpp,
// library_alltoall.hpp). A decision with no stand-in says why, and nothing is costed: a guess would
// not be evidence.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms/engine/collective.hpp"
#include "algorithms/engine/schedule.hpp"
#include "model/cost/alltoall_profiles.hpp"

namespace collshim::model {

// The placement as a library's decision sees it: MVAPICH2 and Intel MPI pick their table by ranks per
// node where every node holds as many (1 otherwise), MVAPICH2 runs its two-level algorithm only where
// each node's ranks are consecutive ("blocked"), and Open MPI 5's HAN and MPICH's node-aware
// compositions depend on how many nodes there are. A simulator that makes every core a host (the
// bench/sim contending platforms) shows the library one rank per node.
struct LibraryPlacement {
  int ranks_per_node = 1;
  bool blocked = true;
  int nodes = 0;  // 0: p / ranks_per_node, rounded up (every node holds ranks_per_node)
};
LibraryPlacement library_placement(const std::vector<int>& node_of_rank);

// The row label of a costed native decision, from the name --native was given: "native:ompi",
// "native:ompi-4.1". The tuner reads it as a native baseline.
std::string native_label(std::string_view name);

// The schedule that stands for the library's algorithm may be another collective's with the same
// messages: SMPI's Allgather "ring" is no ring but a shift exchange (step i: the own block to
// rank + i, from rank − i), which is Alltoall `pairwise` with one block per pair.
struct NativeDecision {
  std::string library_algorithm;                 // the library's own name for what it runs, e.g. "neighbor_exchange"
  Collective costed_as = Collective::allgather;  // the collective of the stand-in, blocks of the call's size
  // What is costed: a collshim spec of `costed_as`, or mpich_recursive_doubling_stand_in; empty:
  // not modelled.
  std::string stand_in;
  std::string why_not;  // when stand_in is empty: why
  // The stand-in's blocks are whole send buffers, p of the call's blocks (an Alltoall by recursive
  // doubling gathers every rank's buffer and keeps its part).
  bool whole_buffers = false;
  // The library posts a message for every pair, empty ones too (Open MPI's pairwise Alltoallv, through
  // ompi_coll_base_sendrecv_actual): the model costs them, where collshim's engine skips them.
  bool sends_empty_messages = false;
};

// The stand-ins that are schedules of the model's own, not collshim algorithms.
inline constexpr std::string_view mpich_recursive_doubling_stand_in = "mpich_recursive_doubling";
inline constexpr std::string_view ompi_linear_alltoall_stand_in = "ompi_linear_alltoall";
inline constexpr std::string_view ompi_linear_alltoallv_stand_in = "ompi_linear_alltoallv";
inline constexpr std::string_view xor_pairwise_alltoall_stand_in = "xor_pairwise_alltoall";
inline constexpr std::string_view scatter_dest_alltoall_stand_in = "scatter_dest_alltoall";
inline constexpr std::string_view mpich_scattered_alltoall_stand_in = "mpich_scattered_alltoall";
bool is_library_schedule(std::string_view stand_in);

// The stand-in's schedules on a node map, and the rank symmetry the model may use with them.
struct NativeStandIn {
  std::function<Schedule(int rank)> schedule_of;
  RankSymmetry symmetry;
  // An Alltoall(v) stand-in's profiles from counts (alltoall_profiles.hpp), as a candidate's come,
  // not from p schedules: those of `ranks` (none: every rank's), or none where the rank symmetry
  // serves. Empty: none.
  std::function<std::vector<RankProfile>(const AlltoallBlocks&, const std::vector<int>& ranks)> counted;
  // A collshim algorithm with the same messages in another order, with a rank symmetry, that costs
  // as this stand-in does where every pair's block has one size: call_prediction.cpp costs that
  // instead, marked approximated, where the stand-in's p² messages would be costed one by one beyond
  // its limit. Empty: none.
  std::string_view uniform_equivalent;
};
NativeStandIn native_stand_in(const NativeDecision& decision, const std::vector<int>& node_of_rank);

}  // namespace collshim::model
