#pragma once
// The MPI side of a node layout: the node and leaders' communicators of the node-aware algorithms
// (Allgather's and Allreduce's hierarchical) and the node's shared-memory window, with their
// `intra` parameter, which chooses between messages inside a node and that window.
#include <mpi.h>

#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "algorithms/engine/registry.hpp"
#include "algorithms/node/node_layout.hpp"

namespace collshim {

// `intra=p2p|shm`: the node's part of a node-aware algorithm by messages, or through the window.
ParamSpec hierarchical_intra_param();
// `params` with `intra` set: an intra=shm state keeps the p2p schedule for calls the window cannot serve.
Params with_intra(Params params, std::string_view intra);
// Algorithm::blocking_only of the node-aware algorithms: intra=shm synchronizes a node's ranks at
// its window, and inter=native runs the library's blocking collective among the leaders. Their
// nonblocking form is the same exchange by messages: intra=p2p, and native for inter=native (the
// library's own nonblocking collective, as the leaders' part could not run alone).
std::string_view hierarchical_blocking_only(const Params& params);
std::string hierarchical_nonblocking_fallback(const Params& params);

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
  int window_half = 0;                            // intra=shm alternates halves from call to call
  std::vector<int> counts, displs;                // per node: scratch of the leaders' Allgatherv
  std::vector<int> packed_bytes, packed_offsets;  // per rank: the packed layout in the window

 private:
  void free_window();
  MPI_Win window_ = MPI_WIN_NULL;
};

}  // namespace collshim
