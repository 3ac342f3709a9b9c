// Every Gatherv and Scatterv schedule (linear, binomial, Träff's trees with both cost rules) for
// every p from 1 to 130, many roots and irregular block sizes with zeros: the schedule checker
// proves that every block reaches the root (gather) or its rank (scatter) exactly once, that nothing
// is sent before it is held and nothing written into a send buffer. Träff's trees are further
// checked for what makes them Träff's: every message is a run of consecutive ranks' blocks, and in
// the paper's cost model (alpha = 0) they never cost more than the bound of Lemma 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "algorithms/engine/algorithm_spec.hpp"
#include "algorithms/rooted/rooted_algorithms.hpp"
#include "algorithms/engine/schedule_check.hpp"
#include "process_counts.hpp"

namespace collshim {
namespace {

using test::max_procs;

struct Sizes {
  std::string name;
  std::vector<long long> bytes;  // per rank
};

// The paper's shapes plus zeros: random with zeros, spikes, increasing, two blocks, all zero.
std::vector<Sizes> size_sets(int p) {
  std::mt19937 random(static_cast<unsigned>(p) * 7919u);
  std::vector<Sizes> sets(5);
  sets[0].name = "random_with_zeros";
  sets[1].name = "spikes";
  sets[2].name = "increasing";
  sets[3].name = "two_blocks";
  sets[4].name = "all_zero";
  for (int r = 0; r < p; ++r) {
    sets[0].bytes.push_back(random() % 3 == 0 ? 0 : 1 + random() % 100);
    sets[1].bytes.push_back(random() % 5 == 0 ? 500 : 1);
    sets[2].bytes.push_back(4LL * r);
    sets[3].bytes.push_back(r == 0 || r == p - 1 ? 64 : 0);
    sets[4].bytes.push_back(0);
  }
  return sets;
}

// Every root for p <= 24, otherwise 0, 1, the middle, p-2, p-1 and every 7th rank (the trees differ
// by the root's position in its subcubes, which these cover at every level).
std::vector<int> roots_of(int p) {
  std::vector<int> roots;
  for (int r = 0; r < p; ++r)
    if (p <= 24 || r <= 1 || r == p / 2 || r >= p - 2 || r % 7 == 0) roots.push_back(r);
  return roots;
}

// Rank `rank`'s schedule of one algorithm for a call, as the algorithm's state makes it.
Schedule schedule_of(const std::string& algorithm, BlockNaming naming, int p, int rank, int root,
                     const std::vector<TreeNode>& traff_nodes) {
  const bool gather = naming == BlockNaming::gather;
  if (algorithm == "linear")
    return gather ? linear_gatherv_schedule(p, rank, root) : linear_scatterv_schedule(p, rank, root);
  const TreeNode node = algorithm == "binomial" ? binomial_tree_node(p, rank, root) : traff_nodes[rank];
  return gather ? gather_tree_schedule(node, p, rank, root) : scatter_tree_schedule(node, p, rank, root);
}

TEST(RootedSchedules, EveryBlockReachesItsPlaceOnceForAllProcessCountsAndRoots) {
  const std::vector<std::string> algorithms = {"linear", "binomial", "traff_free", "traff_charged"};
  long long checked = 0;
  for (int p = 1; p <= max_procs; ++p) {
    for (const Sizes& sizes : size_sets(p)) {
      for (const int root : roots_of(p)) {
        for (const std::string& algorithm : algorithms) {
          std::vector<TreeNode> traff_nodes;
          if (algorithm.starts_with("traff")) {
            traff_nodes = traff_tree(p, root, sizes.bytes,
                                     algorithm == "traff_free" ? OwnBlockCost::free : OwnBlockCost::charged);
            ASSERT_EQ(static_cast<int>(traff_nodes.size()), p) << "construction lost an outcome, p=" << p;
          }
          for (const BlockNaming naming : {BlockNaming::gather, BlockNaming::scatter}) {
            CheckSetup setup{naming, p, [&](std::int64_t datum) { return sizes.bytes[datum]; }};
            setup.root = root;
            const CheckResult result = check_schedules(
                setup, [&](int rank) { return schedule_of(algorithm, naming, p, rank, root, traff_nodes); });
            ASSERT_TRUE(result.ok()) << algorithm << (naming == BlockNaming::gather ? " gather" : " scatter")
                                     << " p=" << p << " root=" << root << " " << sizes.name << ": "
                                     << result.errors.front();
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 10000);
}

// The time at which each rank has gathered its subtree, in the paper's model with alpha = 0 and
// beta = 1: a rank receives its children in level order, each as soon as the child is done.
long long gather_time(const std::vector<TreeNode>& nodes, int rank, const std::vector<long long>& bytes) {
  long long now = 0;
  for (const TreeEdge& child : nodes[rank].children) {
    long long sent = 0;
    for (const std::int64_t block : child.blocks) sent += bytes[block];
    now = std::max(now, gather_time(nodes, child.peer, bytes)) + sent;
  }
  return now;
}

TEST(TraffTree, MessagesAreRunsOfConsecutiveRanksAndTheTreeSpansAllRanks) {
  for (int p = 1; p <= max_procs; ++p) {
    for (const Sizes& sizes : size_sets(p)) {
      for (const int root : roots_of(p)) {
        const std::vector<TreeNode> nodes = traff_tree(p, root, sizes.bytes, OwnBlockCost::free);
        ASSERT_EQ(static_cast<int>(nodes.size()), p);
        int without_parent = 0;
        for (int r = 0; r < p; ++r) {
          if (!nodes[r].parent) {
            ++without_parent;
            EXPECT_EQ(r, root) << "p=" << p;
          }
          for (const TreeEdge& child : nodes[r].children) {
            for (std::size_t i = 1; i < child.blocks.size(); ++i)
              ASSERT_EQ(child.blocks[i], child.blocks[i - 1] + 1) << "p=" << p << " root=" << root;
          }
        }
        EXPECT_EQ(without_parent, 1);
      }
    }
  }
}

// Lemma 2: with the root fixed, the gather completes in beta * (sum of the others' blocks) plus a
// penalty strictly below that sum (alpha = 0): under twice the linear algorithm's volume at the root.
TEST(TraffTree, GatherTimeStaysWithinLemmaTwoBound) {
  for (int p = 2; p <= max_procs; ++p) {
    for (const Sizes& sizes : size_sets(p)) {
      for (const int root : roots_of(p)) {
        const long long others = std::accumulate(sizes.bytes.begin(), sizes.bytes.end(), 0LL) - sizes.bytes[root];
        const std::vector<TreeNode> nodes = traff_tree(p, root, sizes.bytes, OwnBlockCost::free);
        const long long time = gather_time(nodes, root, sizes.bytes);
        EXPECT_GE(time, others);
        if (others > 0) EXPECT_LT(time, 2 * others) << "p=" << p << " root=" << root << " " << sizes.name;
      }
    }
  }
}

// The binomial tree's worst case (Träff's motivation): one large block at the rank farthest from
// the root is forwarded ceil(log2 p) times by the binomial tree, and sent once by Träff's tree.
TEST(TraffTree, OneFarBlockTravelsOnceWhereTheBinomialTreeForwardsItLog2PTimes) {
  const int p = 16, root = 0;
  std::vector<long long> bytes(p, 0);
  bytes[p - 1] = 1000;
  const std::vector<TreeNode> traff = traff_tree(p, root, bytes, OwnBlockCost::free);
  std::vector<TreeNode> binomial;
  for (int r = 0; r < p; ++r) binomial.push_back(binomial_tree_node(p, r, root));
  EXPECT_EQ(gather_time(traff, root, bytes), 1000);
  EXPECT_EQ(gather_time(binomial, root, bytes), 4000);
}

TEST(RootedSchedules, CheckerRejectsBlocksGatheredTwiceNeverUnpackedOrWrittenWhereNoBufferIs) {
  const int p = 4, root = 0;
  const auto twice = [&](int rank) {
    Schedule schedule = linear_gatherv_schedule(p, rank, root);
    if (rank == 3) schedule.steps[0].sends.push_back({root, {Buffer::send, {3}}});
    if (rank == root) schedule.steps[0].recvs.push_back({3, {Buffer::recv, {3}}});
    return schedule;
  };
  CheckSetup setup{BlockNaming::gather, p, {}};
  const CheckResult doubled = check_schedules(setup, twice);
  ASSERT_FALSE(doubled.ok());
  EXPECT_NE(doubled.errors.front().find("a second time"), std::string::npos) << doubled.errors.front();
  const auto never_unpacked = [&](int rank) {
    Schedule schedule = gather_tree_schedule(binomial_tree_node(p, rank, root), p, rank, root);
    if (rank == root) schedule.steps.back().copies.clear();
    return schedule;
  };
  const CheckResult missing = check_schedules(setup, never_unpacked);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.errors.front().find("never holds block"), std::string::npos) << missing.errors.front();
  // A non-root rank of a Gatherv has no receive buffer; a Scatterv's rank only its own block.
  const auto unpacked_at_leaf = [&](int rank) {
    Schedule schedule = gather_tree_schedule(binomial_tree_node(p, rank, root), p, rank, root);
    if (rank == 1) schedule.steps.back().copies.push_back({{Buffer::scratch, {1}}, {Buffer::recv, {1}}});
    return schedule;
  };
  const CheckResult stray = check_schedules(setup, unpacked_at_leaf);
  ASSERT_FALSE(stray.ok());
  EXPECT_NE(stray.errors.front().find("has no receive buffer for"), std::string::npos) << stray.errors.front();
  CheckSetup scatter{BlockNaming::scatter, p, {}};
  const auto foreign_block = [&](int rank) {
    Schedule schedule = linear_scatterv_schedule(p, rank, root);
    if (rank == root) schedule.steps[0].sends.push_back({2, {Buffer::send, {3}}});
    if (rank == 2) schedule.steps[0].recvs.push_back({root, {Buffer::recv, {3}}});
    return schedule;
  };
  const CheckResult foreign = check_schedules(scatter, foreign_block);
  ASSERT_FALSE(foreign.ok());
  EXPECT_NE(foreign.errors.front().find("has no receive buffer for"), std::string::npos) << foreign.errors.front();
}

}  // namespace
}  // namespace collshim

namespace collshim {
namespace {

// Träff's parameters as users write them (COLLSHIM_GATHERV=traff:..., rule tables): good values are
// accepted and canonical, bad ones named with what was expected.
TEST(TraffParameters, AcceptByteCountsOrNeverAndNameWhatWasExpected) {
  const SpecParseResult good = parse_algorithm_spec("traff:own_block=charged,linear_above=4000", Collective::scatterv);
  ASSERT_TRUE(good.choice) << good.error;
  EXPECT_EQ(good.choice->text(), "traff:own_block=charged,linear_above=4000");
  const SpecParseResult plain = parse_algorithm_spec("traff", Collective::gatherv);
  ASSERT_TRUE(plain.choice) << plain.error;
  EXPECT_EQ(plain.choice->params.at("linear_above"), "never");
  for (const char* bad : {"traff:linear_above=-1", "traff:linear_above=1k", "traff:own_block=maybe"}) {
    const SpecParseResult parsed = parse_algorithm_spec(bad, Collective::gatherv);
    ASSERT_FALSE(parsed.choice) << bad;
    EXPECT_NE(parsed.error.find("expected"), std::string::npos) << parsed.error;
  }
  EXPECT_FALSE(parse_algorithm_spec("traff", Collective::allgather).choice);  // rooted collectives only
}

}  // namespace
}  // namespace collshim
