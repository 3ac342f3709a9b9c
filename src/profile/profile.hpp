#pragma once
// Counters for the end-of-run report: one row per (communicator size, collective, algorithm, rule,
// block-size bucket). Recording is enabled by COLLSHIM_REPORT only; a row is allocated the first
// time its key is seen, after which recording a call allocates nothing.
#include <mutex>
#include <string>
#include <vector>

#include "algorithms/engine/registry.hpp"

namespace collshim {

struct ProfileKey {
  int comm_size = 0;
  int collective = 0;  // Collective
  int choice_id = 0;   // AlgorithmChoice::id in the selector's table (same on every rank)
  int rule_index = 0;  // Decision::rule_index: a rule's index, or Decision::no_rule / forced_rule
  int bucket = 0;      // -1 for 0 bytes, else floor(log2(block_bytes))
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

int size_bucket(long long block_bytes);
// "1KiB-2KiB", or "0B" for the empty bucket.
std::string bucket_text(int bucket);

class Profile {
 public:
  void record(const ProfileKey& key, long long bytes, double seconds);
  std::vector<ProfileRow> rows() const;

 private:
  mutable std::mutex mutex_;  // collectives on different communicators may run in several threads
  std::vector<ProfileRow> rows_;
};

}  // namespace collshim
