// collshim-bench cases for MPI_Allgather and MPI_Allgatherv, in bytes (MPI_BYTE). Allgatherv's block
// sizes follow a distribution (--distribution); Allgather's are all the sweep's size.
#include <climits>
#include <cmath>

#include "algorithms/engine/run_algorithm.hpp"
#include "bench_case.hpp"

namespace collshim::bench {
namespace {

const std::vector<std::string> allgatherv_distributions = {"uniform",   "broadcast",         "spike",
                                                           "half_full", "linear_decreasing", "geometric"};

// Bytes per rank for base block size c (Sparbit thesis 6.1.3, after Traeff et al. 2008). The same on
// every rank. log p is natural: the thesis gives the geometric total as about p*c, the harmonic sum.
std::vector<long long> block_sizes(const std::string& distribution, int p, long long c) {
  std::vector<long long> sizes(p, c);
  if (p == 1) return sizes;
  for (int i = 0; i < p; ++i) {
    if (distribution == "broadcast") sizes[i] = i == 0 ? c : 0;
    if (distribution == "spike") sizes[i] = i == 0 ? p * c : p * c / (p - 1);
    if (distribution == "half_full") sizes[i] = i % 2 == 0 ? 2 * c : 0;
    if (distribution == "linear_decreasing") sizes[i] = 2 * c * (p - 1 - i) / (p - 1);
    if (distribution == "geometric")
      sizes[i] = static_cast<long long>(static_cast<double>(p) * c / ((i + 1.5) * std::log(static_cast<double>(p))));
  }
  return sizes;
}

class AllgatherCase : public BenchCase {
 public:
  AllgatherCase(MPI_Comm comm, const CaseOptions& options, bool uniform)
      : comm_(comm), options_(options), uniform_(uniform) {
    MPI_Comm_size(comm_, &p_);
    MPI_Comm_rank(comm_, &rank_);
  }

  std::optional<SizeStep> prepare(long long c, int salt, std::string& skip_reason) override {
    const std::vector<long long> sizes =
        uniform_ ? std::vector<long long>(p_, c) : block_sizes(options_.variant, p_, c);
    counts_.assign(p_, 0);
    displs_.assign(p_, 0);
    long long total = 0;
    for (int i = 0; i < p_; ++i) {
      if (sizes[i] > INT_MAX || total > INT_MAX) break;
      counts_[i] = static_cast<int>(sizes[i]);
      displs_[i] = static_cast<int>(total);
      total += sizes[i];
    }
    if (total > INT_MAX) {
      skip_reason = "the gathered data exceeds INT_MAX bytes";
      return std::nullopt;
    }
    salt_ = salt;
    buffers_.allocate(counts_[rank_], total, static_cast<double>(total) * 2 * p_, options_);
    auto& send = buffers_.send_bytes();
    for (std::size_t i = 0; i < send.size(); ++i) send[i] = pattern_byte(rank_, 0, static_cast<long long>(i), salt);
    return SizeStep{c, total, total / p_};
  }

  int call_native() override {
    const int own = counts_[rank_];
    return uniform_ ? PMPI_Allgather(buffers_.send(), own, MPI_BYTE, buffers_.recv(), own, MPI_BYTE, comm_)
                    : PMPI_Allgatherv(buffers_.send(), own, MPI_BYTE, buffers_.recv(), counts_.data(), displs_.data(),
                                      MPI_BYTE, comm_);
  }

  int call(const AlgorithmChoice& choice, CommContext& context) override {
    return run_call(arguments(), choice, context);
  }

  int start_native(MPI_Request* request) override {
    const int own = counts_[rank_];
    return uniform_ ? PMPI_Iallgather(buffers_.send(), own, MPI_BYTE, buffers_.recv(), own, MPI_BYTE, comm_, request)
                    : PMPI_Iallgatherv(buffers_.send(), own, MPI_BYTE, buffers_.recv(), counts_.data(), displs_.data(),
                                       MPI_BYTE, comm_, request);
  }

  int call_layout(CommContext& context, LayoutStorage& storage, CallLayout& layout) override {
    return make_layout(arguments(), context.size(), context.rank(), storage, layout);
  }

  bool native_result_expected() const override {
    const auto& recv = buffers_.recv_bytes();
    for (int owner = 0; owner < p_; ++owner) {
      for (int i = 0; i < counts_[owner]; ++i) {
        if (recv[displs_[owner] + i] != pattern_byte(owner, 0, i, salt_)) return false;
      }
    }
    return true;
  }

  std::vector<long long> block_bytes_by_rank() const override {
    if (uniform_) return {};
    return {counts_.begin(), counts_.end()};  // MPI_BYTE blocks
  }

 private:
  // The call's arguments, as the shim's executor takes them.
  AllgathervCall arguments() {
    const int own = counts_[rank_];
    return {buffers_.send(),
            own,
            MPI_BYTE,
            buffers_.recv(),
            uniform_ ? nullptr : counts_.data(),
            uniform_ ? nullptr : displs_.data(),
            own,
            MPI_BYTE};
  }

  MPI_Comm comm_;
  const CaseOptions& options_;
  bool uniform_;
  int p_ = 0, rank_ = 0, salt_ = 0;
  std::vector<int> counts_, displs_;
};

}  // namespace

CaseInfo allgather_case() {
  return {Collective::allgather, "", {}, "per-rank block", [](MPI_Comm comm, const CaseOptions& options) {
            return std::make_unique<AllgatherCase>(comm, options, true);
          }};
}

CaseInfo allgatherv_case() {
  return {
      Collective::allgatherv, "--distribution", allgatherv_distributions,
      "per-rank block size c of the distribution; total: bytes gathered",
      [](MPI_Comm comm, const CaseOptions& options) { return std::make_unique<AllgatherCase>(comm, options, false); }};
}

}  // namespace collshim::bench
