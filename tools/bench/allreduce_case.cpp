// collshim-bench case for MPI_Allreduce: the sweep's size is the vector's bytes (count x 8), summed
// as MPI_INT64_T with MPI_SUM. An exact type: every algorithm must give native's result bit for bit,
// whatever order it combines in, so results are verified like every other case's. (Floating-point
// sums are not offered: a reordered sum rounds differently, and byte-for-byte verification would
// call that a mismatch; the MPI tests check them within a tolerance instead.)
#include <climits>
#include <cstring>

#include "algorithms/engine/run_algorithm.hpp"
#include "bench_case.hpp"

namespace collshim::bench {
namespace {

constexpr long long element_bytes = sizeof(std::int64_t);

// Element i of rank r's contribution: small enough that p of them never overflow.
std::int64_t contribution(int rank, long long i, int salt) {
  return static_cast<std::int64_t>(pattern_byte(rank, 0, i, salt)) * (rank + 1) - 300 * (i % 3);
}

class AllreduceCase : public BenchCase {
 public:
  AllreduceCase(MPI_Comm comm, const CaseOptions& options) : comm_(comm), options_(options) {
    MPI_Comm_size(comm_, &p_);
    MPI_Comm_rank(comm_, &rank_);
  }

  std::optional<SizeStep> prepare(long long bytes, int salt, std::string& skip_reason) override {
    if (bytes % element_bytes != 0) {
      skip_reason = "not a whole number of 8-byte elements";
      return std::nullopt;
    }
    if (bytes / element_bytes > INT_MAX) {
      skip_reason = "more than INT_MAX elements";
      return std::nullopt;
    }
    salt_ = salt;
    count_ = static_cast<int>(bytes / element_bytes);
    buffers_.allocate(bytes, bytes, 2.0 * static_cast<double>(bytes) * p_, options_);
    auto& send = buffers_.send_bytes();
    for (int i = 0; i < count_ && !send.empty(); ++i) {
      const std::int64_t value = contribution(rank_, i, salt);
      std::memcpy(send.data() + i * element_bytes, &value, sizeof value);
    }
    // Rules and report buckets key an Allreduce on the whole vector, the same on every rank.
    return SizeStep{bytes, bytes, bytes};
  }

  int call_native() override {
    return PMPI_Allreduce(buffers_.send(), buffers_.recv(), count_, MPI_INT64_T, MPI_SUM, comm_);
  }

  int call(const AlgorithmChoice& choice, CommContext& context) override {
    return run_call(arguments(), choice, context);
  }

  int start_native(MPI_Request* request) override {
    return PMPI_Iallreduce(buffers_.send(), buffers_.recv(), count_, MPI_INT64_T, MPI_SUM, comm_, request);
  }

  int call_layout(CommContext& context, LayoutStorage& storage, CallLayout& layout) override {
    return make_layout(arguments(), context.size(), context.rank(), storage, layout);
  }

  bool native_result_expected() const override {
    const auto& recv = buffers_.recv_bytes();
    for (int i = 0; i < count_; ++i) {
      std::int64_t expected = 0;
      for (int rank = 0; rank < p_; ++rank) expected += contribution(rank, i, salt_);
      std::int64_t found;
      std::memcpy(&found, recv.data() + i * element_bytes, sizeof found);
      if (found != expected) return false;
    }
    return true;
  }

  long long reduction_element_bytes() const override { return element_bytes; }

 private:
  // The call's arguments, as the shim's executor takes them.
  AllreduceCall arguments() { return {buffers_.send(), buffers_.recv(), count_, MPI_INT64_T, MPI_SUM}; }

  MPI_Comm comm_;
  const CaseOptions& options_;
  int p_ = 0, rank_ = 0, salt_ = 0, count_ = 0;
};

}  // namespace

CaseInfo allreduce_case() {
  return {Collective::allreduce,
          "",
          {},
          "bytes of the vector (MPI_INT64_T, MPI_SUM)",
          [](MPI_Comm comm, const CaseOptions& options) { return std::make_unique<AllreduceCase>(comm, options); }};
}

}  // namespace collshim::bench
