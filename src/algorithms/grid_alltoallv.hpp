#pragma once
// What the grid Alltoallv (grid_alltoallv.cpp) keeps per communicator, in CommContext.
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "algorithms/grid_routing.hpp"

namespace collshim {

// One grid shape on one communicator: this rank's phase plans and one communicator per phase, split
// from the shadow communicator on the first call and freed with the context.
class GridPlan {
 public:
  // Collective over `shadow`: one PMPI_Comm_split per phase. Returns an MPI error code.
  static int create(MPI_Comm shadow, const std::vector<int>& dims, std::unique_ptr<GridPlan>& plan);
  GridPlan() = default;
  ~GridPlan();
  GridPlan(const GridPlan&) = delete;
  GridPlan& operator=(const GridPlan&) = delete;

  std::vector<int> dims;
  std::vector<GridPhase> phases;
  std::vector<MPI_Comm> comms;  // per phase; MPI_COMM_NULL where this rank's group is itself alone
  // Per source rank: the index, in this rank's last-phase group, of the rank that hands over the
  // source's block in the last phase; -1 if the block arrives earlier (or is this rank's own). The
  // receivers of the last phase are the destinations, which know their recvcounts: with this table
  // the last phase needs no count exchange.
  std::vector<int> last_phase_sender;
};

// Forwarding storage, shared by every grid choice on the communicator. Vectors grow and are kept, so
// repeated calls of similar size allocate nothing, up to a limit: after a call, item buffers larger
// than `kept_bytes` are freed, so that one huge exchange does not pin its memory for the whole run.
struct GridBuffers {
  static constexpr std::size_t kept_bytes = std::size_t{64} << 20;
  void release_large();

  std::vector<std::byte> held;      // items this rank holds between phases
  std::vector<std::byte> outgoing;  // items leaving in the current phase, grouped by peer
  std::vector<std::byte> incoming;  // items staying here, then those received in the current phase
  std::vector<std::int64_t> send_bytes, recv_bytes;
  std::vector<std::int64_t> send_offsets, recv_offsets, cursors;
  std::vector<int> item_peer;  // per held item: index of its next hop in the group, -1 if delivered
};

}  // namespace collshim
