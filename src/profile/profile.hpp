#pragma once
// Counters for the end-of-run report: one row per (communicator size, collective, algorithm, rule,
// block-size bucket). Recording is enabled by COLLSHIM_REPORT only; a row is allocated the first
// time its key is seen, after which recording a call allocates nothing.
#include <atomic>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms/engine/registry.hpp"
#include "decide/size_bucket.hpp"  // the rows' buckets

namespace collshim {

// How a call came: MPI_Allgather, MPI_Iallgather or MPI_Allgather_init (and MPI_Start).
enum class CallForm : int { blocking = 0, nonblocking = 1, persistent = 2 };
// "MPI_Allgather", "MPI_Iallgather", "MPI_Allgather_init" for a collective's MPI name.
std::string form_function_name(std::string_view mpi_function, CallForm form);
const char* form_name(CallForm form);  // "blocking", "nonblocking", "persistent"

struct ProfileKey {
  int comm_size = 0;
  int collective = 0;  // Collective
  int choice_id = 0;   // AlgorithmChoice::id in the selector's table (same on every rank)
  int rule_index = 0;  // Decision::rule_index: a rule's index, or Decision::no_rule / forced_rule
  int bucket = 0;      // size_bucket()
  int form = 0;        // CallForm; a nonblocking or persistent call's time runs from its start to its completion
  bool operator==(const ProfileKey&) const = default;
};

struct ProfileCounts {
  long long calls = 0;
  long long bytes = 0;  // bytes this rank received
  double seconds = 0;
};

// Fixed-layout record exchanged between ranks at MPI_Finalize.
struct ProfileRow {
  ProfileKey key;
  ProfileCounts counts;
};

// Calls of a function the shim passes on unhandled (a nonblocking or persistent collective), by its
// index in the entry point table's list. Fixed layout, exchanged like ProfileRow.
struct UnhandledRow {
  int function = 0;
  long long calls = 0;
  long long bytes = 0;  // bytes this rank receives, counted as for the blocking call
};

class Profile {
 public:
  explicit Profile(int unhandled_functions = 0)
      : unhandled_calls_(unhandled_functions), unhandled_bytes_(unhandled_functions) {}
  void record(const ProfileKey& key, long long bytes, double seconds);
  std::vector<ProfileRow> rows() const;
  // Two relaxed increments, no lock: the whole cost of counting a call the shim does not handle.
  void count_unhandled(int function, long long bytes) {
    unhandled_calls_[function].fetch_add(1, std::memory_order_relaxed);
    unhandled_bytes_[function].fetch_add(bytes, std::memory_order_relaxed);
  }
  std::vector<UnhandledRow> unhandled() const;  // the functions called at least once

 private:
  mutable std::mutex mutex_;  // collectives on different communicators may run in several threads
  std::vector<ProfileRow> rows_;
  std::vector<std::atomic<long long>> unhandled_calls_, unhandled_bytes_;
};

}  // namespace collshim
