#include "selector/mapping_detection.hpp"

#include <hwloc.h>

#include <memory>
#include <vector>

namespace collshim {
namespace {

int cores_on_this_node() {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) return 0;
  const std::unique_ptr<hwloc_topology, decltype(&hwloc_topology_destroy)> topology(raw, hwloc_topology_destroy);
  if (hwloc_topology_load(topology.get()) != 0) return 0;
  const int cores = hwloc_get_nbobjs_by_type(topology.get(), HWLOC_OBJ_CORE);
  // Some virtual machines report no cores; processing units are the next best count.
  return cores > 0 ? cores : hwloc_get_nbobjs_by_type(topology.get(), HWLOC_OBJ_PU);
}

}  // namespace

ProcessPlacement detect_process_placement(const std::optional<TopologyOverride>& override) {
  int world_rank = 0, world_size = 1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
  MPI_Comm node = MPI_COMM_NULL;
  PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int ranks_on_node = 1, node_id = world_rank;
  PMPI_Comm_size(node, &ranks_on_node);
  PMPI_Allreduce(&world_rank, &node_id, 1, MPI_INT, MPI_MIN, node);
  PMPI_Comm_free(&node);

  const int cores = cores_on_this_node();
  int oversubscribed = cores > 0 && ranks_on_node > cores ? 1 : 0;
  PMPI_Allreduce(MPI_IN_PLACE, &oversubscribed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);

  ProcessPlacement placement{node_id, oversubscribed != 0};
  if (override) {
    placement.node_id = override->node_of_world_rank(world_rank, world_size);
    if (override->oversubscribed) placement.oversubscribed = *override->oversubscribed;
  }
  return placement;
}

CommMapping detect_comm_mapping(MPI_Comm comm, const ProcessPlacement& placement) {
  int size = 1;
  PMPI_Comm_size(comm, &size);
  std::vector<int> node_of_rank(size);
  PMPI_Allgather(&placement.node_id, 1, MPI_INT, node_of_rank.data(), 1, MPI_INT, comm);
  return classify_mapping(node_of_rank, placement.oversubscribed);
}

}  // namespace collshim
