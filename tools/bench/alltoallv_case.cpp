// collshim-bench case for MPI_Alltoallv in bytes (MPI_BYTE). The sweep's size is the bytes each
// sending pair exchanges; --pattern says which pairs send (docs/rules-and-tuning.md, "Measuring"). Every rank
// derives its own row of the pattern from --seed; one PMPI_Alltoall at set-up tells every rank whom it
// receives from, so no rank ever builds the whole p x p matrix (which a simulated 1024-rank run could
// not afford 1024 times over).
#include <algorithm>
#include <climits>
#include <cmath>
#include <numeric>

#include "algorithms/engine/run_algorithm.hpp"
#include "bench_case.hpp"

namespace collshim::bench {
namespace {

const std::vector<std::string> patterns = {"uniform",   "sparse_1", "sparse_8", "sparse_sqrt",
                                           "power_law", "hot_spot", "shift"};

// SplitMix64: a small, seedable generator whose streams are cheap to start per rank.
class SplitMix {
 public:
  explicit SplitMix(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n), n > 0 (the modulo bias is irrelevant for a traffic pattern).
  int below(int n) { return static_cast<int>(next() % static_cast<std::uint64_t>(n)); }

 private:
  std::uint64_t state_;
};

std::uint64_t stream(std::uint64_t seed, int rank, std::uint64_t purpose) {
  return seed * 0x100000001B3ULL ^ (static_cast<std::uint64_t>(rank) << 20) ^ purpose;
}

// d distinct peers of `rank` among the other p-1 ranks, uniformly at random (Floyd's sampling).
std::vector<int> random_peers(int rank, int p, int d, std::uint64_t seed) {
  d = std::min(d, p - 1);
  SplitMix random(stream(seed, rank, 1));
  std::vector<int> chosen;  // offsets 1..p-1 from rank
  for (int j = p - 1 - d; j < p - 1; ++j) {
    const int t = random.below(j + 1) + 1;
    chosen.push_back(std::find(chosen.begin(), chosen.end(), t) == chosen.end() ? t : j + 1);
  }
  std::vector<int> peers;
  for (int offset : chosen) peers.push_back((rank + offset) % p);
  return peers;
}

// Ranks in a random order every rank computes alike: the power-law degrees follow it, so the
// hubs are not always the low ranks.
std::vector<int> seeded_permutation(int p, std::uint64_t seed) {
  std::vector<int> order(p);
  std::iota(order.begin(), order.end(), 0);
  SplitMix random(stream(seed, -1, 2));
  for (int i = p - 1; i > 0; --i) std::swap(order[i], order[random.below(i + 1)]);
  return order;
}

}  // namespace

std::vector<int> alltoallv_destinations(const std::string& pattern, int rank, int p, std::uint64_t seed) {
  std::vector<int> to;
  if (pattern == "uniform") {
    to.resize(p);
    std::iota(to.begin(), to.end(), 0);
  } else if (pattern == "sparse_1" || pattern == "sparse_8" || pattern == "sparse_sqrt") {
    const int d = pattern == "sparse_1"   ? 1
                  : pattern == "sparse_8" ? 8
                                          : static_cast<int>(std::lround(std::sqrt(static_cast<double>(p))));
    to = random_peers(rank, p, d, seed);
  } else if (pattern == "power_law") {
    // Zipf degrees: the rank at place k of the seeded order talks to about (p-1)/(k+1) peers, so one
    // rank talks to everyone, a few to many, most to one or two; sum ~ p ln p.
    const std::vector<int> order = seeded_permutation(p, seed);
    const int place = static_cast<int>(std::find(order.begin(), order.end(), rank) - order.begin());
    to = random_peers(rank, p, std::max(1, (p - 1) / (place + 1)), seed);
  } else if (pattern == "hot_spot") {
    if (rank != 0) to.push_back(0);  // the thesis's "overload": everyone sends to one rank
  } else if (pattern == "shift") {
    for (int k : {1, 3, 7}) {  // the core tests' sparse shifts
      if (p > k && std::find(to.begin(), to.end(), (rank + k) % p) == to.end()) to.push_back((rank + k) % p);
    }
  }
  if (p == 1 && to.empty()) to.push_back(0);  // one rank: only itself to talk to
  return to;
}

namespace {

class AlltoallvCase : public BenchCase {
 public:
  AlltoallvCase(MPI_Comm comm, const CaseOptions& options) : comm_(comm), options_(options) {
    MPI_Comm_size(comm_, &p_);
    MPI_Comm_rank(comm_, &rank_);
    sends_to_.assign(p_, 0);
    for (int peer : alltoallv_destinations(options_.variant, rank_, p_, options_.seed)) sends_to_[peer] = 1;
    receives_from_.assign(p_, 0);
    PMPI_Alltoall(sends_to_.data(), 1, MPI_INT, receives_from_.data(), 1, MPI_INT, comm_);
    long long mine = std::accumulate(sends_to_.begin(), sends_to_.end(), 0LL);
    PMPI_Allreduce(&mine, &pairs_, 1, MPI_LONG_LONG, MPI_SUM, comm_);
  }

