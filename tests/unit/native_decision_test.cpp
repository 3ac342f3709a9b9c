// The libraries' own Allgather decisions (SMPI 3.32's ompi, mpich, mvapich2 and impi selectors), as the cost model
// costs them: the thresholds, the stand-in schedules (MPICH's recursive doubling checked at every p),
// and that every decision has a stand-in that exists and is eligible at that p.
#include <gtest/gtest.h>

#include "algorithms/algorithm_spec.hpp"
#include "algorithms/registry.hpp"
#include "algorithms/schedule_check.hpp"
#include "model/mpich_recursive_doubling.hpp"
#include "model/native_decision.hpp"

namespace collshim::model {
namespace {

std::string runs(NativeLibrary library, int p, long long bytes, const LibraryPlacement& placement = {}) {
  const NativeDecision decision = native_decision(library, Collective::allgather, p, bytes, placement);
  if (decision.stand_in.empty()) return "not modelled: " + decision.library_algorithm;
  return std::string(collective_info(decision.costed_as).name) + " " + decision.stand_in;
}

TEST(NativeDecision, OpenMpiThresholds) {
  using enum NativeLibrary;
  EXPECT_EQ(runs(ompi, 2, 1 << 20), "allgather ring");  // two_proc: one exchange
  EXPECT_EQ(runs(ompi, 16, 1 << 20), "allgather recursive_doubling");
  EXPECT_EQ(runs(ompi, 32, 1023), "allgather recursive_doubling");
  EXPECT_EQ(runs(ompi, 32, 1024), "allgather neighbor_exchange");
  EXPECT_EQ(runs(ompi, 32, 65535), "allgather neighbor_exchange");
  EXPECT_EQ(runs(ompi, 32, 65536), "alltoall pairwise");  // SMPI's "ring" is a shift exchange
  EXPECT_EQ(runs(ompi, 64, 511), "allgather recursive_doubling");
  EXPECT_EQ(runs(ompi, 64, 512), "allgather neighbor_exchange");
  EXPECT_EQ(runs(ompi, 256, 31), "allgather recursive_doubling");
  EXPECT_EQ(runs(ompi, 256, 32), "allgather bruck");
  EXPECT_EQ(runs(ompi, 256, 128), "allgather recursive_doubling");
  EXPECT_EQ(runs(ompi, 256, 131072), "alltoall pairwise");
  EXPECT_EQ(runs(ompi, 256, 524288), "allgather neighbor_exchange");
  EXPECT_EQ(runs(ompi, 1024, 4), "allgather bruck");
  EXPECT_EQ(runs(ompi, 1024, 8), "allgather recursive_doubling");
  EXPECT_EQ(runs(ompi, 4096, 2), "allgather bruck");
  EXPECT_EQ(runs(ompi, 8192, 1), "allgather recursive_doubling");
  EXPECT_EQ(runs(ompi, 8192, 4096), "allgather neighbor_exchange");
  EXPECT_EQ(runs(ompi, 33, 4096), "alltoall pairwise");  // neighbour exchange at odd p: the "ring"
}

TEST(NativeDecision, MpichThresholds) {
  using enum NativeLibrary;
  EXPECT_EQ(runs(mpich, 64, 8191), "allgather recursive_doubling");  // 512 KiB in all, less one block
  EXPECT_EQ(runs(mpich, 64, 8192), "alltoall pairwise");
  EXPECT_EQ(runs(mpich, 96, 853), "allgather bruck");  // 81888 B in all
  EXPECT_EQ(runs(mpich, 80, 1024), "allgather bruck");  // exactly 80 KiB
  EXPECT_EQ(runs(mpich, 80, 1025), "alltoall pairwise");
}

// MVAPICH2's tables: sizes up to a threshold inclusive, the table of the ranks per node (1 where
// none is configured), two-level cells not modelled where nodes are blocked and MPICH's decision
// where they are not.
TEST(NativeDecision, Mvapich2Thresholds) {
  using enum NativeLibrary;
  const LibraryPlacement one{1, true}, two{2, true}, two_cyclic{2, false}, sixteen{16, true}, three{3, true};
  EXPECT_EQ(runs(mvapich2, 2, 8, one), "alltoall pairwise");  // SMPI's "ring": at p = 2 one exchange
  EXPECT_EQ(runs(mvapich2, 4, 262144, one), "allgather recursive_doubling");
  EXPECT_EQ(runs(mvapich2, 4, 262145, one), "alltoall pairwise");
  EXPECT_EQ(runs(mvapich2, 32, 65536, one), "allgather recursive_doubling");
  EXPECT_EQ(runs(mvapich2, 32, 65537, one), "alltoall pairwise");
  EXPECT_EQ(runs(mvapich2, 24, 8, one), "allgather mpich_recursive_doubling");
  // Beyond the last band (64 ranks) that band's sizes.
  EXPECT_EQ(runs(mvapich2, 4000, 32768, one), "allgather mpich_recursive_doubling");
  EXPECT_EQ(runs(mvapich2, 4000, 32769, one), "alltoall pairwise");
  EXPECT_EQ(runs(mvapich2, 4000, 32768, three), runs(mvapich2, 4000, 32768, one));  // no table for 3
  EXPECT_EQ(runs(mvapich2, 8, 32768, two), "allgather recursive_doubling");
  EXPECT_EQ(runs(mvapich2, 8, 32769, two), "not modelled: two_level (allgather__mvapich2_smp)");
  EXPECT_EQ(runs(mvapich2, 8, 32769, two_cyclic), runs(mpich, 8, 32769));
  EXPECT_EQ(runs(mvapich2, 64, 8, two_cyclic), runs(mpich, 64, 8));
  EXPECT_EQ(runs(mvapich2, 16, 1024, sixteen), "allgather recursive_doubling");
  EXPECT_EQ(runs(mvapich2, 16, 1025, sixteen), "alltoall pairwise");
  EXPECT_EQ(runs(mvapich2, 64, 1024, sixteen), "not modelled: MPIR_Allgather_RD_Allgather_Comm_MV2");
  EXPECT_EQ(runs(mvapich2, 64, 1025, sixteen), "alltoall pairwise");
}

// Intel MPI's table: sizes below a threshold, per ranks per node; algorithm 4 (gather and
// broadcast) not modelled.
TEST(NativeDecision, IntelMpiThresholds) {
  using enum NativeLibrary;
  const LibraryPlacement one{1, true}, four{4, true}, eight{8, true}, five{5, true};
  EXPECT_EQ(runs(impi, 4, 0, one), "not modelled: gather_bcast (allgather__GB)");
  EXPECT_EQ(runs(impi, 4, 1, one), "allgather recursive_doubling");
  EXPECT_EQ(runs(impi, 4, 383, one), "allgather recursive_doubling");
  EXPECT_EQ(runs(impi, 4, 384, one), "not modelled: gather_bcast (allgather__GB)");
  EXPECT_EQ(runs(impi, 8, 3421, one), "allgather bruck");
  EXPECT_EQ(runs(impi, 16, 200000, one), "alltoall pairwise");  // 3: SMPI's "ring"
  EXPECT_EQ(runs(impi, 256, 183, one), "allgather recursive_doubling");
  EXPECT_EQ(runs(impi, 256, 184, one), "not modelled: gather_bcast (allgather__GB)");
  EXPECT_EQ(runs(impi, 100, 183, one), "allgather mpich_recursive_doubling");
  EXPECT_EQ(runs(impi, 64, 604, four), "allgather recursive_doubling");
  EXPECT_EQ(runs(impi, 64, 605, four), "alltoall pairwise");
  EXPECT_EQ(runs(impi, 64, 604, five), runs(impi, 64, 604, one));  // no table for 5
  EXPECT_EQ(runs(impi, 64, 70, eight), "allgather recursive_doubling");
  EXPECT_EQ(runs(impi, 64, 71, eight), "not modelled: gather_bcast (allgather__GB)");
  EXPECT_EQ(runs(impi, 64, 300, eight), "allgather recursive_doubling");
  EXPECT_EQ(runs(impi, 512, 300, eight), "alltoall pairwise");
}

TEST(NativeDecision, LibraryPlacementIsRanksPerNodeWhereEveryNodeHoldsAsMany) {
  const LibraryPlacement sequential = library_placement({0, 0, 0, 1, 1, 1});
  EXPECT_EQ(sequential.ranks_per_node, 3);
  EXPECT_TRUE(sequential.blocked);
  const LibraryPlacement round_robin = library_placement({0, 1, 0, 1});
  EXPECT_EQ(round_robin.ranks_per_node, 2);
  EXPECT_FALSE(round_robin.blocked);
  EXPECT_EQ(library_placement({0, 0, 0, 1}).ranks_per_node, 1);  // uneven: MPI's is_uniform fails
  EXPECT_EQ(library_placement({5, 5, 2, 2}).ranks_per_node, 2);
}

TEST(NativeDecision, RecursiveDoublingAtOtherProcessCountsIsMpichs) {
  EXPECT_EQ(runs(NativeLibrary::ompi, 24, 8), "allgather mpich_recursive_doubling");
  EXPECT_EQ(runs(NativeLibrary::ompi, 1000, 32), "allgather mpich_recursive_doubling");
  const NativeDecision other = native_decision(NativeLibrary::mpich, Collective::alltoall, 64, 8);
  EXPECT_TRUE(other.stand_in.empty());
  EXPECT_NE(other.why_not.find("alltoall"), std::string::npos) << other.why_not;
}

// The checker's invariants for MPICH's schedule at every p: every rank ends with every block once,
// and nothing is sent before it is held.
TEST(NativeDecision, MpichRecursiveDoublingIsACorrectAllgatherAtEveryP) {
  for (int p = 1; p <= 130; ++p) {
    const CheckResult result =
        check_block_schedules(p, [p](int rank) { return mpich_recursive_doubling_schedule(p, rank); });
    ASSERT_TRUE(result.ok()) << "p = " << p << ": " << result.errors[0];
  }
}

// Its messages are MPICH's: at p = 6, stage 4 pairs 0-4 and 1-5 exchange (ranks 2 and 3 have no
// partner), then 0 passes blocks 4 and 5 down the tree to 2 and 1 to 3.
TEST(NativeDecision, MpichRecursiveDoublingSendsTheTreeMessagesOfACutGroup) {
  auto sends = [](int rank) {
    std::vector<std::string> out;
    const BlockSchedule schedule = mpich_recursive_doubling_schedule(6, rank);
    for (std::size_t s = 0; s < schedule.steps.size(); ++s) {
      for (const BlockTransfer& send : schedule.steps[s].sends) {
        std::string text = std::to_string(s) + ":" + std::to_string(send.peer) + "[";
        for (const int block : send.blocks) text += std::to_string(block);
        out.push_back(text + "]");
      }
    }
    return out;
  };
  // Steps: stage 1 (1 step), stage 2 (exchange + 1 tree step), stage 4 (exchange + 2 tree steps).
  EXPECT_EQ(sends(0), (std::vector<std::string>{"0:1[0]", "1:2[01]", "3:4[0123]", "4:2[45]"}));
  EXPECT_EQ(sends(1), (std::vector<std::string>{"0:0[1]", "1:3[01]", "3:5[0123]", "4:3[45]"}));
  EXPECT_EQ(sends(2), (std::vector<std::string>{"0:3[2]", "1:0[23]"}));
  EXPECT_EQ(sends(4), (std::vector<std::string>{"0:5[4]", "3:0[45]"}));
  for (int rank = 0; rank < 6; ++rank) EXPECT_EQ(mpich_recursive_doubling_schedule(6, rank).steps.size(), 6u);
}

TEST(NativeDecision, EveryDecisionHasAnEligibleStandIn) {
  for (const std::string_view name : native_library_names()) {
    const NativeLibrary library = *parse_native_library(name);
    EXPECT_EQ(native_label(library), "native:" + std::string(name));
    // MVAPICH2's and Intel MPI's node-aware algorithms have no stand-in yet; every other decision has.
    const bool all_modelled = library == NativeLibrary::ompi || library == NativeLibrary::mpich;
    for (int p = 2; p <= 4200; p += p < 140 ? 1 : 37) {
      for (long long bytes = 1; bytes <= (4 << 20); bytes *= 2) {
        for (const long long size : {bytes - 1, bytes}) {
          const int ranks_per_node = 1 << (p % 5);  // 1, 2, 4, 8, 16
          const NativeDecision decision =
              native_decision(library, Collective::allgather, p, size, {ranks_per_node, p % 2 == 0});
          EXPECT_FALSE(decision.library_algorithm.empty());
          if (!all_modelled && decision.stand_in.empty()) {
            EXPECT_FALSE(decision.why_not.empty());
            continue;
          }
          ASSERT_FALSE(decision.stand_in.empty()) << decision.why_not;
          if (decision.stand_in == mpich_recursive_doubling_stand_in) continue;
          const SpecParseResult parsed = parse_algorithm_spec(decision.stand_in, decision.costed_as);
          ASSERT_TRUE(parsed.choice) << decision.stand_in << ": " << parsed.error;
          const auto& eligible = parsed.choice->algorithm->eligible;
          EXPECT_TRUE(!eligible || eligible(p, parsed.choice->params))
              << name << " p = " << p << ", " << size << " B: " << decision.stand_in << " is not eligible";
        }
      }
    }
  }
  EXPECT_FALSE(parse_native_library("mvapich"));
}

// The stand-in for SMPI's Allgather "ring" sends what that code sends: in step k the own block
// (one block of the call's size) to rank + k, and takes one from rank − k.
TEST(NativeDecision, TheShiftExchangeStandInSendsTheOwnBlockToRankPlusK) {
  const NativeDecision decision = native_decision(NativeLibrary::mpich, Collective::allgather, 7, 1 << 20);
  const NativeStandIn stand_in = native_stand_in(decision, std::vector<int>(7, 0));
  for (int rank = 0; rank < 7; ++rank) {
    const Schedule schedule = stand_in.schedule_of(rank);
    ASSERT_EQ(schedule.steps.size(), 6u);
    for (int k = 1; k < 7; ++k) {
      const Step& step = schedule.steps[static_cast<std::size_t>(k - 1)];
      ASSERT_EQ(step.sends.size(), 1u);
      ASSERT_EQ(step.recvs.size(), 1u);
      EXPECT_EQ(step.sends[0].peer, (rank + k) % 7);
      EXPECT_EQ(step.recvs[0].peer, (rank - k + 7) % 7);
      EXPECT_EQ(step.sends[0].region.blocks.size(), 1u);
    }
  }
}

}  // namespace
}  // namespace collshim::model
