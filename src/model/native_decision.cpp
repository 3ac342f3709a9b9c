#include "model/native_decision.hpp"

#include <array>
#include <climits>
#include <stdexcept>

#include "algorithms/algorithm_spec.hpp"
#include "algorithms/registry.hpp"
#include "model/mpich_recursive_doubling.hpp"

namespace collshim::model {

namespace {

enum class LibraryAlgorithm { two_proc, recursive_doubling, bruck, ring, neighbor_exchange };

// Open MPI's fixed Allgather rules: per band of process counts, the algorithm for per-rank sizes
// below each threshold (the last threshold is unbounded). Thresholds as in the source, in bytes.
struct SizeBand {
  long long below_bytes;
  LibraryAlgorithm algorithm;
};
struct ProcsBand {
  int below_procs;
  std::vector<SizeBand> sizes;
};

const std::vector<ProcsBand>& ompi_allgather_bands() {
  using enum LibraryAlgorithm;
  constexpr long long any = LLONG_MAX;
  static const std::vector<ProcsBand> bands{
      {32, {{any, recursive_doubling}}},
      {64, {{1024, recursive_doubling}, {65536, neighbor_exchange}, {any, ring}}},
      {128, {{512, recursive_doubling}, {65536, neighbor_exchange}, {any, ring}}},
      {256,
       {{512, recursive_doubling}, {131072, neighbor_exchange}, {524288, ring}, {1048576, neighbor_exchange}, {any, ring}}},
      {512,
       {{32, recursive_doubling},
        {128, bruck},
        {1024, recursive_doubling},
        {131072, neighbor_exchange},
        {524288, ring},
        {1048576, neighbor_exchange},
        {any, ring}}},
      {1024, {{64, recursive_doubling}, {256, bruck}, {2048, recursive_doubling}, {any, neighbor_exchange}}},
      {2048,
       {{4, recursive_doubling},
        {8, bruck},
        {16, recursive_doubling},
        {32, bruck},
        {256, recursive_doubling},
        {512, bruck},
        {4096, recursive_doubling},
        {any, neighbor_exchange}}},
      {4096, {{32, bruck}, {128, recursive_doubling}, {512, bruck}, {4096, recursive_doubling}, {any, neighbor_exchange}}},
      {INT_MAX,
       {{2, recursive_doubling},
        {8, bruck},
        {16, recursive_doubling},
        {512, bruck},
        {4096, recursive_doubling},
        {any, neighbor_exchange}}},
  };
  return bands;
}

LibraryAlgorithm ompi_allgather(int p, long long bytes) {
  if (p == 2) return LibraryAlgorithm::two_proc;
  for (const ProcsBand& band : ompi_allgather_bands()) {
    if (p >= band.below_procs) continue;
    for (const SizeBand& size : band.sizes) {
      if (bytes < size.below_bytes) return size.algorithm;
    }
  }
  return LibraryAlgorithm::ring;  // not reached: every band ends unbounded
}

// MPICH: recursive doubling for power-of-two p below 512 KiB in all, Bruck up to 80 KiB in all,
// ring beyond.
LibraryAlgorithm mpich_allgather(int p, long long bytes) {
  const bool power_of_two = (p & (p - 1)) == 0;
  const long long total = bytes * p;
  if (power_of_two && total < 524288) return LibraryAlgorithm::recursive_doubling;
  if (total <= 81920) return LibraryAlgorithm::bruck;
  return LibraryAlgorithm::ring;
}

NativeDecision allgather_decision(LibraryAlgorithm algorithm, int p) {
  const bool power_of_two = (p & (p - 1)) == 0;
  switch (algorithm) {
    case LibraryAlgorithm::two_proc: return {"two_proc", Collective::allgather, "ring", ""};  // one exchange
    case LibraryAlgorithm::bruck: return {"bruck", Collective::allgather, "bruck", ""};
    // SMPI's allgather__ring (both selectors'): p − 1 sendrecvs of the own block, to rank + i from rank − i.
    case LibraryAlgorithm::ring: return {"ring (a shift exchange)", Collective::alltoall, "pairwise", ""};
    case LibraryAlgorithm::neighbor_exchange:
      // It switches to that "ring" at odd p.
      if (p % 2 != 0) return {"neighbor_exchange (ring at odd p)", Collective::alltoall, "pairwise", ""};
      return {"neighbor_exchange", Collective::allgather, "neighbor_exchange", ""};
    case LibraryAlgorithm::recursive_doubling:
      // At a power of two MPICH's schedule is collshim's (its tree steps are empty), which has a
      // rank symmetry the model can use.
      if (power_of_two) return {"recursive_doubling", Collective::allgather, "recursive_doubling", ""};
      return {"recursive_doubling", Collective::allgather, std::string(mpich_recursive_doubling_stand_in), ""};
  }
  return {};
}

constexpr std::array<std::string_view, 2> library_names{"ompi", "mpich"};

}  // namespace

std::optional<NativeLibrary> parse_native_library(std::string_view name) {
  for (std::size_t i = 0; i < library_names.size(); ++i) {
    if (library_names[i] == name) return static_cast<NativeLibrary>(i);
  }
  return std::nullopt;
}

std::string_view native_library_name(NativeLibrary library) { return library_names[static_cast<std::size_t>(library)]; }

std::vector<std::string_view> native_library_names() { return {library_names.begin(), library_names.end()}; }

std::string native_label(NativeLibrary library) { return "native:" + std::string(native_library_name(library)); }

NativeStandIn native_stand_in(const NativeDecision& decision, const std::vector<int>& node_of_rank) {
  const int p = static_cast<int>(node_of_rank.size());
  if (decision.stand_in == mpich_recursive_doubling_stand_in)
    return {[p](int rank) { return lower_block_schedule(mpich_recursive_doubling_schedule(p, rank), rank); }, {}};
  const SpecParseResult parsed = parse_algorithm_spec(decision.stand_in, decision.costed_as);
  if (!parsed.choice) throw std::logic_error("native stand-in '" + decision.stand_in + "': " + parsed.error);
  return {[choice = *parsed.choice, node_of_rank](int rank) { return generate_schedule(choice, node_of_rank, rank); },
          rank_symmetry(*parsed.choice, node_of_rank)};
}

NativeDecision native_decision(NativeLibrary library, Collective collective, int p, long long bytes) {
  if (collective != Collective::allgather)
    return {"", collective, "", "only the libraries' Allgather decisions are modelled, not " + std::string(collective_info(collective).name) + "'s"};
  const LibraryAlgorithm algorithm = library == NativeLibrary::ompi ? ompi_allgather(p, bytes) : mpich_allgather(p, bytes);
  return allgather_decision(algorithm, p);
}

}  // namespace collshim::model
