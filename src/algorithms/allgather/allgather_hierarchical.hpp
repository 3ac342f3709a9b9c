#pragma once
// Node-aware Allgather(v). The ranks of each node hand their blocks to the node's leader (its lowest
// rank), the leaders run a flat algorithm among themselves with each node's blocks travelling as one
// block, and every leader passes the whole result down its node along a binomial tree. A flat
// algorithm pays every inter-node start-up once per rank; this one pays it once per node.
//
// Every variant is one schedule on the shadow communicator (node members are addressed by their
// rank, so the intra phases need no communicator of their own), checked without MPI like every
// other schedule. `inter=native` hands the leaders' phase to the MPI library on a leaders'
// communicator; `intra=shm` replaces the gather and broadcast steps by a shared-memory window on a
// node communicator: opaque phases, whose steps model their effect for the checker. Both
// communicators are made with the choice's state, on its first call, and kept with the shadow.
#include <mpi.h>

#include <functional>
#include <memory>
#include <vector>

#include "algorithms/engine/algorithm_spec.hpp"
#include "algorithms/engine/schedule_engine.hpp"

namespace collshim {

class CommContext;

// Which ranks share a node. Nodes are numbered by first appearance; members ascend, so members[n][0]
// (the lowest rank) leads node n.
struct NodeLayout {
  std::vector<std::vector<int>> members;
  std::vector<int> node_of_rank;  // renumbered 0..nodes-1
  std::vector<int> local_index;   // position of each rank in its node's members
  std::vector<int> ranks_in_node_order;  // members of node 0, then of node 1, ...
};
NodeLayout make_node_layout(const std::vector<int>& node_of_rank);
// The same, kept for the last node map seen on this thread: schedule generators run once per rank
// over one map (p times in a row in the cost model and the checker), and building the layout each
// time made them O(p²).
std::shared_ptr<const NodeLayout> shared_node_layout(const std::vector<int>& node_of_rank);

// `algorithms` is the registry built so far: the flat allgather-family algorithms `inter` may name.
ParamSpec hierarchical_inter_param(const std::vector<Algorithm>& algorithms);
ParamSpec hierarchical_intra_param();
// `params` with `intra` set: an intra=shm state keeps the p2p schedule for calls the window cannot serve.
Params with_intra(Params params, std::string_view intra);

// The inter-node algorithm for `nodes` leaders: `inter` with its default parameters, or its fallback
// where it is not eligible at that count (recursive_doubling at 3 nodes runs bruck).
AlgorithmChoice hierarchical_inter_choice(const Params& params, int nodes);
// The rank symmetry (registry.hpp) of a node-aware algorithm on a node map: the ranks of each node
// go to its lowest one, which runs an algorithm of symmetry `among_leaders` with the other nodes'
// lowest ranks by node index, and back by local index. Where every node holds the same number of
// ranks, as one run of consecutive ranks (sequential) or every n-th rank (round-robin over n nodes),
// relabeling node indices as `among_leaders` allows, local indices fixed, repeats the schedules:
// digits of the rank's local index and node index. None elsewhere.
RankSymmetry node_aware_symmetry(const std::vector<int>& node_of_rank, const RankSymmetry& among_leaders);
// The Allgather hierarchical's: node_aware_symmetry with `inter`'s among the leaders (none for native).
RankSymmetry hierarchical_symmetry(const std::vector<int>& node_of_rank, const Params& params);

// The block form for an inter algorithm with a schedule and intra=p2p: 1 gather step, the inter
// algorithm's steps among leaders (none for native), ceil(log2 max ppn) broadcast steps.
inline constexpr int hierarchical_gather_steps = 1;
int hierarchical_broadcast_steps(const NodeLayout& layout);
BlockSchedule hierarchical_block_schedule(const std::vector<int>& node_of_rank, int rank, const Params& params);

// The common form of every variant: the block form lowered; with inter=native an opaque step (the
// leaders' MPI_Allgatherv) after the gather; with intra=shm the shared-memory window's form.
Schedule hierarchical_schedule(const std::vector<int>& node_of_rank, int rank, const Params& params);

// The state of a hierarchical choice: its schedules and, for inter=native or intra=shm, its node and
// leaders' communicators (collective over the shadow).
int make_hierarchical_state(const AlgorithmChoice& choice, CommContext& context, std::unique_ptr<AlgorithmState>& state);

// The communicators of a hierarchical call beyond the shadow, made on the first call that needs
// them (inter=native or intra=shm) and kept in CommContext: the leaders' communicator (rank = node
// index) and the node's communicator (rank = index in the node) with, for intra=shm, a shared-memory
// window on it. `shareable` says whether every node's ranks can share memory (they need not, when
// COLLSHIM_TOPOLOGY describes nodes across real ones); if not, intra=shm runs as p2p.
class NodeComms {
 public:
  // Collective over `shadow`.
  static int create(MPI_Comm shadow, const std::vector<int>& node_of_rank, std::unique_ptr<NodeComms>& created);
  NodeComms() = default;
  ~NodeComms();
  NodeComms(const NodeComms&) = delete;
  NodeComms& operator=(const NodeComms&) = delete;

  // Collective over `node`: a window whose segment on the node's leader holds at least `bytes`; every
  // member gets the segment's address. Grows (never shrinks) by freeing and allocating again.
  int reserve_window(MPI_Aint bytes);
  // Makes stores to the window by any node member visible to all members (with a node barrier).
  int synchronize_window() const;
  // Collective over `node`: `store` writes this member's part into a window of at least `needed`
  // bytes, then the members synchronize, so that every member's stores are visible to all. The
  // members agree on the size in the allreduce that is also the barrier after storing: a window too
  // small for some member grows (collectively, to the largest size asked for) and every member
  // stores again; members that asked for different sizes (an erroneous program) all get
  // MPI_ERR_TRUNCATE instead of windows of different sizes. The allreduce runs whatever `store`
  // returned: the other members wait there. Returns the first error.
  int fill_window(MPI_Aint needed, const std::function<int()>& store);
  MPI_Win window() const { return window_; }

  NodeLayout layout;
  MPI_Comm leaders = MPI_COMM_NULL;  // MPI_COMM_NULL on ranks that do not lead
  MPI_Comm node = MPI_COMM_NULL;
  bool shareable = false;
  std::byte* window_base = nullptr;
  MPI_Aint window_bytes = 0;
  int window_half = 0;                                // intra=shm alternates halves from call to call
  std::vector<int> counts, displs;                    // per node: scratch of the leaders' Allgatherv
  std::vector<int> packed_bytes, packed_offsets;      // per rank: the packed layout in the window

 private:
  void free_window();
  MPI_Win window_ = MPI_WIN_NULL;
};

}  // namespace collshim
