#pragma once
// Where this process runs, found once at MPI_Init (collective over MPI_COMM_WORLD), and the mapping
// of any communicator, found once per communicator (one allgather of node ids over it).
#include <mpi.h>

#include <optional>

#include "selector/mapping.hpp"

namespace collshim {

struct ProcessPlacement {
  int node_id = 0;              // lowest world rank on this process's node (or the override's node)
  bool oversubscribed = false;  // some node of the job runs more ranks than it has cores
};

// Collective over MPI_COMM_WORLD. Nodes come from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED), cores
// from hwloc; `override` (COLLSHIM_TOPOLOGY) replaces the node and, if it says so, oversubscription.
ProcessPlacement detect_process_placement(const std::optional<TopologyOverride>& override);

// Collective over `comm` (pass the shadow communicator).
CommMapping detect_comm_mapping(MPI_Comm comm, const ProcessPlacement& placement);

}  // namespace collshim
