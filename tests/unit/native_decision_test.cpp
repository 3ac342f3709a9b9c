// The libraries' own Allgather decisions (SMPI 3.32's ompi and mpich selectors), as the cost model
// costs them: the thresholds, the stand-in schedules, and that every decision it costs is a collshim
// spec that exists and is eligible at that p.
#include <gtest/gtest.h>

#include "algorithms/algorithm_spec.hpp"
#include "algorithms/registry.hpp"
#include "model/native_decision.hpp"

namespace collshim::model {
namespace {

std::string runs(NativeLibrary library, int p, long long bytes) {
  const NativeDecision decision = native_decision(library, Collective::allgather, p, bytes);
  return std::string(collective_info(decision.costed_as).name) + " " + decision.spec;
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

TEST(NativeDecision, WhatHasNoScheduleIsNotCosted) {
  const NativeDecision odd = native_decision(NativeLibrary::ompi, Collective::allgather, 24, 8);
  EXPECT_EQ(odd.library_algorithm, "recursive_doubling");
  EXPECT_TRUE(odd.spec.empty());
  EXPECT_NE(odd.why_not.find("p = 24"), std::string::npos) << odd.why_not;
  const NativeDecision other = native_decision(NativeLibrary::mpich, Collective::alltoall, 64, 8);
  EXPECT_TRUE(other.spec.empty());
  EXPECT_NE(other.why_not.find("alltoall"), std::string::npos) << other.why_not;
}

TEST(NativeDecision, EveryCostedDecisionIsAnEligibleSpec) {
  for (const std::string_view name : native_library_names()) {
    const NativeLibrary library = *parse_native_library(name);
    EXPECT_EQ(native_label(library), "native:" + std::string(name));
    for (int p = 2; p <= 4200; p += p < 140 ? 1 : 37) {
      for (long long bytes = 1; bytes <= (4 << 20); bytes *= 2) {
        for (const long long size : {bytes - 1, bytes}) {
          const NativeDecision decision = native_decision(library, Collective::allgather, p, size);
          EXPECT_FALSE(decision.library_algorithm.empty());
          if (decision.spec.empty()) {
            EXPECT_FALSE(decision.why_not.empty());
            continue;
          }
          const SpecParseResult parsed = parse_algorithm_spec(decision.spec, decision.costed_as);
          ASSERT_TRUE(parsed.choice) << decision.spec << ": " << parsed.error;
          const auto& eligible = parsed.choice->algorithm->eligible;
          EXPECT_TRUE(!eligible || eligible(p, parsed.choice->params))
              << name << " p = " << p << ", " << size << " B: " << decision.spec << " is not eligible";
        }
      }
    }
  }
  EXPECT_FALSE(parse_native_library("mvapich2"));
}

// The stand-in for SMPI's Allgather "ring" sends what that code sends: in step k the own block
// (one block of the call's size) to rank + k, and takes one from rank − k.
TEST(NativeDecision, TheShiftExchangeStandInSendsTheOwnBlockToRankPlusK) {
  const NativeDecision decision = native_decision(NativeLibrary::mpich, Collective::allgather, 7, 1 << 20);
  const SpecParseResult parsed = parse_algorithm_spec(decision.spec, decision.costed_as);
  ASSERT_TRUE(parsed.choice);
  const std::vector<int> one_node(7, 0);
  for (int rank = 0; rank < 7; ++rank) {
    const Schedule schedule = generate_schedule(*parsed.choice, one_node, rank);
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
