#pragma once
// collshim-bench's interface to one collective: a *case* prepares the buffers of one size, calls the
// MPI library's own collective (native) or one of collshim's algorithms through the shim's executor,
// and checks results. The harness (collshim_bench.cpp) does everything else the same way for every
// collective: the sweep, warm-up, interleaved timed calls, statistics and output. One file per
// collective family (allgather_case.cpp, alltoallv_case.cpp, gatherv_case.cpp, ...) defines its case and registers it
// in bench_cases() (bench_cases.cpp).
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/engine/algorithm_spec.hpp"
#include "algorithms/engine/call_layout.hpp"
#include "algorithms/engine/collective.hpp"
#include "algorithms/engine/comm_context.hpp"
#include "selector/rule_table.hpp"

namespace collshim::bench {

// The options a case may read. Set from the command line (collshim_bench.cpp).
struct CaseOptions {
  std::string variant;                    // the case's --distribution or --pattern value ("" = its default)
  std::uint64_t seed = 1;                 // --seed: random patterns are functions of it
  std::int64_t verify_limit = 1LL << 30;  // SMPI: bytes over all ranks above which buffers are shared
};

// Byte `offset` of rank `owner`'s data for destination `peer`; depends on the size step (`salt`) so a
// stale buffer cannot pass. Cases whose data has no destination pass peer 0.
inline unsigned char pattern_byte(int owner, int peer, long long offset, int salt) {
  return static_cast<unsigned char>(owner * 131 + peer * 17 + offset * 7 + salt * 29 + 1);
}

// What one size step of a case moves.
struct SizeStep {
  long long bytes = 0;        // the sweep's size: the block, vector or per-pair size the user asked for
  long long total_bytes = 0;  // the table's "total" column: what the collective moves (see the case)
  long long block_bytes = 0;  // the size rules test (block_bytes of docs/rules-and-tuning.md)
};

// Send and receive storage of one size step. Under SMPI, sizes whose buffers summed over all
// simulated ranks exceed CaseOptions::verify_limit use SMPI_SHARED_MALLOC (one physical copy for all
// ranks, contents garbage): they are timed, not verified.
class StepBuffers {
 public:
  StepBuffers() = default;
  StepBuffers(const StepBuffers&) = delete;
  StepBuffers& operator=(const StepBuffers&) = delete;
  ~StepBuffers();

  // Sizes both buffers (bytes on this rank); `all_ranks_bytes` is send+receive summed over all ranks.
  void allocate(long long send_bytes, long long recv_bytes, double all_ranks_bytes, const CaseOptions& options);
  bool shared() const { return shared_; }
  unsigned char* send() { return send_data_; }
  unsigned char* recv() { return recv_data_; }
  std::vector<unsigned char>& send_bytes() { return send_; }  // for filling; empty when shared
  const std::vector<unsigned char>& recv_bytes() const { return recv_; }

  void poison() { std::fill(recv_.begin(), recv_.end(), static_cast<unsigned char>(0xA5)); }
  void keep_reference() { reference_ = recv_; }
  bool matches_reference() const { return recv_ == reference_; }

 private:
  void release_shared();

  std::vector<unsigned char> send_, recv_, reference_;
  unsigned char* send_data_ = nullptr;
  unsigned char* recv_data_ = nullptr;
  bool shared_ = false;
};

class BenchCase {
 public:
  virtual ~BenchCase() = default;
  // Sets up size `bytes` (salted data); nullopt with `skip_reason` set when the size cannot run.
  virtual std::optional<SizeStep> prepare(long long bytes, int salt, std::string& skip_reason) = 0;
  virtual int call_native() = 0;
  virtual int call(const AlgorithmChoice& choice, CommContext& context) = 0;
  // The nonblocking form (collshim-bench --overlap): the library's MPI_I<collective> on
  // call_native()'s arguments, and the layout of call()'s (make_layout), kept in `storage`, for a
  // schedule run without blocking as the shim runs it.
  virtual int start_native(MPI_Request* request) = 0;
  virtual int call_layout(CommContext& context, LayoutStorage& storage, CallLayout& layout) = 0;
  // After native's call into poisoned buffers: does this rank hold what the collective defines?
  virtual bool native_result_expected() const = 0;
  // What a decision needs of the call beyond size and placement (a reduction's operation properties).
  virtual void describe(CallFacts& facts) const { (void)facts; }
  // What the cost model needs of the call beyond its size, as the shim reads it from the arguments:
  // every rank's block where they differ (Allgatherv), this rank's bytes to each destination and
  // from each source (Alltoallv), the element of a reduction. Empty or 0 where the collective has none.
  virtual std::vector<long long> block_bytes_by_rank() const { return {}; }
  virtual std::vector<long long> sent_bytes() const { return {}; }
  virtual std::vector<long long> received_bytes() const { return {}; }
  virtual long long reduction_element_bytes() const { return 0; }
  StepBuffers& buffers() { return buffers_; }

 protected:
  StepBuffers buffers_;
};

// A collective collshim-bench can time.
struct CaseInfo {
  Collective collective;
  std::string variant_option;         // "--distribution", "--pattern", or "" if the case has none
  std::vector<std::string> variants;  // its values, the first the default
  std::string size_meaning;           // "per-rank block", "bytes per pair", ... for the table header
  std::function<std::unique_ptr<BenchCase>(MPI_Comm, const CaseOptions&)> make;
};

const std::vector<CaseInfo>& bench_cases();
const CaseInfo* find_bench_case(Collective collective);

// The case factories, one per file.
CaseInfo allgather_case();
CaseInfo allgatherv_case();
CaseInfo alltoallv_case();
// The ranks `rank` sends to in an Alltoallv pattern (the case's variants, docs/rules-and-tuning.md,
// "Measuring"), each once: a pure function of (pattern, rank, p, seed), so the cost model can cost the
// same traffic.
std::vector<int> alltoallv_destinations(const std::string& pattern, int rank, int p, std::uint64_t seed);
CaseInfo gatherv_case();
CaseInfo scatterv_case();
CaseInfo alltoall_case();
CaseInfo allreduce_case();

// A CSV field with RFC 4180 quoting where needed: MPI version strings and algorithm specs such as
// hierarchical:inter=ring,intra=shm have commas.
std::string csv_field(const std::string& text);

}  // namespace collshim::bench
