// collshim-bench case for MPI_Alltoall in bytes (MPI_BYTE): the sweep's size is the block every rank
// sends to every rank. The algorithms run through run_alltoallv with the uniform form of
// AlltoallvCall, exactly as the entry point runs them.
#include <climits>

#include "algorithms/engine/run_algorithm.hpp"
#include "bench_case.hpp"

namespace collshim::bench {
namespace {

class AlltoallCase : public BenchCase {
 public:
  AlltoallCase(MPI_Comm comm, const CaseOptions& options) : comm_(comm), options_(options) {
    MPI_Comm_size(comm_, &p_);
    MPI_Comm_rank(comm_, &rank_);
  }

  std::optional<SizeStep> prepare(long long c, int salt, std::string& skip_reason) override {
    const long long bytes = c * p_;  // per rank, each direction
    if (bytes > INT_MAX) {
      skip_reason = "a rank's data exceeds INT_MAX bytes";
      return std::nullopt;
    }
    salt_ = salt;
    c_ = static_cast<int>(c);
    buffers_.allocate(bytes, bytes, 2.0 * static_cast<double>(bytes) * p_, options_);
    auto& send = buffers_.send_bytes();
    for (int peer = 0; peer < p_ && !send.empty(); ++peer) {
      for (int i = 0; i < c_; ++i) send[static_cast<std::size_t>(peer) * c_ + i] = pattern_byte(rank_, peer, i, salt);
    }
    const long long total = c * p_ * p_;  // over all ranks
    return SizeStep{c, total, c};
  }

  int call_native() override {
    return PMPI_Alltoall(buffers_.send(), c_, MPI_BYTE, buffers_.recv(), c_, MPI_BYTE, comm_);
  }

  int call(const AlgorithmChoice& choice, CommContext& context) override {
    return run_call(arguments(), choice, context);
  }

  int start_native(MPI_Request* request) override {
    return PMPI_Ialltoall(buffers_.send(), c_, MPI_BYTE, buffers_.recv(), c_, MPI_BYTE, comm_, request);
  }

  int call_layout(CommContext& context, LayoutStorage& storage, CallLayout& layout) override {
    return make_layout(arguments(), context.size(), context.rank(), storage, layout);
  }

  bool native_result_expected() const override {
    const auto& recv = buffers_.recv_bytes();
    for (int source = 0; source < p_; ++source) {
      for (int i = 0; i < c_; ++i) {
        if (recv[static_cast<std::size_t>(source) * c_ + i] != pattern_byte(source, rank_, i, salt_)) return false;
      }
    }
    return true;
  }

 private:
  // The call's arguments, as the shim's executor takes them.
  AlltoallvCall arguments() {
    return {buffers_.send(), nullptr, nullptr, MPI_BYTE, buffers_.recv(), nullptr, nullptr, MPI_BYTE, c_, c_};
  }

  MPI_Comm comm_;
  const CaseOptions& options_;
  int p_ = 0, rank_ = 0, salt_ = 0, c_ = 0;
};

}  // namespace

CaseInfo alltoall_case() {
  return {Collective::alltoall,
          "",
          {},
          "bytes per block (every rank to every rank); total: bytes over all ranks",
          [](MPI_Comm comm, const CaseOptions& options) { return std::make_unique<AlltoallCase>(comm, options); }};
}

}  // namespace collshim::bench
