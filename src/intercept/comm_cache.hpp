#pragma once
// Shadow communicators: the shim's traffic runs on a PMPI_Comm_dup of the user's communicator, so an
// application's pending MPI_ANY_SOURCE/MPI_ANY_TAG receive can never match it. The dup, the detected
// mapping, the decision cache and the algorithms' state hang off the user's communicator as one
// attribute; MPI calls our delete callback when the user frees the communicator, and all of it goes,
// once no nonblocking or persistent operation of the shim that runs on it remains (MPI lets a
// program free a communicator while its requests are pending: they complete as usual).
#include <mpi.h>

#include <memory>
#include <optional>
#include <utility>

#include "algorithms/engine/comm_context.hpp"
#include "decide/decision_policy.hpp"
#include "selector/mapping_detection.hpp"

namespace collshim {

// The communicator's nonblocking and persistent collectives (entry_points.cpp's operations): they
// run on `lane`, a second dup, so that nothing they do there can meet a blocking call's traffic on
// the shadow. There the library's collectives they run go in start order (the ranks may get to them
// in any order otherwise), and their schedules' messages take tags apart (step_tag), each run
// `tag_slot` a different range. Each run of an operation takes a ticket when it starts, in program
// order, the same on every rank; runs act on the lane in ticket order (`turn`).
//
// The tag slots (`tag_slots`, numbered from 1; slot 0 is the blocking calls'): a run of a nonblocking call, or of
// a persistent one without a slot of its own, takes slot 1 + ticket % (the first half); a persistent
// operation that keeps its run (its messages made once as persistent requests) takes one of the
// second half for its life, the next at its first run, never given again.
struct NonblockingLane {
  explicit NonblockingLane(MPI_Comm lane) : comm(lane) {}  // takes ownership
  ~NonblockingLane();
  NonblockingLane(const NonblockingLane&) = delete;
  NonblockingLane& operator=(const NonblockingLane&) = delete;

  int nonblocking_slot(unsigned long long ticket) const {
    return 1 + static_cast<int>(ticket % static_cast<unsigned long long>(tag_slots - tag_slots / 2));
  }
  std::optional<int> take_persistent_slot() {
    if (persistent_slots_taken >= tag_slots / 2) return std::nullopt;
    return tag_slots - tag_slots / 2 + 1 + persistent_slots_taken++;
  }

  // The job's: ranges of tags_per_schedule tags below the library's MPI_TAG_UB, set at MPI_Init (0:
  // too few tags, every nonblocking call passes through).
  static inline int tag_slots = 0;

  MPI_Comm comm = MPI_COMM_NULL;  // MPI_COMM_NULL if the dup failed: every such call passes through
  int persistent_slots_taken = 0;
  unsigned long long next_ticket = 0;
  unsigned long long turn = 0;
};

// Shared: the attribute holds one reference, and every operation of the shim running on the
// communicator another (CollectiveOperation keeps shared_from_this()).
struct CommState : std::enable_shared_from_this<CommState> {
  // Takes ownership of the dups made for it, collectively over the user's communicator, in blocking
  // steps (CommCache::state) or nonblocking ones (an MPI_Comm_idup's, CommIdupOperation): `shadow`,
  // with the mapping of its ranks' node ids (classify_mapping), and `lane`, a dup of the shadow.
  CommState(MPI_Comm shadow, CommMapping mapping, MPI_Comm lane)
      : context(shadow), mapping(std::move(mapping)), lane(lane) {
    context.set_node_of_rank(this->mapping.node_of_rank);
  }
  CommContext context;
  CommMapping mapping;
  CommDecisions decisions;            // the cache, and the keys the model or online tuning settles here
  bool device_memory_logged = false;  // the debug log says once that device buffers passed through
  NonblockingLane lane;
  // The user freed the communicator (its handle is no longer valid): an operation still running here
  // raises its error where MPI raises errors that have no communicator, on MPI_COMM_WORLD.
  bool user_comm_freed = false;
};

class CommCache {
 public:
  CommCache();   // creates the keyval (after MPI_Init)
  ~CommCache();  // frees the keyval (before MPI_Finalize); releases the state of COMM_WORLD and COMM_SELF
  CommCache(const CommCache&) = delete;
  CommCache& operator=(const CommCache&) = delete;

  // The state of an intracommunicator, created on first use: collective over `comm` then (two dups and
  // one allgather of node ids). Returns nullptr if the dup fails (the caller passes the call through).
  // Only for intracommunicators: recent() relies on it.
  CommState* state(MPI_Comm comm, const ProcessPlacement& placement);
  // The state of `comm` if it has one already, else nullptr: never collective (a nonblocking call's).
  CommState* existing(MPI_Comm comm) const;
  // Gives `comm`, an intracommunicator without a state, the state made for it; returns it, or nullptr
  // if the attribute cannot be set (the state then goes, and `comm`'s calls pass through). Not
  // collective: what state() and an MPI_Comm_idup's last step end with.
  CommState* install(MPI_Comm comm, std::shared_ptr<CommState> state);

  // The state of `comm` if state() returned it last: a repeated call on the same communicator then
  // skips the attribute lookup (PMPI_Comm_get_attr is a hash lookup, ~140 instructions in Open MPI
  // 4.1) and, as only intracommunicators have a state, the intercommunicator test. No MPI call;
  // nullptr otherwise. The delete callback forgets a freed state before its handle can be reused.
  // Off (always nullptr) at MPI_THREAD_MULTIPLE, where threads would race on this one entry.
  CommState* recent(MPI_Comm comm) const { return recent_comm_ == comm ? recent_state_ : nullptr; }

  // Called by the attribute's delete callback as `state` goes. A no-op once the cache is destroyed:
  // MPI may free the states of communicators the user never freed after that.
  static void forget(const CommState* state);

  // Releases the states of MPI_COMM_WORLD and MPI_COMM_SELF (called at MPI_Finalize, before the leak
  // count, and by the destructor); a later call on them creates a new state.
  void release_predefined_states();

  // Number of live states, for leak checks.
  static long live_states();

 private:
  int keyval_ = MPI_KEYVAL_INVALID;
  bool use_recent_ = false;
  MPI_Comm recent_comm_ = MPI_COMM_NULL;
  CommState* recent_state_ = nullptr;
};

}  // namespace collshim
