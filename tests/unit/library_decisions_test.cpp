// The MPI libraries' own decisions as data (config/libraries/*.yaml) and their interpreter: every shipped file parses,
// the thresholds each real library's tables cite hold on both sides, the rule semantics (first match, nested lists,
// algorithms, labels, decide_as), the identification of the library from MPI_Get_library_version, and every problem
// of a malformed file reported with file:line:column.
#include <gtest/gtest.h>

#include <set>

#include "algorithms/engine/algorithm_spec.hpp"
#include "algorithms/engine/registry.hpp"
#include "model/library/library_decisions.hpp"

namespace collshim::model {
namespace {

NativeDecision decide(std::string_view tables, Collective collective, const LibraryFacts& facts) {
  const LibraryDecisions* found = library_decisions(tables);
  if (found == nullptr) throw std::logic_error("no tables " + std::string(tables));
  return native_decision(*found, collective, facts);
}

// "label -> stand-in" or "label: not modelled", the whole decision in one comparable line.
std::string runs(std::string_view tables, Collective collective, LibraryFacts facts) {
  if (collective == Collective::allreduce) facts.element_bytes = 8;  // the model's int64 vector
  const NativeDecision decision = decide(tables, collective, facts);
  if (decision.stand_in.empty()) return decision.library_algorithm + ": not modelled";
  std::string text = decision.library_algorithm + " -> ";
  if (decision.costed_as != collective) text += std::string(collective_name(decision.costed_as)) + " ";
  return text + decision.stand_in + (decision.sends_empty_messages ? " (empty messages sent)" : "");
}

LibraryFacts call(int p, long long bytes, LibraryPlacement placement = {}) { return {p, bytes, placement}; }

// p ranks on nodes of `per_node` each, consecutive.
LibraryPlacement nodes_of(int per_node) { return {per_node, true, 0}; }

TEST(LibraryDecisions, EveryShippedFileParsesAndCoversEveryCollective) {
  const std::vector<std::string_view> names = library_decisions_names();
  const std::set<std::string_view> shipped(names.begin(), names.end());
  for (const std::string_view expected :
       {"ompi-4.1", "ompi-5.0", "mpich-4", "mpich-4-ch3", "smpi-3.32-ompi", "smpi-3.32-mpich", "smpi-3.32-mvapich2",
        "smpi-3.32-impi", "smpi-3.32-default"})
    EXPECT_TRUE(shipped.contains(expected)) << expected;
  for (const std::string_view name : names) {
    const LibraryDecisions* tables = library_decisions(name);
    ASSERT_NE(tables, nullptr) << name;
    EXPECT_EQ(tables->name(), name);
    EXPECT_FALSE(tables->description().empty()) << name;
    EXPECT_FALSE(tables->source().empty()) << name;
    // The collectives the shipped files were written for. A collective added to the table later
    // reads as "<file> has no decision for <collective>" in a file that does not name it (the cost
    // model then has no native baseline for it; RulesFirstMatchNestedListsAlgorithmsAndLabels checks
    // the reason) until someone models it there.
    using enum Collective;
    for (const Collective collective : {allgather, allgatherv, alltoallv, allreduce, gatherv, scatterv, alltoall})
      EXPECT_TRUE(tables->covers(collective)) << name << " " << collective_name(collective);
  }
  EXPECT_EQ(library_decisions("ompi-4.0"), nullptr);
  EXPECT_EQ(library_decisions_alias("ompi"), "smpi-3.32-ompi");
  EXPECT_EQ(library_decisions_alias("impi"), "smpi-3.32-impi");
  EXPECT_EQ(library_decisions_alias("ompi-4.1"), "ompi-4.1");
}

// Every decision of every table names what the library runs or says why not, and every stand-in is a schedule the
// model has and, for collshim's algorithms, eligible at that p.
TEST(LibraryDecisions, EveryDecisionHasAnEligibleStandInOrAReason) {
  for (const std::string_view name : library_decisions_names()) {
    for (int p = 2; p <= 4200; p += p < 140 ? 1 : 97) {
      for (long long bytes = 1; bytes <= (4 << 20); bytes *= 4) {
        for (const CollectiveInfo& info : collectives) {
          for (const LibraryPlacement placement :
               {LibraryPlacement{1, true, 0}, LibraryPlacement{1 << (p % 5), p % 2 == 0, 0},
                LibraryPlacement{p, true, 1}, LibraryPlacement{1, false, 3}}) {
            LibraryFacts facts = call(p, bytes - 1, placement);
            facts.commutative = p % 3 != 0;
            const NativeDecision decision = decide(name, info.collective, facts);
            const std::string where = std::string(name) + " " + std::string(info.name) + " p = " + std::to_string(p) +
                                      ", " + std::to_string(bytes - 1) + " B";
            if (decision.stand_in.empty()) {
              EXPECT_FALSE(decision.why_not.empty()) << where;
              EXPECT_EQ(decision.why_not.find("no rule"), std::string::npos) << where << ": " << decision.why_not;
              continue;
            }
            EXPECT_FALSE(decision.library_algorithm.empty()) << where;
            if (is_library_schedule(decision.stand_in)) continue;
            const SpecParseResult parsed = parse_algorithm_spec(decision.stand_in, decision.costed_as);
            ASSERT_TRUE(parsed.choice) << where << ": " << parsed.error;
            const auto& eligible = parsed.choice->algorithm->eligible;
            EXPECT_TRUE(!eligible || eligible(p, parsed.choice->params)) << where << ": " << decision.stand_in;
          }
        }
      }
    }
  }
}

// Open MPI 4.1's coll_tuned_decision_fixed.c, both sides of the thresholds, and what its base algorithms run.
TEST(LibraryDecisions, OpenMpi41Allgather) {
  constexpr std::string_view t = "ompi-4.1";
  const auto allgather = [&](int p, long long bytes) { return runs(t, Collective::allgather, call(p, bytes)); };
  EXPECT_EQ(allgather(2, 1 << 20), "two_proc -> ring");
  EXPECT_EQ(allgather(16, 1 << 20), "recursive_doubling -> recursive_doubling");  // below 32 ranks, any size
  EXPECT_EQ(allgather(31, 8), "recursive_doubling (Bruck at p not a power of two) -> bruck");
  EXPECT_EQ(allgather(32, 1023), "recursive_doubling -> recursive_doubling");
  EXPECT_EQ(allgather(32, 1024), "neighbor -> neighbor_exchange");
  EXPECT_EQ(allgather(32, 65535), "neighbor -> neighbor_exchange");
  EXPECT_EQ(allgather(32, 65536), "ring -> ring");  // Open MPI's ring forwards, unlike SMPI's
  EXPECT_EQ(allgather(33, 4096), "neighbor (ring at odd p) -> ring");
  EXPECT_EQ(allgather(256, 31), "recursive_doubling -> recursive_doubling");
  EXPECT_EQ(allgather(256, 32), "bruck -> bruck");
  EXPECT_EQ(allgather(256, 127), "bruck -> bruck");
  EXPECT_EQ(allgather(256, 128), "recursive_doubling -> recursive_doubling");
  EXPECT_EQ(allgather(4096, 1), "recursive_doubling -> recursive_doubling");
  EXPECT_EQ(allgather(4096, 2), "bruck -> bruck");
  EXPECT_EQ(allgather(4096, 4095), "recursive_doubling -> recursive_doubling");
  EXPECT_EQ(allgather(4096, 4096), "neighbor -> neighbor_exchange");
  // Allgatherv by per_rank_dsize = the sum of the blocks / p.
  const auto allgatherv = [&](int p, long long bytes) { return runs(t, Collective::allgatherv, call(p, bytes)); };
  EXPECT_EQ(allgatherv(2, 2047), "ring -> ring");
  EXPECT_EQ(allgatherv(2, 2048), "two_proc -> ring");
  EXPECT_EQ(allgatherv(4, 255), "default: not modelled");
  EXPECT_EQ(allgatherv(4, 256), "neighbor -> neighbor_exchange");
  EXPECT_EQ(allgatherv(5, 256), "neighbor (ring at odd p) -> ring");
  EXPECT_EQ(allgatherv(4, 8191), "ring -> ring");
  EXPECT_EQ(allgatherv(4, 16384), "bruck -> bruck");
}

TEST(LibraryDecisions, OpenMpi41AlltoallAndAlltoallv) {
  constexpr std::string_view t = "ompi-4.1";
  const auto alltoall = [&](int p, long long bytes) { return runs(t, Collective::alltoall, call(p, bytes)); };
  EXPECT_EQ(alltoall(2, 1), "pairwise -> pairwise");
  EXPECT_EQ(alltoall(2, 2), "two_proc -> pairwise");
  EXPECT_EQ(alltoall(4, 8191), "linear_sync (every request at once) -> ompi_linear_alltoall");
  EXPECT_EQ(alltoall(4, 8192), "linear -> ompi_linear_alltoall");
  EXPECT_EQ(alltoall(6, 524287), "linear -> ompi_linear_alltoall");
  EXPECT_EQ(alltoall(6, 524288), "pairwise -> pairwise");  // Open MPI's pairwise shifts, at any p
  EXPECT_EQ(alltoall(16, 3), "linear_sync (every request at once) -> ompi_linear_alltoall");
  EXPECT_EQ(alltoall(16, 4), "modified_bruck -> bruck");
  EXPECT_EQ(alltoall(5000, 2047), "modified_bruck -> bruck");
  EXPECT_EQ(alltoall(5000, 2048), "linear_sync (every request at once) -> ompi_linear_alltoall");
  LibraryFacts in_place = call(16, 1024);
  in_place.in_place = true;
  EXPECT_EQ(runs(t, Collective::alltoall, in_place), "basic_inplace: not modelled");
  // Alltoallv by p alone (coll_tuned_decision_fixed.c): pairwise below 4, 64-127 and 256-1023.
  const auto alltoallv = [&](int p) { return runs(t, Collective::alltoallv, call(p, 8)); };
  const std::string pairwise = "pairwise -> pairwise (empty messages sent)",
                    linear = "basic_linear -> ompi_linear_alltoallv";
  for (const auto& [p, expected] : std::vector<std::pair<int, std::string>>{{2, pairwise},
                                                                            {3, pairwise},
                                                                            {4, linear},
                                                                            {63, linear},
                                                                            {64, pairwise},
                                                                            {127, pairwise},
                                                                            {128, linear},
                                                                            {255, linear},
                                                                            {256, pairwise},
                                                                            {1023, pairwise},
                                                                            {1024, linear},
                                                                            {5000, linear}})
    EXPECT_EQ(alltoallv(p), expected) << "p = " << p;
  EXPECT_EQ(runs(t, Collective::alltoallv, in_place), "basic_inplace: not modelled");
  // Open MPI 5.0 keeps 4.1's Alltoallv decision (HAN sets none).
  EXPECT_EQ(runs("ompi-5.0", Collective::alltoallv, call(64, 8, nodes_of(16))), pairwise);
}

TEST(LibraryDecisions, OpenMpi41Allreduce) {
  constexpr std::string_view t = "ompi-4.1";
  const auto allreduce = [&](int p, long long bytes, bool commutative = true) {
    LibraryFacts facts = call(p, bytes);
    facts.commutative = commutative;
    return runs(t, Collective::allreduce, facts);
  };
  EXPECT_EQ(allreduce(3, 7), "ring (recursive doubling: fewer elements than ranks) -> recursive_doubling");
  EXPECT_EQ(allreduce(3, 8), "recursive_doubling -> recursive_doubling");
  EXPECT_EQ(allreduce(3, 4095), "recursive_doubling -> recursive_doubling");
  EXPECT_EQ(allreduce(3, 4096), "ring -> ring");  // 512 elements in 3 uneven segments, as collshim's
  EXPECT_EQ(allreduce(20, 63), "segmented_ring (recursive doubling: fewer elements than ranks) -> recursive_doubling");
  EXPECT_EQ(allreduce(3, 65536), "segmented_ring (the ring: segsize 0) -> ring");
  EXPECT_EQ(allreduce(20, 4096), "rabenseifner -> rabenseifner");
  EXPECT_EQ(allreduce(40, 127), "segmented_ring (recursive doubling: fewer elements than ranks) -> recursive_doubling");
  // 16 elements, fewer than the 32 of the largest power of two up to 40: basic linear.
  EXPECT_EQ(allreduce(40, 128), "rabenseifner (basic_linear: fewer elements than the power of two): not modelled");
  EXPECT_EQ(allreduce(40, 256), "rabenseifner -> rabenseifner");
  EXPECT_EQ(allreduce(200, 131071), "nonoverlapping: not modelled");
  EXPECT_EQ(allreduce(200, 131072), "recursive_doubling -> recursive_doubling");
  EXPECT_EQ(allreduce(200, 262144), "rabenseifner -> rabenseifner");
  EXPECT_EQ(allreduce(3, 131071, false), "recursive_doubling -> recursive_doubling");
  EXPECT_EQ(allreduce(3, 131072, false), "basic_linear: not modelled");
  EXPECT_EQ(runs(t, Collective::gatherv, call(8, 8)), "basic linear (mca_coll_basic_gatherv_intra): not modelled");
  EXPECT_EQ(runs(t, Collective::scatterv, call(8, 8)), "basic linear (mca_coll_basic_scatterv_intra): not modelled");
}

// Open MPI 5.0: HAN takes Allgather and Allreduce across nodes; on one node, or nodes of different sizes for
// Allgather, coll/tuned decides as in 4.1.
TEST(LibraryDecisions, OpenMpi50HanAcrossNodes) {
  constexpr std::string_view t = "ompi-5.0";
  const auto same_as_41 = [&](Collective collective, const LibraryFacts& facts) {
    EXPECT_EQ(runs(t, collective, facts), runs("ompi-4.1", collective, facts));
  };
  same_as_41(Collective::allgather, call(64, 1024, {64, true, 1}));  // one node
  EXPECT_EQ(runs(t, Collective::allgather, call(64, 1024, nodes_of(16))),
            "han (node gather, leaders' allgather, node bcast): not modelled");
  same_as_41(Collective::allgather, call(64, 1024, nodes_of(1)));   // one rank per node: the leaders' tuned Allgather
  same_as_41(Collective::allgather, call(33, 1024, {1, true, 3}));  // 16 + 16 + 1: HAN falls back
  EXPECT_EQ(runs(t, Collective::allreduce, call(64, 1024, nodes_of(1))),
            "han (node reduce, leaders' ireduce and ibcast, node bcast): not modelled");
  same_as_41(Collective::allreduce, call(64, 1024, {64, true, 1}));
  LibraryFacts non_commutative = call(64, 1024, nodes_of(16));
  non_commutative.commutative = false;
  same_as_41(Collective::allreduce, non_commutative);
  same_as_41(Collective::alltoall, call(64, 1024, nodes_of(16)));
  same_as_41(Collective::allgatherv, call(64, 1024, nodes_of(16)));
  same_as_41(Collective::gatherv, call(64, 1024, nodes_of(16)));
}

// MPICH 4's JSON selection: total_msg_size < 512 KiB / < 80 KiB for Allgather (strictly below, where SMPI's copy of
// MPICH 3 takes 80 KiB itself), avg_msg_size <= 256 and <= 32 KiB for Alltoall.
TEST(LibraryDecisions, Mpich4AllgatherAndAlltoall) {
  constexpr std::string_view t = "mpich-4";
  const auto allgather = [&](int p, long long bytes) { return runs(t, Collective::allgather, call(p, bytes)); };
  EXPECT_EQ(allgather(64, 8191), "MPIR_Allgather_intra_recursive_doubling -> recursive_doubling");
  EXPECT_EQ(allgather(64, 8192), "MPIR_Allgather_intra_ring -> ring");
  EXPECT_EQ(allgather(96, 853), "MPIR_Allgather_intra_brucks -> bruck");  // 81888 B in all
  EXPECT_EQ(allgather(80, 1023), "MPIR_Allgather_intra_brucks -> bruck");
  EXPECT_EQ(allgather(80, 1024), "MPIR_Allgather_intra_ring -> ring");  // exactly 80 KiB
  EXPECT_EQ(runs("smpi-3.32-mpich", Collective::allgather, call(80, 1024)), "bruck -> bruck");
  const auto alltoall = [&](int p, long long bytes) { return runs(t, Collective::alltoall, call(p, bytes)); };
  EXPECT_EQ(alltoall(7, 8), "MPIR_Alltoall_intra_scattered -> mpich_scattered_alltoall");  // below 8 ranks no Bruck
  EXPECT_EQ(alltoall(7, 32768), "MPIR_Alltoall_intra_scattered -> mpich_scattered_alltoall");
  EXPECT_EQ(alltoall(7, 32769), "MPIR_Alltoall_intra_pairwise -> pairwise");
  EXPECT_EQ(alltoall(8, 256), "MPIR_Alltoall_intra_brucks -> bruck");
  EXPECT_EQ(alltoall(8, 257), "MPIR_Alltoall_intra_scattered -> mpich_scattered_alltoall");
  EXPECT_EQ(alltoall(8, 32769), "MPIR_Alltoall_intra_pairwise -> xor_pairwise_alltoall");
  LibraryFacts in_place = call(8, 8);
  in_place.in_place = true;
  EXPECT_EQ(runs(t, Collective::alltoall, in_place), "MPIR_Alltoall_intra_pairwise_sendrecv_replace: not modelled");
  // Alltoallv: the scattered exchange at any p and size (alltoallv_intra_scattered.c), in place the
  // sendrecv_replace exchange; the ch3 device ends in the same MPIR_Alltoallv_impl.
  for (const int p : {2, 7, 8, 1000})
    for (const std::string_view tables : {"mpich-4", "mpich-4-ch3"})
      EXPECT_EQ(runs(tables, Collective::alltoallv, call(p, 1 << 20)),
                "MPIR_Alltoallv_intra_scattered -> mpich_scattered_alltoall");
  EXPECT_EQ(runs(t, Collective::alltoallv, in_place), "MPIR_Alltoallv_intra_pairwise_sendrecv_replace: not modelled");
  // Allgatherv: the ring sends blocks above MPIR_CVAR_ALLGATHERV_PIPELINE_MSG_SIZE in chunks.
  EXPECT_EQ(runs(t, Collective::allgatherv, call(3, 32768)), "MPIR_Allgatherv_intra_ring -> ring");
  LibraryFacts uneven = call(3, 30000);
  uneven.max_bytes = 40000;
  EXPECT_EQ(runs(t, Collective::allgatherv, uneven), "MPIR_Allgatherv_intra_ring (chunked): not modelled");
  EXPECT_EQ(runs(t, Collective::allgatherv, call(3, 27306)), "MPIR_Allgatherv_intra_brucks -> bruck");  // 81918 B
}

// MPICH 4 (ch4): one node takes the shared-memory module's release_gather, nodes of more than one rank the node-aware
// composition, one rank per node the generic JSON; ch3 always the generic JSON.
TEST(LibraryDecisions, Mpich4Allreduce) {
  const auto allreduce = [](std::string_view t, int p, long long bytes, LibraryPlacement placement,
                            bool commutative = true, bool builtin = true) {
    LibraryFacts facts = call(p, bytes, placement);
    facts.commutative = commutative;
    facts.builtin_op = builtin;
    return runs(t, Collective::allreduce, facts);
  };
  const LibraryPlacement one_node{8, true, 1}, one_per_node = nodes_of(1), sixteen = nodes_of(16);
  EXPECT_EQ(allreduce("mpich-4", 8, 1024, one_node), "MPIDI_POSIX_mpi_allreduce_release_gather: not modelled");
  EXPECT_EQ(allreduce("mpich-4", 8, 1024, one_node, false, false),
            "MPIR_Allreduce_intra_recursive_doubling -> recursive_doubling");
  EXPECT_EQ(allreduce("mpich-4", 64, 1024, sixteen), "MPIDI_Allreduce_intra_composition_alpha: not modelled");
  EXPECT_EQ(allreduce("mpich-4", 33, 1024, {1, true, 3}), "MPIDI_Allreduce_intra_composition_alpha: not modelled");
  EXPECT_EQ(allreduce("mpich-4", 64, 8, one_per_node), "MPIR_Allreduce_intra_recursive_doubling -> recursive_doubling");
  EXPECT_EQ(allreduce("mpich-4", 64, 504, one_per_node),
            "MPIR_Allreduce_intra_recursive_doubling -> recursive_doubling");  // 63 < 64
  EXPECT_EQ(allreduce("mpich-4", 64, 512, one_per_node),
            "MPIR_Allreduce_intra_reduce_scatter_allgather -> rabenseifner");
  EXPECT_EQ(allreduce("mpich-4", 96, 512, one_per_node),
            "MPIR_Allreduce_intra_reduce_scatter_allgather -> rabenseifner");  // 64 = pof2
  EXPECT_EQ(allreduce("mpich-4", 96, 504, one_per_node),
            "MPIR_Allreduce_intra_recursive_doubling -> recursive_doubling");
  EXPECT_EQ(allreduce("mpich-4", 64, 1 << 20, one_per_node, true, false),
            "MPIR_Allreduce_intra_recursive_doubling -> recursive_doubling");
  EXPECT_EQ(allreduce("mpich-4", 64, 0, one_per_node), "MPIR_Allreduce_intra_smp: not modelled");
  EXPECT_EQ(allreduce("mpich-4-ch3", 64, 512, sixteen),
            "MPIR_Allreduce_intra_reduce_scatter_allgather -> rabenseifner");
  EXPECT_EQ(allreduce("mpich-4-ch3", 8, 1024, one_node),
            "MPIR_Allreduce_intra_reduce_scatter_allgather -> rabenseifner");
  EXPECT_EQ(runs("mpich-4-ch3", Collective::alltoall, call(8, 256)), "MPIR_Alltoall_intra_brucks -> bruck");
  EXPECT_EQ(runs("mpich-4", Collective::gatherv, call(8, 8)), "MPIR_Gatherv_allcomm_linear: not modelled");
}

TEST(LibraryDecisions, SmpiDefaultSelector) {
  EXPECT_EQ(runs("smpi-3.32-default", Collective::alltoall, call(64, 1023)),
            runs("smpi-3.32-ompi", Collective::alltoall, call(64, 1023)));
  EXPECT_EQ(runs("smpi-3.32-default", Collective::allgather, call(64, 8)),
            "iallgather (linear) -> alltoall ompi_linear_alltoallv");
  EXPECT_EQ(runs("smpi-3.32-default", Collective::allreduce, call(64, 8)),
            "reduce__default + bcast__default: not modelled");
}

// Intel MPI's Alltoallv in SMPI tests the constant size 1, so only p and the ranks per node decide.
// Its plum and the MPICH selector's Alltoallv are alltoallv__bruck: the scattered exchange in rounds
// of 4 pairs (alltoallv-bruck.cpp, bblock = 4), empty ones posted.
TEST(LibraryDecisions, SmpiAlltoallvDecisions) {
  EXPECT_EQ(runs("smpi-3.32-impi", Collective::alltoallv, call(32, 1 << 20, nodes_of(8))),
            "plum (alltoallv__bruck) -> scatter_dest_alltoall (empty messages sent)");
  EXPECT_EQ(runs("smpi-3.32-impi", Collective::alltoallv, call(17, 8, nodes_of(4))),
            "plum (alltoallv__bruck) -> scatter_dest_alltoall (empty messages sent)");
  EXPECT_EQ(runs("smpi-3.32-mpich", Collective::alltoallv, call(64, 8)),
            "bruck (alltoallv__bruck) -> scatter_dest_alltoall (empty messages sent)");
  // SMPI's copy of Open MPI's basic linear posts empty messages too.
  const std::string smpi_linear =
      "isend_irecv (alltoallv__ompi_basic_linear) -> ompi_linear_alltoallv (empty messages sent)";
  EXPECT_EQ(runs("smpi-3.32-impi", Collective::alltoallv, call(16, 1 << 20, nodes_of(8))), smpi_linear);
  EXPECT_EQ(runs("smpi-3.32-impi", Collective::alltoallv, call(32, 1 << 20, nodes_of(16))), smpi_linear);
  // SMPI's Open MPI selector: Open MPI's thresholds; its pairwise is the XOR exchange, which throws at
  // a p that is not a power of two.
  const auto smpi_ompi = [](int p) { return runs("smpi-3.32-ompi", Collective::alltoallv, call(p, 8)); };
  EXPECT_EQ(smpi_ompi(4), "basic_linear (alltoallv__ompi_basic_linear) -> ompi_linear_alltoallv (empty messages sent)");
  EXPECT_EQ(smpi_ompi(64), "pairwise (alltoallv__pair) -> xor_pairwise_alltoall (empty messages sent)");
  EXPECT_EQ(smpi_ompi(100), "pairwise (alltoallv__pair): not modelled");
  // MVAPICH2's: alltoallv__ring, the XOR exchange at a power of two and the shift elsewhere
  // (alltoallv-ring.cpp), every pair posted.
  EXPECT_EQ(runs("smpi-3.32-mvapich2", Collective::alltoallv, call(64, 8)),
            "ring (alltoallv__ring) -> xor_pairwise_alltoall (empty messages sent)");
  EXPECT_EQ(runs("smpi-3.32-mvapich2", Collective::alltoallv, call(63, 8)),
            "ring (alltoallv__ring) -> pairwise (empty messages sent)");
  // SMPI's default: colls::ialltoallv (smpi_nbc_impl.cpp), every message at once in rank order.
  EXPECT_EQ(runs("smpi-3.32-default", Collective::alltoallv, call(63, 8)),
            "ialltoallv (linear) -> ompi_linear_alltoallv (empty messages sent)");
}

// The exact texts of MPI_Get_library_version from the libraries installed here (Open MPI 4.1.4 counts its
// terminating NUL; MPICH's configure line is shortened).
constexpr std::string_view open_mpi_414{
    "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4, May 26, 2022\0", 88};
constexpr std::string_view mpich_402 =
    "MPICH Version:\t4.0.2\nMPICH Release date:\tThu Apr  7 12:34:45 CDT 2022\nMPICH ABI:\t14:2:2\n"
    "MPICH Device:\tch4:ucx\nMPICH configure:\t--build=x86_64-linux-gnu --prefix=/usr --with-libfabric=/usr "
    "--with-slurm=/usr --with-ucx=/usr --with-device=ch4:ucx --with-pm=hydra\nMPICH CC:\tgcc -g -O2\n";
constexpr std::string_view smpi_332 = "SMPI Version 3.32. Copyright The SimGrid Team 2007-2022";

TEST(LibraryDecisions, IdentifiesTheInstalledLibraries) {
  const LibraryIdentity ompi = identify_library(open_mpi_414);
  EXPECT_EQ(ompi.tables, "ompi-4.1");
  EXPECT_EQ(ompi.description, "Open MPI 4.1.4");
  EXPECT_TRUE(ompi.why_none.empty());
  const LibraryIdentity mpich = identify_library(mpich_402);
  EXPECT_EQ(mpich.tables, "mpich-4");
  EXPECT_EQ(mpich.description, "MPICH 4.0.2 (ch4:ucx)");
  for (const std::string_view selector : {"ompi", "mpich", "mvapich2", "impi", "default"}) {
    const LibraryIdentity smpi = identify_library(smpi_332, selector);
    EXPECT_EQ(smpi.tables, "smpi-3.32-" + std::string(selector));
    EXPECT_EQ(smpi.description, "SimGrid 3.32 SMPI, smpi/coll-selector:" + std::string(selector));
    EXPECT_NE(library_decisions(smpi.tables), nullptr);
  }
  EXPECT_EQ(identify_library(
                "Open MPI v5.0.3, package: Open MPI builder Distribution, ident: 5.0.3, repo rev: v5.0.3, Apr 08, 2024")
                .tables,
            "ompi-5.0");
  EXPECT_EQ(identify_library("Open MPI v4.1.6rc1, package: Open MPI, ident: 4.1.6rc1").description,
            "Open MPI 4.1.6rc1");
  EXPECT_EQ(identify_library("MPICH Version:\t4.1.2\nMPICH Device:\tch4:ofi\n").tables, "mpich-4");
  EXPECT_EQ(identify_library("MPICH Version:\t4.0\nMPICH Device:\tch3:nemesis\n").tables, "mpich-4-ch3");
  EXPECT_EQ(identify_library("SMPI Version 3.36. Copyright The SimGrid Team 2007-2024", "ompi").tables,
            "smpi-3.32-ompi");
}

TEST(LibraryDecisions, NoTablesForAnUnknownLibraryOrVersionWithAReason) {
  const auto none = [](std::string_view text, std::string_view selector, std::string_view reason) {
    const LibraryIdentity identity = identify_library(text, selector);
    EXPECT_TRUE(identity.tables.empty()) << text;
    EXPECT_NE(identity.why_none.find(reason), std::string::npos) << text << ": " << identity.why_none;
  };
  none("Intel(R) MPI Library 2021.6 for Linux* OS\n", "",
       "unknown MPI library: 'Intel(R) MPI Library 2021.6 for Linux* OS'");
  none("MVAPICH2 Version     :\t2.3.7\nMVAPICH2 Release date :\tWed March 02 22:00:00 EST 2022\n", "",
       "unknown MPI library");
  none("Open MPI v4.0.3, package: Debian OpenMPI, ident: 4.0.3", "", "no tables for Open MPI 4.0");
  none("Open MPI v6.0.0, package: Open MPI", "", "no tables for Open MPI 6.0");
  none("MPICH Version:\t3.4.3\nMPICH Device:\tch4:ofi\n", "", "no tables for MPICH 3.4");
  none("MPICH Version:\t4.2.0\nMPICH Device:\tch4:ofi\n", "", "no tables for MPICH 4.2");
  none("MPICH Version:\t4.0.2\n", "", "no 'MPICH Device:' line");
  none("MPICH Version:\t4.0.2\nMPICH Device:\tch4:ucx\nMPICH configure:\t--with-hcoll=/opt/hcoll\n", "", "HCOLL");
  none(smpi_332, "", "smpi/coll-selector is not known");
  none(smpi_332, "automatic", "no tables for smpi/coll-selector:automatic");
  none("SMPI Version 3.30. Copyright The SimGrid Team 2007-2022", "ompi", "no tables for SimGrid 3.30");
  none("", "", "unknown MPI library");
}

// COLLSHIM_MPI_LIBRARY may name a library as rules do; its tables are those identification gives it.
TEST(LibraryDecisions, ANamedLibraryGetsTheTablesOfItsVersion) {
  auto tables = [](std::string_view name) {
    std::string error;
    const auto library = mpi_library_from_name(name, error);
    EXPECT_TRUE(library) << error;
    const LibraryIdentity identity = library_tables(*library, "");
    return identity.tables.empty() ? "none: " + identity.why_none : identity.tables;
  };
  EXPECT_EQ(tables("ompi 4.1.6"), "ompi-4.1");
  EXPECT_EQ(tables("ompi 5.0"), "ompi-5.0");
  EXPECT_EQ(tables("smpi-mpich 3.35"), "smpi-3.32-mpich");
  EXPECT_EQ(tables("impi"), "smpi-3.32-impi");
  EXPECT_EQ(tables("smpi-ompi"), "smpi-3.32-ompi");  // a selector without a version: the only tables there are
  EXPECT_EQ(tables("ompi 4.0.3"), "none: no tables for Open MPI 4.0 (ompi-4.1 and ompi-5.0 exist)");
  // MPICH's tables depend on its device, which only the library's own version text says.
  EXPECT_EQ(tables("mpich 4.0.2").rfind("none: no 'MPICH Device:' line", 0), 0u);
}

// The interpreter: first match wins, a nested list decides when its conditions hold, an algorithm's variants pick the
// stand-in, the innermost label names what runs, thresholds scale with p, decide_as follows another table.
constexpr const char* small_table = R"yaml(library: test
description: a test
source: here
collectives:
  allgather:
    source: nowhere
    rules:
      - {p: 2, run: pair}
      - p: {below: 16}
        rules:
          - {bytes: {up_to: 1024}, run: doubling}
          - {total_bytes: {below: 1024*p}, run: doubling}
      - {ranks_per_node: {in: [4, 8]}, balanced: true, label: "by nodes", stand_in: ring}
      - {nodes: {at_least: 3}, blocked: false, not_modelled: "scattered nodes"}
      - {ranks_per_node: {not_in: [1]}, decide_as: smpi-3.32-ompi}
      - {p: {above: 20}, bytes: {below: 1*pof2}, stand_in: bruck}
  alltoall:
    source: nowhere
    rules:
      - {elements: {below: 2*p}, elements_multiple_of_p: true, label: "few", stand_in: pairwise}
      - {in_place: true, costed_as: allgather, whole_buffers: true, stand_in: mpich_recursive_doubling}
    algorithms:
      unused:
        - {not_modelled: "never"}
    # a comment
)yaml";
constexpr const char* small_algorithms = R"yaml(    algorithms:
      pair:
        - {stand_in: ring}
      doubling:
        - {p_power_of_two: true, stand_in: recursive_doubling}
        - {label: "doubling (tree)", run: tree}
      tree:
        - {stand_in: mpich_recursive_doubling}
)yaml";

