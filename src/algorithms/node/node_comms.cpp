// The node and leaders' communicators of the node-aware algorithms, and the node's shared-memory window.
#include "algorithms/node/node_comms.hpp"

#include <algorithm>

#include "algorithms/engine/schedule_engine.hpp"

namespace collshim {

ParamSpec hierarchical_intra_param() {
  return ParamSpec{"intra", "p2p or shm", "p2p",
                   [](std::string_view value) { return value == "p2p" || value == "shm"; }};
}

Params with_intra(Params params, std::string_view intra) {
  params["intra"] = intra;
  return params;
}

namespace {
bool inter_is_native(const Params& params) {
  const auto inter = params.find("inter");
  return inter != params.end() && inter->second == "native";
}
}  // namespace

std::string_view hierarchical_blocking_only(const Params& params) {
  if (inter_is_native(params)) return "inter=native: the leaders' part is the MPI library's blocking collective";
  if (params.at("intra") == "shm") return "intra=shm: the node's shared-memory window synchronizes its ranks";
  return {};
}

std::string hierarchical_nonblocking_fallback(const Params& params) {
  return inter_is_native(params) ? std::string("native") : "hierarchical:inter=" + params.at("inter");
}

int NodeComms::create(MPI_Comm shadow, const std::vector<int>& node_of_rank, std::unique_ptr<NodeComms>& created) {
  auto comms = std::make_unique<NodeComms>();
  comms->layout = make_node_layout(node_of_rank);
  int rank = 0;
  PMPI_Comm_rank(shadow, &rank);
  const int node = comms->layout.node_of_rank[rank];
  const int local = comms->layout.local_index[rank];
  int rc = PMPI_Comm_split(shadow, local == 0 ? 0 : MPI_UNDEFINED, node, &comms->leaders);
  if (rc == MPI_SUCCESS) rc = PMPI_Comm_split(shadow, node, local, &comms->node);
  if (rc != MPI_SUCCESS) return rc;
  // A node is shareable if MPI puts all of its ranks in one shared-memory domain; every rank must
  // agree, since the window is collective.
  MPI_Comm shared = MPI_COMM_NULL;
  rc = PMPI_Comm_split_type(comms->node, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
  if (rc != MPI_SUCCESS) return rc;
  int shared_size = 0, node_size = 0;
  PMPI_Comm_size(shared, &shared_size);
  PMPI_Comm_size(comms->node, &node_size);
  PMPI_Comm_free(&shared);
  int shareable = shared_size == node_size ? 1 : 0;
  rc = PMPI_Allreduce(MPI_IN_PLACE, &shareable, 1, MPI_INT, MPI_MIN, shadow);
  if (rc != MPI_SUCCESS) return rc;
  comms->shareable = shareable != 0;
  const auto nodes = comms->layout.members.size();
  comms->counts.resize(nodes);
  comms->displs.resize(nodes);
  comms->packed_bytes.resize(node_of_rank.size());
  comms->packed_offsets.resize(node_of_rank.size());
  created = std::move(comms);
  return MPI_SUCCESS;
}

NodeComms::~NodeComms() {
  free_window();  // before the communicator it lives on
  if (node != MPI_COMM_NULL) PMPI_Comm_free(&node);
  if (leaders != MPI_COMM_NULL) PMPI_Comm_free(&leaders);
}

void NodeComms::free_window() {
  if (window_ == MPI_WIN_NULL) return;
  PMPI_Win_unlock_all(window_);
  PMPI_Win_free(&window_);
  window_base = nullptr;
  window_bytes = 0;
}

int NodeComms::reserve_window(MPI_Aint bytes) {
  if (window_ != MPI_WIN_NULL && bytes <= window_bytes) return MPI_SUCCESS;
  // Every member sees the same `bytes`, so all of them come here together. Doubling keeps the
  // number of (collective, slow) reallocations logarithmic in the largest call.
  const MPI_Aint capacity = std::max<MPI_Aint>(bytes, 2 * window_bytes);
  free_window();
  int local = 0;
  PMPI_Comm_rank(node, &local);
  void* own = nullptr;
  int rc = PMPI_Win_allocate_shared(local == 0 ? capacity : 0, 1, MPI_INFO_NULL, node, &own, &window_);
  if (rc != MPI_SUCCESS) return rc;
  MPI_Aint size = 0;
  int unit = 0;
  void* leader_segment = nullptr;
  rc = PMPI_Win_shared_query(window_, 0, &size, &unit, &leader_segment);
  if (rc == MPI_SUCCESS) rc = PMPI_Win_lock_all(MPI_MODE_NOCHECK, window_);  // one epoch for the window's life
  if (rc != MPI_SUCCESS) return rc;
  window_base = static_cast<std::byte*>(leader_segment);
  window_bytes = capacity;
  window_half = 0;
  return MPI_SUCCESS;
}

int NodeComms::synchronize_window() const {
  int rc = PMPI_Win_sync(window_);
  if (rc == MPI_SUCCESS) rc = PMPI_Barrier(node);
  if (rc == MPI_SUCCESS) rc = PMPI_Win_sync(window_);
  return rc;
}

int NodeComms::fill_window(MPI_Aint needed, const std::function<int()>& store) {
  int first_error = MPI_SUCCESS;
  const bool stored = window_base != nullptr && needed <= window_bytes;
  if (stored) keep_first_error(first_error, store());
  long long agreed[3] = {needed, -needed, stored ? 0 : 1};  // max, -min, whether some member could not store
  if (stored) keep_first_error(first_error, PMPI_Win_sync(window_));
  keep_first_error(first_error, PMPI_Allreduce(MPI_IN_PLACE, agreed, 3, MPI_LONG_LONG, MPI_MAX, node));
  if (agreed[2] != 0) {
    const int rc = reserve_window(static_cast<MPI_Aint>(agreed[0]));
    if (rc != MPI_SUCCESS) return rc;  // collective and failed on the node: no window to use
    keep_first_error(first_error, store());
    keep_first_error(first_error, synchronize_window());
  }
  keep_first_error(first_error, PMPI_Win_sync(window_));
  if (agreed[0] != -agreed[1]) keep_first_error(first_error, MPI_ERR_TRUNCATE);
  return first_error;
}

}  // namespace collshim