  std::optional<SizeStep> prepare(long long c, int salt, std::string& skip_reason) override {
    const auto out = std::accumulate(sends_to_.begin(), sends_to_.end(), 0LL) * c;
    const auto in = std::accumulate(receives_from_.begin(), receives_from_.end(), 0LL) * c;
    long long most = std::max(out, in);
    PMPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_LONG_LONG, MPI_MAX, comm_);
    if (most > INT_MAX) {  // the same answer on every rank, so every rank skips
      skip_reason = "some rank's data exceeds INT_MAX bytes";
      return std::nullopt;
    }
    salt_ = salt;
    c_ = static_cast<int>(c);
    layout(sends_to_, sendcounts_, sdispls_);
    layout(receives_from_, recvcounts_, rdispls_);
    buffers_.allocate(out, in, 2.0 * static_cast<double>(pairs_) * static_cast<double>(c), options_);
    auto& send = buffers_.send_bytes();
    if (!send.empty()) {
      for (int peer = 0; peer < p_; ++peer) {
        for (int i = 0; i < sendcounts_[peer]; ++i) send[sdispls_[peer] + i] = pattern_byte(rank_, peer, i, salt);
      }
    }
    const long long total = pairs_ * c;  // over all ranks
    return SizeStep{c, total, total / (static_cast<long long>(p_) * p_)};
  }

  int call_native() override {
    return PMPI_Alltoallv(buffers_.send(), sendcounts_.data(), sdispls_.data(), MPI_BYTE, buffers_.recv(),
                          recvcounts_.data(), rdispls_.data(), MPI_BYTE, comm_);
  }

  int call(const AlgorithmChoice& choice, CommContext& context) override {
    return run_call(arguments(), choice, context);
  }

  int start_native(MPI_Request* request) override {
    return PMPI_Ialltoallv(buffers_.send(), sendcounts_.data(), sdispls_.data(), MPI_BYTE, buffers_.recv(),
                           recvcounts_.data(), rdispls_.data(), MPI_BYTE, comm_, request);
  }

  int call_layout(CommContext& context, LayoutStorage& storage, CallLayout& layout) override {
    return make_layout(arguments(), context.size(), context.rank(), storage, layout);
  }

  bool native_result_expected() const override {
    const auto& recv = buffers_.recv_bytes();
    for (int source = 0; source < p_; ++source) {
      for (int i = 0; i < recvcounts_[source]; ++i) {
        if (recv[rdispls_[source] + i] != pattern_byte(source, rank_, i, salt_)) return false;
      }
    }
    return true;
  }

  std::vector<long long> sent_bytes() const override { return {sendcounts_.begin(), sendcounts_.end()}; }  // MPI_BYTE
  std::vector<long long> received_bytes() const override { return {recvcounts_.begin(), recvcounts_.end()}; }

 private:
  // The call's arguments, as the shim's executor takes them.
  AlltoallvCall arguments() {
    return {buffers_.send(), sendcounts_.data(), sdispls_.data(), MPI_BYTE,
            buffers_.recv(), recvcounts_.data(), rdispls_.data(), MPI_BYTE};
  }

  // Counts c for the marked peers, packed in peer order.
  void layout(const std::vector<int>& marked, std::vector<int>& counts, std::vector<int>& displs) const {
    counts.assign(p_, 0);
    displs.assign(p_, 0);
    int at = 0;
    for (int peer = 0; peer < p_; ++peer) {
      counts[peer] = marked[peer] ? c_ : 0;
      displs[peer] = at;
      at += counts[peer];
    }
  }

  MPI_Comm comm_;
  const CaseOptions& options_;
  int p_ = 0, rank_ = 0, salt_ = 0, c_ = 0;
  std::vector<int> sends_to_, receives_from_;  // 0/1 per peer
  long long pairs_ = 0;                        // sending pairs over all ranks
  std::vector<int> sendcounts_, sdispls_, recvcounts_, rdispls_;
};

}  // namespace

CaseInfo alltoallv_case() {
  return {Collective::alltoallv, "--pattern", patterns, "bytes per sending pair; total: bytes over all ranks",
          [](MPI_Comm comm, const CaseOptions& options) { return std::make_unique<AlltoallvCase>(comm, options); }};
}

}  // namespace collshim::bench
