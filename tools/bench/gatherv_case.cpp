// collshim-bench cases for MPI_Gatherv and MPI_Scatterv in bytes (MPI_BYTE), rooted at p/2 as in
// Träff's experiments. The sweep's size b is the average block; --distribution gives the blocks'
// shape (Träff, ParCo 2018, section 5): same (b), increasing (2b(i+1)/p), decreasing (2b(p-i)/p + 1),
// spikes (5b with probability 1/5, else 1), random (uniform in [1, 2b]), two_blocks (b at ranks 0
// and p-1, 0 elsewhere). Random shapes follow --seed; every rank computes all sizes alike.
#include <climits>

#include "algorithms/engine/run_algorithm.hpp"
#include "bench_case.hpp"

namespace collshim::bench {
namespace {

const std::vector<std::string> gatherv_distributions = {"same",   "increasing", "decreasing",
                                                        "spikes", "random",     "two_blocks"};

// SplitMix64 step: the per-rank draws of spikes and random, a function of seed and rank only.
std::uint64_t draw(std::uint64_t seed, int rank) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ULL + static_cast<std::uint64_t>(rank) * 0xBF58476D1CE4E5B9ULL + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

std::vector<long long> block_sizes(const std::string& distribution, int p, long long b, std::uint64_t seed) {
  std::vector<long long> sizes(p, b);
  for (int i = 0; i < p; ++i) {
    if (distribution == "increasing") sizes[i] = 2 * b * (i + 1) / p;  // as printed: 0 where 2b(i+1) < p
    if (distribution == "decreasing") sizes[i] = 2 * b * (p - i) / p + 1;
    if (distribution == "spikes") sizes[i] = draw(seed, i) % 5 == 0 ? 5 * b : 1;
    if (distribution == "random")
      sizes[i] = 1 + static_cast<long long>(draw(seed, i) % static_cast<std::uint64_t>(2 * b));
    if (distribution == "two_blocks") sizes[i] = i == 0 || i == p - 1 ? b : 0;
  }
  return sizes;
}

class RootedCase : public BenchCase {
 public:
  RootedCase(MPI_Comm comm, const CaseOptions& options, bool gather) : comm_(comm), options_(options), gather_(gather) {
    MPI_Comm_size(comm_, &p_);
    MPI_Comm_rank(comm_, &rank_);
    root_ = p_ / 2;
  }

  std::optional<SizeStep> prepare(long long b, int salt, std::string& skip_reason) override {
    const std::vector<long long> sizes = block_sizes(options_.variant, p_, std::max(b, 1LL), options_.seed);
    counts_.assign(p_, 0);
    displs_.assign(p_, 0);
    long long total = 0;
    for (int i = 0; i < p_; ++i) {
      if (sizes[i] > INT_MAX || total > INT_MAX) break;
      counts_[i] = static_cast<int>(sizes[i]);
      displs_[i] = static_cast<int>(total);
      total += sizes[i];
    }
    if (total > INT_MAX) {  // every rank computes the same sizes, so every rank skips
      skip_reason = "the root's data exceeds INT_MAX bytes";
      return std::nullopt;
    }
    salt_ = salt;
    const long long own = counts_[rank_], at_root = rank_ == root_ ? total : 0;
    if (gather_) {
      buffers_.allocate(own, at_root, 2.0 * static_cast<double>(total), options_);
      auto& send = buffers_.send_bytes();
      for (std::size_t i = 0; i < send.size(); ++i) send[i] = pattern_byte(rank_, 0, static_cast<long long>(i), salt);
    } else {
      buffers_.allocate(at_root, own, 2.0 * static_cast<double>(total), options_);
      auto& send = buffers_.send_bytes();
      if (!send.empty()) {
        for (int peer = 0; peer < p_; ++peer)
          for (int i = 0; i < counts_[peer]; ++i) send[displs_[peer] + i] = pattern_byte(rank_, peer, i, salt);
      }
    }
    return SizeStep{b, total, total / p_};
  }

  int call_native() override {
    return gather_ ? PMPI_Gatherv(buffers_.send(), counts_[rank_], MPI_BYTE, buffers_.recv(), counts_.data(),
                                  displs_.data(), MPI_BYTE, root_, comm_)
                   : PMPI_Scatterv(buffers_.send(), counts_.data(), displs_.data(), MPI_BYTE, buffers_.recv(),
                                   counts_[rank_], MPI_BYTE, root_, comm_);
  }

  int call(const AlgorithmChoice& choice, CommContext& context) override {
    return gather_ ? run_call(gather_arguments(), choice, context) : run_call(scatter_arguments(), choice, context);
  }

  int start_native(MPI_Request* request) override {
    return gather_ ? PMPI_Igatherv(buffers_.send(), counts_[rank_], MPI_BYTE, buffers_.recv(), counts_.data(),
                                   displs_.data(), MPI_BYTE, root_, comm_, request)
                   : PMPI_Iscatterv(buffers_.send(), counts_.data(), displs_.data(), MPI_BYTE, buffers_.recv(),
                                    counts_[rank_], MPI_BYTE, root_, comm_, request);
  }

  int call_layout(CommContext& context, LayoutStorage& storage, CallLayout& layout) override {
    return gather_ ? make_layout(gather_arguments(), context.size(), context.rank(), storage, layout)
                   : make_layout(scatter_arguments(), context.size(), context.rank(), storage, layout);
  }

  // Gatherv: every block at the root; Scatterv: the root's block for this rank, here.
  bool native_result_expected() const override {
    const auto& recv = buffers_.recv_bytes();
    if (!gather_) {
      for (int i = 0; i < counts_[rank_]; ++i)
        if (recv[i] != pattern_byte(root_, rank_, i, salt_)) return false;
      return true;
    }
    if (rank_ != root_) return true;
    for (int owner = 0; owner < p_; ++owner) {
      for (int i = 0; i < counts_[owner]; ++i)
        if (recv[displs_[owner] + i] != pattern_byte(owner, 0, i, salt_)) return false;
    }
    return true;
  }

 private:
  // The call's arguments, as the shim's executor takes them.
  GathervCall gather_arguments() {
    return {buffers_.send(), counts_[rank_], MPI_BYTE, buffers_.recv(),
            counts_.data(),  displs_.data(), MPI_BYTE, root_};
  }
  ScattervCall scatter_arguments() {
    return {buffers_.send(), counts_.data(), displs_.data(), MPI_BYTE,
            buffers_.recv(), counts_[rank_], MPI_BYTE,       root_};
  }

  MPI_Comm comm_;
  const CaseOptions& options_;
  bool gather_;
  int p_ = 0, rank_ = 0, root_ = 0, salt_ = 0;
  std::vector<int> counts_, displs_;
};

}  // namespace

CaseInfo gatherv_case() {
  return {Collective::gatherv, "--distribution", gatherv_distributions,
          "average block b of the distribution (root p/2); total: bytes gathered",
          [](MPI_Comm comm, const CaseOptions& options) { return std::make_unique<RootedCase>(comm, options, true); }};
}

CaseInfo scatterv_case() {
  return {Collective::scatterv, "--distribution", gatherv_distributions,
          "average block b of the distribution (root p/2); total: bytes scattered",
          [](MPI_Comm comm, const CaseOptions& options) { return std::make_unique<RootedCase>(comm, options, false); }};
}

}  // namespace collshim::bench
