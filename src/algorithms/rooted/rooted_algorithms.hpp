#pragma once
// Gatherv and Scatterv schedules. A rooted schedule depends on the call's root, and Träff's trees on
// every rank's block size, so the algorithm's state makes each call's schedule (prepare, then
// schedule_for), not the registry once per communicator. Gather trees are described once (TreeNode)
// and run upwards for Gatherv and backwards for Scatterv.
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "algorithms/engine/registry.hpp"
#include "algorithms/engine/schedule.hpp"

namespace collshim {

// One edge of a gather tree, seen from either end: the peer, the level (the edge's step, counted
// from the leaves) and the blocks of the subtree below the edge, in message order. Both ends list
// the same blocks, so sender and receiver name the same message.
struct TreeEdge {
  int level = 0;
  int peer = 0;
  std::vector<std::int64_t> blocks;
};

// One rank's part of a gather tree: edges to its children, and to its parent (none at the root).
struct TreeNode {
  std::vector<TreeEdge> children;
  std::optional<TreeEdge> parent;
};

// ceil(log2 p): the levels of binomial and Träff trees (0 for p = 1).
int tree_levels(int p);

// A tree's schedules, tree_levels(p) + 1 steps: gather up the levels (level k in step k), scatter
// down them (level k in step levels-1-k). Blocks travel packed in scratch; the root unpacks them in
// the last step (gather) or packs them before the first (scatter), other ranks pack or unpack their
// own block.
Schedule gather_tree_schedule(const TreeNode& node, int p, int rank, int root);
Schedule scatter_tree_schedule(const TreeNode& node, int p, int rank, int root);

// Linear: the root posts every receive (or send) at once, in one step; blocks stay typed.
Schedule linear_gatherv_schedule(int p, int rank, int root);
Schedule linear_scatterv_schedule(int p, int rank, int root);

// The block-size-oblivious binomial tree rooted at `root` (ranks relative to it).
TreeNode binomial_tree_node(int p, int rank, int root);

// Träff's trees (ParCo 2018): how a subcube's gather time is estimated when two merge.
enum class OwnBlockCost {
  free,     // Lemma 1: T = data of the subcube but its gather root's own block
  charged,  // Lemma 4: T = all data of the subcube (copying the own block costs like sending it)
};

// What the fixed roots of two sibling subcubes exchange (Lemma 3), and what a fixed root then
// tells its subcube's gather root.
struct TraffSummary {
  long long others_bytes = 0;  // T: the subcube's bytes but its gather root's block
  long long gather_root_bytes = 0;
  int gather_root = 0;
};
struct TraffOutcome {
  int wins = 0;     // the gather root stays one (receives the sibling's data); otherwise it sends
  int partner = 0;  // the sibling subcube's gather root
};

// One rank's side of Lemma 3's distributed construction, level by level; the MPI driver and the
// all-ranks simulation (traff_tree) run the same steps. At level k:
//  1. a rank with fixed_partner(k) >= 0 exchanges summary() with it, then decide()s and sends the
//     outcome to `inform` (or keeps it, when that is itself);
//  2. a rank with outcome_source(k) >= 0 receives the outcome from it (itself: the kept one) and
//     apply()s it.
class TraffConstruction {
 public:
  TraffConstruction(int p, int rank, int root, long long own_bytes, OwnBlockCost cost);
  int levels() const { return levels_; }
  int fixed_partner(int k) const;
  TraffSummary summary() const { return summary_; }
  TraffOutcome decide(int k, const TraffSummary& theirs, int& inform);
  int outcome_source(int k) const;
  void apply(int k, const TraffOutcome& outcome);
  const TreeNode& node() const { return node_; }

 private:
  bool has_sibling(int k) const;
  bool upper(int k) const { return ((rank_ >> k) & 1) != 0; }
  int fixed_root(int k) const;
  std::vector<std::int64_t> subcube_blocks(int k, bool sibling) const;

  int p_, rank_, root_, levels_;
  OwnBlockCost cost_;
  TraffSummary summary_;  // while this rank is a fixed root
  bool gather_root_ = true;
  TreeNode node_;
};

// Every rank's node of the Träff tree for these block sizes, by running every rank's construction.
std::vector<TreeNode> traff_tree(int p, int root, const std::vector<long long>& block_bytes, OwnBlockCost cost);

class AlgorithmState;
class CommContext;
struct AlgorithmChoice;
int make_linear_rooted_state(const AlgorithmChoice& choice, CommContext& context,
                             std::unique_ptr<AlgorithmState>& state);
int make_binomial_rooted_state(const AlgorithmChoice& choice, CommContext& context,
                               std::unique_ptr<AlgorithmState>& state);
int make_traff_state(const AlgorithmChoice& choice, CommContext& context, std::unique_ptr<AlgorithmState>& state);

// Träff's parameters: own_block (free or charged), linear_above (bytes per block, or never).
ParamSpec traff_own_block_param();
ParamSpec traff_linear_above_param();

}  // namespace collshim
