#pragma once
// Per-communicator state of the algorithms: the shadow communicator all internal traffic uses, the
// schedules generated for it, and scratch storage reused between calls so that repeated calls do not
// allocate. Owned by the intercept layer's communicator cache.
#include <mpi.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "algorithms/algorithm_spec.hpp"
#include "algorithms/grid_alltoallv.hpp"
#include "algorithms/hierarchical.hpp"
#include "algorithms/schedule.hpp"

namespace collshim {

class CommContext {
 public:
  // Takes ownership of `shadow` (a PMPI_Comm_dup of the user's communicator) and frees it.
  explicit CommContext(MPI_Comm shadow);
  ~CommContext();
  CommContext(const CommContext&) = delete;
  CommContext& operator=(const CommContext&) = delete;

  MPI_Comm comm() const { return comm_; }
  int size() const { return size_; }
  int rank() const { return rank_; }

  // Where the ranks run (node identifiers, one per rank; default: all on one node). Set once, before
  // the first schedule is generated.
  void set_node_of_rank(std::vector<int> node_of_rank) { node_of_rank_ = std::move(node_of_rank); }
  const std::vector<int>& node_of_rank() const { return node_of_rank_; }

  // The schedule of `choice` for this rank, generated on first use.
  const Schedule& schedule(const AlgorithmChoice& choice);

  // Completes every request, even when some fail, so that no message still lands in a user's buffer
  // (or reads one) after the call returns, and no request is left behind. Returns MPI_SUCCESS or the
  // error of the first failed message (not MPI_ERR_IN_STATUS).
  int complete_requests(std::span<MPI_Request> pending);

  // Scratch storage; contents are meaningless between calls.
  std::vector<MPI_Request> requests;
  std::vector<MPI_Datatype> message_types;
  std::vector<int> type_lengths;
  std::vector<MPI_Aint> type_offsets;
  std::vector<std::byte> staging;

  // Grid Alltoallv: a plan (dimension communicators) per grid choice, indexed by AlgorithmChoice::id
  // and created collectively on the choice's first call; forwarding buffers shared by all choices.
  std::vector<std::unique_ptr<GridPlan>> grid_plans;
  GridBuffers grid_buffers;

  // Hierarchical: node and leaders' communicators, made on the first call that needs them.
  std::unique_ptr<NodeComms> node_comms;

 private:
  MPI_Comm comm_;
  int size_ = 0;
  int rank_ = 0;
  std::vector<int> node_of_rank_;
  std::vector<MPI_Status> statuses_;
  std::vector<std::optional<Schedule>> schedules_;  // indexed by AlgorithmChoice::id
};

}  // namespace collshim
