// Träff's data-aware gather and scatter trees ("Practical, distributed, low overhead algorithms for
// irregular gather and scatter collectives", ParCo 2018). Ordered hypercubes merge level by level;
// of two merging subcubes, the one whose gather root finished earlier (smaller estimated gather
// time T) sends everything to the other's gather root, except that the subcube holding the call's
// root always receives (Lemma 2). Every message is a run of consecutive ranks' blocks, a block is
// forwarded only when that does not delay the receiver, and the tree is built in ceil(log2 p)
// rounds of constant-size messages between the subcubes' fixed roots (Lemma 3) with no rank
// knowing more than its own count.
#include <algorithm>
#include <charconv>
#include <climits>
#include <tuple>

#include "algorithms/engine/algorithm_spec.hpp"
#include "algorithms/engine/call_layout.hpp"
#include "algorithms/engine/comm_context.hpp"
#include "algorithms/rooted/rooted_algorithms.hpp"

namespace collshim {

TraffConstruction::TraffConstruction(int p, int rank, int root, long long own_bytes, OwnBlockCost cost)
    : p_(p), rank_(rank), root_(root), levels_(tree_levels(p)), cost_(cost) {
  summary_ = {0, own_bytes, rank};
}

// The last rank of the level-k subcube holding this rank (fixed roots are computable by anyone).
int TraffConstruction::fixed_root(int k) const {
  const long long last = ((static_cast<long long>(rank_ >> k) + 1) << k) - 1;
  return static_cast<int>(std::min<long long>(last, p_ - 1));
}

bool TraffConstruction::has_sibling(int k) const {
  return upper(k) || ((static_cast<long long>(rank_ >> k) + 1) << k) <= p_ - 1;
}

int TraffConstruction::fixed_partner(int k) const {
  if (fixed_root(k) != rank_ || !has_sibling(k)) return -1;
  const long long base = static_cast<long long>(rank_ >> k);
  if (upper(k)) return static_cast<int>((base << k) - 1);  // the lower sibling is complete
  return static_cast<int>(std::min<long long>(((base + 2) << k) - 1, p_ - 1));
}

int TraffConstruction::outcome_source(int k) const { return gather_root_ && has_sibling(k) ? fixed_root(k) : -1; }

TraffOutcome TraffConstruction::decide(int k, const TraffSummary& theirs, int& inform) {
  const bool mine_holds_root = (root_ >> k) == (rank_ >> k);
  const bool theirs_holds_root = (root_ >> k) == ((rank_ >> k) ^ 1);
  const TraffSummary& mine = summary_;
  bool wins = upper(k);  // the final tie-break: any rule both fixed roots compute alike
  if (mine_holds_root || theirs_holds_root) {
    wins = mine_holds_root;  // Lemma 2: the call's root receives, whatever the estimates
  } else if (cost_ == OwnBlockCost::free) {
    // Lemma 1: the larger gather time T receives; on a tie the side with less data sends.
    const auto key = [](const TraffSummary& s) {
      return std::tuple(s.others_bytes, s.others_bytes + s.gather_root_bytes);
    };
    if (key(mine) != key(theirs)) wins = key(mine) > key(theirs);
  } else {
    // Lemma 4: copying the own block costs like sending it, so T is the subcube's whole data.
    const long long all_mine = mine.others_bytes + mine.gather_root_bytes;
    const long long all_theirs = theirs.others_bytes + theirs.gather_root_bytes;
    if (all_mine != all_theirs) wins = all_mine > all_theirs;
  }
  inform = summary_.gather_root;
  const TraffOutcome outcome{wins ? 1 : 0, theirs.gather_root};
  if (upper(k)) {  // the upper fixed root stays the fixed root of the merged subcube
    if (wins) {
      summary_.others_bytes += theirs.others_bytes + theirs.gather_root_bytes;
    } else {
      summary_ = {theirs.others_bytes + summary_.others_bytes + summary_.gather_root_bytes, theirs.gather_root_bytes,
                  theirs.gather_root};
    }
  }
  return outcome;
}

// The blocks of the level-k subcube holding this rank, or of its sibling, in rank order.
std::vector<std::int64_t> TraffConstruction::subcube_blocks(int k, bool sibling) const {
  const long long index = static_cast<long long>(rank_ >> k) ^ (sibling ? 1 : 0);
  const long long first = index << k, end = std::min<long long>((index + 1) << k, p_);
  std::vector<std::int64_t> blocks;
  for (long long b = first; b < end; ++b) blocks.push_back(b);
  return blocks;
}

void TraffConstruction::apply(int k, const TraffOutcome& outcome) {
  if (outcome.wins) {
    node_.children.push_back({k, outcome.partner, subcube_blocks(k, true)});
  } else {
    node_.parent = TreeEdge{k, outcome.partner, subcube_blocks(k, false)};
    gather_root_ = false;
  }
}

std::vector<TreeNode> traff_tree(int p, int root, const std::vector<long long>& block_bytes, OwnBlockCost cost) {
  std::vector<TraffConstruction> ranks;
  for (int r = 0; r < p; ++r) ranks.emplace_back(p, r, root, block_bytes[r], cost);
  const int levels = tree_levels(p);
  for (int k = 0; k < levels; ++k) {
    std::vector<TraffSummary> summaries;
    for (const TraffConstruction& rank : ranks) summaries.push_back(rank.summary());
    std::vector<std::optional<std::pair<int, TraffOutcome>>> sent(static_cast<std::size_t>(p));  // by fixed root
    for (int r = 0; r < p; ++r) {
      if (const int partner = ranks[r].fixed_partner(k); partner >= 0) {
        int inform = -1;
        const TraffOutcome outcome = ranks[r].decide(k, summaries[partner], inform);
        sent[r] = std::pair{inform, outcome};
      }
    }
    for (int r = 0; r < p; ++r) {
      const int source = ranks[r].outcome_source(k);
      if (source < 0) continue;
      // A missing or misaddressed outcome is a construction bug: fail loudly in the tests.
      if (!sent[source] || sent[source]->first != r) return {};
      ranks[r].apply(k, sent[source]->second);
    }
  }
  std::vector<TreeNode> nodes;
  for (const TraffConstruction& rank : ranks) nodes.push_back(rank.node());
  return nodes;
}

namespace {

constexpr int construction_tag = 32767;  // above any schedule step of these trees (tags are steps)
constexpr std::string_view never = "never";

std::optional<long long> parse_linear_above(std::string_view text) {
  if (text == never) return std::nullopt;
  long long value = -1;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size() || value < 0) return -1;
  return value;
}

// Lemma 3 over MPI: per level, fixed roots swap summaries, then tell their gather roots.
int construct_tree(const CallLayout& call, CommContext& context, OwnBlockCost cost, TreeNode& node) {
  TraffConstruction construction(call.p, call.rank, call.root, own_block_bytes(call), cost);
  const MPI_Comm comm = context.comm();
  for (int k = 0; k < construction.levels(); ++k) {
    TraffOutcome kept{};
    if (const int partner = construction.fixed_partner(k); partner >= 0) {
      const TraffSummary mine = construction.summary();
      // One message of three numbers: T, the gather root's block, the gather root.
      const long long out[3] = {mine.others_bytes, mine.gather_root_bytes, mine.gather_root};
      long long in[3] = {0, 0, 0};
      int rc = PMPI_Sendrecv(out, 3, MPI_LONG_LONG, partner, construction_tag, in, 3, MPI_LONG_LONG, partner,
                             construction_tag, comm, MPI_STATUS_IGNORE);
      if (rc != MPI_SUCCESS) return rc;
      const TraffSummary theirs{in[0], in[1], static_cast<int>(in[2])};
      int inform = -1;
      kept = construction.decide(k, theirs, inform);
      if (inform != call.rank) {
        const int message[2] = {kept.wins, kept.partner};
        if ((rc = PMPI_Send(message, 2, MPI_INT, inform, construction_tag, comm)) != MPI_SUCCESS) return rc;
      }
    }
    if (const int source = construction.outcome_source(k); source >= 0) {
      if (source != call.rank) {
        int message[2] = {0, 0};
        const int rc = PMPI_Recv(message, 2, MPI_INT, source, construction_tag, comm, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) return rc;
        kept = {message[0], message[1]};
      }
      construction.apply(k, kept);
    }
  }
  node = construction.node();
  return MPI_SUCCESS;
}

// Each call builds its tree (the counts change from call to call and no rank knows them all but
// the root); with linear_above, the root first broadcasts whether the call's average block is
// above it, since only the root knows.
class TraffState final : public AlgorithmState {
 public:
  explicit TraffState(const AlgorithmChoice& choice)
      : cost_(choice.params.at("own_block") == "charged" ? OwnBlockCost::charged : OwnBlockCost::free),
        linear_above_(parse_linear_above(choice.params.at("linear_above"))) {}

