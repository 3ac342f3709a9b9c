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
#include <memory>
#include <vector>

#include "algorithms/engine/algorithm_spec.hpp"
#include "algorithms/engine/schedule_engine.hpp"
#include "algorithms/node/node_layout.hpp"

namespace collshim {

class CommContext;

// `inter=ALG`: the algorithms of the whole registry `algorithms` that run among the leaders: the flat
// allgather-family ones (a block schedule) and native.
ParamSpec hierarchical_inter_param(const std::vector<Algorithm>& algorithms);

// The inter-node algorithm for `nodes` leaders: `inter` with its default parameters, or its fallback
// where it is not eligible at that count (recursive_doubling at 3 nodes runs bruck).
AlgorithmChoice hierarchical_inter_choice(const Params& params, int nodes);
// The Allgather hierarchical's: node_aware_symmetry (node_layout.hpp) with `inter`'s among the
// leaders (none for native).
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
int make_hierarchical_state(const AlgorithmChoice& choice, CommContext& context,
                            std::unique_ptr<AlgorithmState>& state);

}  // namespace collshim
