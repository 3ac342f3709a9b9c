#pragma once
// Node-aware Allgather(v). The ranks of each node hand their blocks to the node's leader (its lowest
// rank), the leaders run a flat algorithm among themselves with each node's blocks travelling as one
// block, and every leader passes the whole result down its node along a binomial tree. A flat
// algorithm pays every inter-node start-up once per rank; this one pays it once per node.
//
// Everything except a native inter phase is one schedule on the shadow communicator (node members
// are addressed by their rank, so the intra phases need no communicator of their own), checked
// without MPI like every other schedule. `inter=native` hands the leaders' phase to the MPI library
// on a leaders' communicator, created on the first such call and kept with the shadow.
#include <mpi.h>

#include <memory>
#include <vector>

#include "algorithms/collective_call.hpp"
#include "algorithms/algorithm_spec.hpp"

namespace collshim {

class CommContext;

// Which ranks share a node. Nodes are numbered by first appearance; members ascend, so members[n][0]
// (the lowest rank) leads node n.
struct NodeLayout {
  std::vector<std::vector<int>> members;
  std::vector<int> node_of_rank;  // renumbered 0..nodes-1
  std::vector<int> local_index;   // position of each rank in its node's members
};
NodeLayout make_node_layout(const std::vector<int>& node_of_rank);

// `algorithms` is the registry built so far: the flat allgather-family algorithms `inter` may name.
ParamSpec hierarchical_inter_param(const std::vector<Algorithm>& algorithms);
ParamSpec hierarchical_intra_param();

// The inter-node algorithm for `nodes` leaders: `inter` with its default parameters, or its fallback
// where it is not eligible at that count (recursive_doubling at 3 nodes runs bruck).
AlgorithmChoice hierarchical_inter_choice(const Params& params, int nodes);

// Steps: 1 gather step, the inter algorithm's steps (none for native), ceil(log2 max ppn) broadcast steps.
inline constexpr int hierarchical_gather_steps = 1;
Schedule hierarchical_schedule(const std::vector<int>& node_of_rank, int rank, const Params& params);

int run_hierarchical_allgatherv(const AllgathervCall& call, const AlgorithmChoice& choice, CommContext& context);

// Per-communicator state of a native inter phase (in CommContext): the layout and the leaders'
// communicator, split from the shadow on the first call.
class NodeLeaders {
 public:
  // Collective over `shadow`.
  static int create(MPI_Comm shadow, const std::vector<int>& node_of_rank, std::unique_ptr<NodeLeaders>& created);
  NodeLeaders() = default;
  ~NodeLeaders();
  NodeLeaders(const NodeLeaders&) = delete;
  NodeLeaders& operator=(const NodeLeaders&) = delete;

  NodeLayout layout;
  MPI_Comm comm = MPI_COMM_NULL;  // rank = node index; MPI_COMM_NULL on ranks that do not lead
  std::vector<int> counts, displs;  // scratch of the leaders' Allgatherv
};

}  // namespace collshim