  int prepare(const CallLayout& call, CommContext& context) override {
    if (linear_above_) {
      int linear = 0;
      if (call.rank == call.root) {
        const TypedBuffer& all = call.naming == BlockNaming::gather ? call.recv : call.send;
        long long total = 0;
        for (int b = 0; b < call.p; ++b) total += all.bytes(b);
        linear = total / call.p > *linear_above_ ? 1 : 0;
      }
      const int rc = PMPI_Bcast(&linear, 1, MPI_INT, call.root, context.comm());
      if (rc != MPI_SUCCESS) return rc;
      if (linear) {
        schedule_ = call.naming == BlockNaming::gather ? linear_gatherv_schedule(call.p, call.rank, call.root)
                                                       : linear_scatterv_schedule(call.p, call.rank, call.root);
        return MPI_SUCCESS;
      }
    }
    TreeNode node;
    const int rc = construct_tree(call, context, cost_, node);
    if (rc != MPI_SUCCESS) return rc;
    schedule_ = call.naming == BlockNaming::gather ? gather_tree_schedule(node, call.p, call.rank, call.root)
                                                   : scatter_tree_schedule(node, call.p, call.rank, call.root);
    return MPI_SUCCESS;
  }
  const Schedule& schedule_for(const CallLayout&) override { return schedule_; }

 private:
  OwnBlockCost cost_;
  std::optional<long long> linear_above_;  // bytes per block on average; none: always the tree
  Schedule schedule_;
};

}  // namespace

int make_traff_state(const AlgorithmChoice& choice, CommContext&, std::unique_ptr<AlgorithmState>& state) {
  state = std::make_unique<TraffState>(choice);
  return MPI_SUCCESS;
}

ParamSpec traff_own_block_param() {
  return ParamSpec{"own_block", "free (Lemma 1: the gather root's own block costs nothing) or charged (Lemma 4)",
                   "free", [](std::string_view value) { return value == "free" || value == "charged"; }};
}

ParamSpec traff_linear_above_param() {
  return ParamSpec{"linear_above", "a number of bytes per block (the call's average) or never", std::string(never),
                   [](std::string_view value) {
                     const auto parsed = parse_linear_above(value);
                     return !parsed || *parsed >= 0;
                   }};
}

}  // namespace collshim
