#include "intercept/comm_cache.hpp"

#include <atomic>
#include <memory>

namespace collshim {
namespace {

std::atomic<long> live_state_count{0};
CommCache* live_cache = nullptr;  // between CommCache's constructor and destructor

// The attribute's value: the communicator's reference to its state.
using StateReference = std::shared_ptr<CommState>;

// C ABI: MPI calls this when the user's communicator is freed (or its attribute deleted). The state
// goes with the last operation still running on it.
extern "C" int delete_comm_context(MPI_Comm /*comm*/, int /*keyval*/, void* value, void* /*extra*/) {
  const std::unique_ptr<StateReference> owned(static_cast<StateReference*>(value));
  (*owned)->user_comm_freed = true;
  CommCache::forget(owned->get());
  --live_state_count;
  return MPI_SUCCESS;
}

}  // namespace

CommCache::CommCache() {
  // No copy callback: a user's MPI_Comm_dup must get a fresh shadow, not share this one.
  PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_comm_context, &keyval_, nullptr);
  live_cache = this;
  int level = MPI_THREAD_SINGLE;
  PMPI_Query_thread(&level);
  use_recent_ = level != MPI_THREAD_MULTIPLE;
}

void CommCache::forget(const CommState* state) {
  if (live_cache == nullptr || live_cache->recent_state_ != state) return;
  live_cache->recent_comm_ = MPI_COMM_NULL;
  live_cache->recent_state_ = nullptr;
}

CommCache::~CommCache() {
  live_cache = nullptr;
  if (keyval_ == MPI_KEYVAL_INVALID) return;
  release_predefined_states();
  PMPI_Comm_free_keyval(&keyval_);
}

void CommCache::release_predefined_states() {
  // The predefined communicators outlive MPI_Finalize's user code; release their shadows while MPI
  // still works. Contexts of user communicators never freed are released by MPI itself.
  for (MPI_Comm comm : {MPI_COMM_WORLD, MPI_COMM_SELF}) {
    void* value = nullptr;
    int found = 0;
    PMPI_Comm_get_attr(comm, keyval_, &value, &found);
    if (found) PMPI_Comm_delete_attr(comm, keyval_);
  }
}

NonblockingLane::~NonblockingLane() {
  if (comm != MPI_COMM_NULL) PMPI_Comm_free(&comm);
}

CommState* CommCache::state(MPI_Comm comm, const ProcessPlacement& placement) {
  void* value = nullptr;
  int found = 0;
  PMPI_Comm_get_attr(comm, keyval_, &value, &found);
  CommState* state = found ? static_cast<StateReference*>(value)->get() : nullptr;
  if (!found) {
    MPI_Comm shadow = MPI_COMM_NULL;
    if (PMPI_Comm_dup(comm, &shadow) != MPI_SUCCESS) return nullptr;
    // Errors inside an algorithm come back as return codes and are raised on the user's communicator
    // (run_decided), whose handler may have changed since this dup copied it. The lane inherits it.
    PMPI_Comm_set_errhandler(shadow, MPI_ERRORS_RETURN);
    CommMapping mapping = detect_comm_mapping(shadow, placement);
    MPI_Comm lane = MPI_COMM_NULL;
    if (PMPI_Comm_dup(shadow, &lane) != MPI_SUCCESS) lane = MPI_COMM_NULL;
    state = install(comm, std::make_shared<CommState>(shadow, std::move(mapping), lane));
    if (state == nullptr) return nullptr;
  }
  if (use_recent_) {
    recent_comm_ = comm;
    recent_state_ = state;
  }
  return state;
}

CommState* CommCache::install(MPI_Comm comm, std::shared_ptr<CommState> state) {
  auto reference = std::make_unique<StateReference>(std::move(state));
  if (PMPI_Comm_set_attr(comm, keyval_, reference.get()) != MPI_SUCCESS) return nullptr;
  ++live_state_count;
  return reference.release()->get();  // the reference is owned by the attribute from here on
}

CommState* CommCache::existing(MPI_Comm comm) const {
  void* value = nullptr;
  int found = 0;
  if (PMPI_Comm_get_attr(comm, keyval_, &value, &found) != MPI_SUCCESS || !found) return nullptr;
  return static_cast<StateReference*>(value)->get();
}

long CommCache::live_states() { return live_state_count.load(); }

}  // namespace collshim
