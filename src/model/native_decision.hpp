#pragma once
// What an MPI library runs for a collective call, so that the cost model can cost `native` too: its
// fixed decision logic (size and process-count thresholds) picks one of its algorithms, and where
// collshim has a schedule with the same messages, that schedule stands for it. Without this the
// model ranks collshim's algorithms but cannot say where they beat the library (issue 20: the tuner
// fills unmeasured cells only where native is costed too).
//
// The decisions are those of SimGrid 3.32's SMPI selectors, which are what the bench/sim sweeps
// measure and so what the model can be checked against:
//  - `ompi`: Open MPI's coll/tuned fixed rules (ompi_coll_tuned_allgather_intra_dec_fixed, as of
//    Open MPI 4.1; src/smpi/colls/smpi_openmpi_selector.cpp);
//  - `mpich`: MPICH's (Thakur et al. 2005; src/smpi/colls/smpi_mpich_selector.cpp);
//  - `mvapich2`: MVAPICH2's tuning tables for TACC Stampede (smpi_mvapich2_selector_stampede.hpp),
//    chosen by ranks per node; its two-level algorithm is not modelled;
//  - `impi`: Intel MPI's (smpi_intel_mpi_selector.cpp, from its reference manual), chosen by ranks per
//    node; its gather-and-broadcast algorithm is not modelled.
// Allgather is modelled for all four, Alltoall and Allreduce (commutative) for `ompi` and `mpich`. Each decision is costed by a
// stand-in with the same messages: a collshim algorithm, or, where the library runs a schedule
// collshim does not (MPICH's recursive doubling at a p that is not a power of two, Open MPI's linear
// Alltoall in its order, the XOR pair exchange, MVAPICH2's scatter-destination rounds), a schedule of
// its own (mpich_recursive_doubling.hpp, library_alltoall.hpp). A decision with no stand-in says
// why, and nothing is costed: a guess would not be evidence.
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms/collective.hpp"
#include "algorithms/schedule.hpp"

namespace collshim::model {

enum class NativeLibrary { ompi, mpich, mvapich2, impi };

// The placement as a library's decision sees it: MVAPICH2 and Intel MPI pick their table by ranks per
// node where every node holds as many (1 otherwise), and MVAPICH2 runs its two-level algorithm only
// where each node's ranks are consecutive ("blocked"). A simulator that makes every core a host (the
// bench/sim contending platforms) shows the library one rank per node.
struct LibraryPlacement {
  int ranks_per_node = 1;
  bool blocked = true;
};
LibraryPlacement library_placement(const std::vector<int>& node_of_rank);

std::optional<NativeLibrary> parse_native_library(std::string_view name);
std::string_view native_library_name(NativeLibrary library);
std::vector<std::string_view> native_library_names();

// The row label of a costed native decision: "native:ompi". The tuner reads it as a native baseline.
std::string native_label(NativeLibrary library);

// The schedule that stands for the library's algorithm may be another collective's with the same
// messages: SMPI's Allgather "ring" is no ring but a shift exchange (step i: the own block to
// rank + i, from rank − i), which is Alltoall `pairwise` with one block per pair.
struct NativeDecision {
  std::string library_algorithm;  // the library's own name for what it runs, e.g. "neighbor_exchange"
  Collective costed_as = Collective::allgather;  // the collective of the stand-in, blocks of the call's size
  // What is costed: a collshim spec of `costed_as`, or mpich_recursive_doubling_stand_in; empty:
  // not modelled.
  std::string stand_in;
  std::string why_not;  // when stand_in is empty: why
  // The stand-in's blocks are whole send buffers, p of the call's blocks (an Alltoall by recursive
  // doubling gathers every rank's buffer and keeps its part).
  bool whole_buffers = false;
};

// The stand-ins that are schedules of the model's own, not collshim algorithms.
inline constexpr std::string_view mpich_recursive_doubling_stand_in = "mpich_recursive_doubling";
inline constexpr std::string_view ompi_linear_alltoall_stand_in = "ompi_linear_alltoall";
inline constexpr std::string_view xor_pairwise_alltoall_stand_in = "xor_pairwise_alltoall";
inline constexpr std::string_view scatter_dest_alltoall_stand_in = "scatter_dest_alltoall";
bool is_library_schedule(std::string_view stand_in);

// The stand-in's schedules on a node map, and the rank symmetry the model may use with them.
struct NativeStandIn {
  std::function<Schedule(int rank)> schedule_of;
  RankSymmetry symmetry;
};
NativeStandIn native_stand_in(const NativeDecision& decision, const std::vector<int>& node_of_rank);

// `bytes`: the block per rank, or per pair for Alltoall (what the library's decision calls the
// per-process data size).
NativeDecision native_decision(NativeLibrary library, Collective collective, int p, long long bytes,
                               const LibraryPlacement& placement = {});

}  // namespace collshim::model