TEST(LibraryDecisions, RulesFirstMatchNestedListsAlgorithmsAndLabels) {
  std::string text = small_table;
  text.insert(text.find("  alltoall:"), small_algorithms);
  const LibraryDecisions tables = parse_library_decisions(text, "test.yaml");
  EXPECT_EQ(tables.name(), "test");
  EXPECT_TRUE(tables.covers(Collective::allgather));
  EXPECT_FALSE(tables.covers(Collective::allreduce));
  const auto run = [&](Collective collective, LibraryFacts facts) {
    const NativeDecision d = native_decision(tables, collective, facts);
    return d.library_algorithm + "|" + std::string(collective_name(d.costed_as)) + "|" + d.stand_in + "|" + d.why_not +
           (d.whole_buffers ? "|whole" : "");
  };
  EXPECT_EQ(run(Collective::allgather, call(2, 1 << 20)), "pair|allgather|ring|");
  EXPECT_EQ(run(Collective::allgather, call(8, 1024)), "doubling|allgather|recursive_doubling|");
  EXPECT_EQ(run(Collective::allgather, call(6, 1024)), "doubling (tree)|allgather|mpich_recursive_doubling|");
  LibraryFacts uneven = call(6, 2000);
  uneven.total_bytes = 6000;  // below 1024 * 6
  EXPECT_EQ(run(Collective::allgather, uneven), "doubling (tree)|allgather|mpich_recursive_doubling|");
  // The nested list's conditions held and none of its rules matches: a reason, not the next rule.
  const std::string unmatched = run(Collective::allgather, call(6, 1 << 20));
  EXPECT_NE(unmatched.find("test: no rule for allgather matches p = 6, 1048576 B"), std::string::npos) << unmatched;
  EXPECT_EQ(run(Collective::allgather, call(32, 8, nodes_of(8))), "by nodes|allgather|ring|");
  // 33 ranks on nodes of 8 are not balanced: past "by nodes", to the table decide_as names.
  EXPECT_EQ(run(Collective::allgather, call(33, 8, {8, true, 0})),
            "recursive_doubling|allgather|mpich_recursive_doubling|");
  EXPECT_EQ(run(Collective::allgather, call(32, 8, {1, false, 3})), "|allgather||scattered nodes");
  // Above 20 ranks, blocks below the largest power of two up to p.
  EXPECT_EQ(run(Collective::allgather, call(32, 31, {1, true, 3})), "|allgather|bruck|");
  EXPECT_NE(run(Collective::allgather, call(32, 32)).find("no rule"), std::string::npos);
  EXPECT_EQ(run(Collective::allgather, call(63, 31)), "|allgather|bruck|");
  EXPECT_NE(run(Collective::allgather, call(63, 32)).find("no rule"), std::string::npos);
  EXPECT_EQ(run(Collective::allgather, call(64, 63)), "|allgather|bruck|");
  EXPECT_NE(run(Collective::allgather, call(20, 8)).find("no rule"), std::string::npos);
  // elements per rank: 2p elements is not below 2p.
  EXPECT_EQ(run(Collective::alltoall, call(4, 4)), "few|alltoall|pairwise|");
  EXPECT_NE(run(Collective::alltoall, call(4, 8)).find("no rule"), std::string::npos);
  EXPECT_NE(run(Collective::alltoall, call(4, 5)).find("no rule"), std::string::npos);  // 5 is no multiple of 4
  LibraryFacts in_place = call(4, 8);
  in_place.in_place = true;
  EXPECT_EQ(run(Collective::alltoall, in_place), "|allgather|mpich_recursive_doubling||whole");
  const NativeDecision missing = native_decision(tables, Collective::gatherv, call(4, 8));
  EXPECT_NE(missing.why_not.find("test has no decision for gatherv"), std::string::npos) << missing.why_not;
}

// decide_as must name a table of the set and not lead back, for any collective, through rules or algorithms.
TEST(LibraryDecisions, DecideAsNamesATableAndDoesNotComeBack) {
  const auto file = [](const std::string& name, const std::string& alltoall) {
    return parse_library_decisions("library: " + name +
                                       "\nsource: here\ncollectives:\n  allgather:\n    source: x\n"
                                       "    rules: [{stand_in: ring}]\n  alltoall:\n    source: x\n" +
                                       alltoall,
                                   name + ".yaml");
  };
  const LibraryDecisions a = file("a",
                                  "    rules: [{p: 2, stand_in: pairwise}, {run: other}]\n"
                                  "    algorithms:\n      other: [{decide_as: b}]\n");
  const LibraryDecisions b = file("b", "    rules: [{decide_as: c}]\n");
  const LibraryDecisions c = file("c", "    rules: [{stand_in: pairwise}]\n");
  const LibraryDecisions back = file("c", "    rules: [{decide_as: a}]\n");
  EXPECT_NO_THROW(check_library_decisions({&a, &b, &c}));
  const auto error = [](const std::vector<const LibraryDecisions*>& set) {
    try {
      check_library_decisions(set);
    } catch (const LibraryTableError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(error({&a, &b}), "b: decide_as 'c' names no table");
  EXPECT_EQ(error({&a, &b, &back}), "a: decide_as for alltoall comes back: a -> b -> c -> a");
  EXPECT_EQ(a.decides_as(), std::vector<std::string>{"b"});
}

// A problem in a file is reported with the file, line and column of what is wrong.
std::string parse_error(const std::string& text) {
  try {
    parse_library_decisions(text, "bad.yaml");
  } catch (const LibraryTableError& e) {
    return e.what();
  }
  return "(parsed)";
}

std::string with_allgather(const std::string& rules, const std::string& rest = "") {
  return "library: bad\nsource: here\ncollectives:\n  allgather:\n    source: nowhere\n    rules:\n" + rules + rest;
}

TEST(LibraryDecisions, MalformedFilesAreErrorsWithFileLineAndColumn) {
  EXPECT_EQ(parse_error("library: bad\nsource: [unclosed\n").substr(0, 30), "bad.yaml:3:1: malformed YAML: ");
  EXPECT_EQ(parse_error(with_allgather("      - {p: 2, runs: ring}\n")).substr(0, 43),
            "bad.yaml:7:16: unknown key 'runs' in a rule");
  EXPECT_EQ(parse_error(with_allgather("      - {p: 2, run: ring}\n")),
            "bad.yaml:7:21: run 'ring': no such algorithm under 'algorithms'");
  EXPECT_EQ(parse_error(with_allgather("      - {p: {below: 12*q}, stand_in: ring}\n")),
            "bad.yaml:7:21: bad threshold '12*q' for 'p.below', expected N, N*p or N*pof2");
  EXPECT_EQ(parse_error(with_allgather("      - {p: {below: -3}, stand_in: ring}\n")).substr(0, 44),
            "bad.yaml:7:21: bad threshold '-3' for 'p.bel");
  EXPECT_EQ(parse_error(with_allgather("      - {p: {under: 3}, stand_in: ring}\n")).substr(0, 50),
            "bad.yaml:7:14: unknown key 'under' in the conditio");
  EXPECT_EQ(parse_error(with_allgather("      - {p_even: maybe, stand_in: ring}\n")),
            "bad.yaml:7:18: bad value 'maybe' for 'p_even', expected true or false");
  EXPECT_EQ(parse_error(with_allgather("      - {stand_in: ring, not_modelled: \"why\"}\n")),
            "bad.yaml:7:26: a rule has one outcome: 'run', 'rules', 'decide_as', 'not_modelled' or 'stand_in'");
  EXPECT_EQ(parse_error(with_allgather("      - {p: 2}\n")),
            "bad.yaml:7:9: a rule needs one outcome: 'run', 'rules', 'decide_as', 'not_modelled' or 'stand_in'");
  EXPECT_EQ(
      parse_error(with_allgather("      - {stand_in: brick}\n"))
          .find("bad.yaml:7:9: stand_in 'brick' is neither a schedule of the model's own nor a allgather algorithm: "),
      0u);
  EXPECT_EQ(parse_error(with_allgather("      - {costed_as: allgatherz, stand_in: ring}\n")),
            "bad.yaml:7:21: unknown collective 'allgatherz' for 'costed_as'");
  EXPECT_EQ(parse_error(with_allgather("      - {costed_as: alltoall, not_modelled: \"why\"}\n")),
            "bad.yaml:7:21: 'costed_as', 'whole_buffers' and 'sends_empty_messages' go with 'stand_in'");
  EXPECT_EQ(parse_error(with_allgather("      - {p: 2, p: 3, stand_in: ring}\n")),
            "bad.yaml:7:16: key 'p' given twice in a rule");
  EXPECT_EQ(parse_error(with_allgather(
                "      - {run: a}\n", "    algorithms:\n      a:\n        - {run: b}\n      b:\n        - {run: a}\n")),
            "bad.yaml:9:7: algorithm 'a' runs itself: a -> b -> a");
  EXPECT_EQ(
      parse_error("library: bad\nsource: here\ncollectives:\n  allgather:\n    rules:\n      - {stand_in: ring}\n"),
      "bad.yaml:4:3: collective 'allgather' needs 'source': the library's file and function it follows");
  EXPECT_EQ(parse_error("library: bad\nsource: here\ncollectives:\n  allgathr:\n    source: x\n"),
            "bad.yaml:4:3: unknown collective 'allgathr', expected " + collective_names());
  EXPECT_EQ(parse_error("library: bad\ncollectives:\n  allgather:\n    source: x\n    rules: [{stand_in: ring}]\n"),
            "bad.yaml:1:1: missing 'source': repository, tag and files the tables come from");
}

}  // namespace
}  // namespace collshim::model
