#include "model/native_decision.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <climits>
#include <map>
#include <stdexcept>

#include "algorithms/algorithm_spec.hpp"
#include "algorithms/registry.hpp"
#include "model/library_alltoall.hpp"
#include "model/mpich_recursive_doubling.hpp"

namespace collshim::model {

namespace {

enum class LibraryAlgorithm {
  two_proc,
  recursive_doubling,
  bruck,
  ring,
  neighbor_exchange,
  two_level,         // MVAPICH2's node-aware Allgather (allgather__mvapich2_smp): no stand-in yet
  gather_bcast,      // Intel MPI's topology-aware gather and broadcast (allgather__GB): no stand-in yet
  not_implemented,   // a function SMPI's MVAPICH2 table names but does not implement
};

// Open MPI's fixed rules (coll/tuned's *_intra_dec_fixed): per band of process counts (the last
// unbounded), the algorithm for sizes below each threshold (the last unbounded). Thresholds as in
// the source, in bytes.
template <typename Algorithm>
struct ProcsBand {
  int below_procs;
  std::vector<std::pair<long long, Algorithm>> below_bytes;
};

template <typename Algorithm>
Algorithm fixed_rule(const std::vector<ProcsBand<Algorithm>>& bands, int p, long long bytes) {
  const auto& band = *std::ranges::find_if(bands, [p](const auto& b) { return p < b.below_procs; });
  return std::ranges::find_if(band.below_bytes, [bytes](const auto& size) { return bytes < size.first; })->second;
}

constexpr long long any_size = LLONG_MAX;

bool power_of_two(int p) { return std::has_single_bit(static_cast<unsigned>(p)); }

// Open MPI's Allgather rules.
const std::vector<ProcsBand<LibraryAlgorithm>>& ompi_allgather_bands() {
  using enum LibraryAlgorithm;
  constexpr long long any = any_size;
  static const std::vector<ProcsBand<LibraryAlgorithm>> bands{
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
  return p == 2 ? LibraryAlgorithm::two_proc : fixed_rule(ompi_allgather_bands(), p, bytes);
}

// MPICH: recursive doubling for power-of-two p below 512 KiB in all, Bruck up to 80 KiB in all,
// ring beyond.
LibraryAlgorithm mpich_allgather(int p, long long bytes) {
  const long long total = bytes * p;
  if (power_of_two(p) && total < 524288) return LibraryAlgorithm::recursive_doubling;
  if (total <= 81920) return LibraryAlgorithm::bruck;
  return LibraryAlgorithm::ring;
}

// MVAPICH2's tables (SMPI's "stampede" tables): per band of process counts (the first whose count
// is at least p, else the last), an entry per size up to each threshold (inclusive; the last
// unbounded).
template <typename Entry>
struct Mvapich2Band {
  int up_to_procs;
  std::vector<Entry> sizes;  // each with its up_to_bytes
};
template <typename Entry>
const Entry& mvapich2_entry(const std::vector<Mvapich2Band<Entry>>& bands, int p, long long bytes) {
  const auto band = std::ranges::find_if(bands, [p](const auto& b) { return p <= b.up_to_procs; });
  const auto& sizes = (band != bands.end() ? *band : bands.back()).sizes;
  return *std::ranges::find_if(sizes, [bytes](const Entry& e) { return bytes <= e.up_to_bytes; });
}

// Its Allgather tables, per ranks-per-node configuration (1, 2, 16; others take the first): the
// algorithm and whether that cell runs the two-level algorithm instead.
struct Mvapich2Size {
  long long up_to_bytes;
  LibraryAlgorithm algorithm;
  bool two_level;
};
struct Mvapich2Table {
  int ranks_per_node;
  std::vector<Mvapich2Band<Mvapich2Size>> bands;
};

const std::vector<Mvapich2Table>& mvapich2_allgather_tables() {
  using enum LibraryAlgorithm;
  constexpr long long any = LLONG_MAX;
  static const std::vector<Mvapich2Table> tables{
      {1,
       {{2, {{any, ring, false}}},
        {4, {{262144, recursive_doubling, false}, {any, ring, false}}},
        {8, {{131072, recursive_doubling, false}, {any, ring, false}}},
        {16, {{131072, recursive_doubling, false}, {any, ring, false}}},
        {32, {{65536, recursive_doubling, false}, {any, ring, false}}},
        {64, {{32768, recursive_doubling, false}, {any, ring, false}}}}},
      {2,
       {{4, {{524288, recursive_doubling, false}, {any, ring, false}}},
        {8, {{32768, recursive_doubling, false}, {any, ring, true}}},
        {16, {{16384, recursive_doubling, false}, {any, ring, true}}},
        {32, {{65536, recursive_doubling, true}, {any, ring, true}}},
        {64, {{32768, recursive_doubling, true}, {any, ring, true}}},
        {128, {{65536, recursive_doubling, true}, {any, ring, true}}}}},
      {16,
       {{16, {{1024, recursive_doubling, false}, {any, ring, false}}},
        {32, {{1024, not_implemented, false}, {any, ring, false}}},
        {64, {{1024, not_implemented, false}, {any, ring, false}}},
        {128, {{1024, not_implemented, false}, {any, ring, false}}},
        {256, {{1024, not_implemented, false}, {any, ring, false}}},
        {512, {{1024, not_implemented, false}, {any, ring, false}}}}},
  };
  return tables;
}

LibraryAlgorithm mvapich2_allgather(int p, long long bytes, const LibraryPlacement& placement) {
  const auto& tables = mvapich2_allgather_tables();
  const auto own = std::ranges::find(tables, placement.ranks_per_node, &Mvapich2Table::ranks_per_node);
  const bool configured = own != tables.end();  // MVAPICH2's partial_sub_ok
  const Mvapich2Table& table = configured ? *own : tables.front();
  const Mvapich2Size& size = mvapich2_entry(table.bands, p, bytes);
  if (!size.two_level) return size.algorithm;
  if (!configured) return LibraryAlgorithm::recursive_doubling;
  // Node-aware where each node's ranks are consecutive, otherwise MPICH's decision.
  return placement.blocked ? LibraryAlgorithm::two_level : mpich_allgather(p, bytes);
}

// Intel MPI's Allgather table (SMPI's, from the Intel MPI reference manual): per ranks per node (1, 2,
// 4, 8, 16; others take 1's), per band of process counts (the first whose count is at least p), the
// algorithm for per-rank sizes below each threshold: 1 recursive doubling, 2 Bruck, 3 ring, 4 gather
// and broadcast.
struct ImpiBand {
  int up_to_procs;
  std::vector<std::pair<long long, int>> below_bytes;  // (threshold, algorithm number)
};
struct ImpiTable {
  int ranks_per_node;
  std::vector<ImpiBand> bands;
};

const std::vector<ImpiTable>& impi_allgather_tables() {
  constexpr int any = INT_MAX;
  static const std::vector<ImpiTable> tables{
      {1,
       {{4, {{1, 4}, {384, 1}, {1533, 4}, {3296, 1}, {10763, 4}, {31816, 3}, {193343, 4}, {405857, 3}, {597626, 4},
             {1844323, 3}, {any, 4}}},
        {8, {{12, 4}, {46, 1}, {205, 4}, {3422, 2}, {4200, 4}, {8748, 1}, {24080, 3}, {33244, 4}, {371159, 1}, {any, 3}}},
        {16, {{3, 4}, {53, 1}, {100, 4}, {170, 1}, {6077, 4}, {127644, 1}, {143741, 4}, {any, 3}}},
        {any, {{184, 1}, {320, 4}, {759, 1}, {1219, 4}, {2633, 1}, {8259, 4}, {123678, 1}, {160801, 4}, {284341, 1},
               {any, 4}}}}},
      {2,
       {{8, {{490, 1}, {558, 2}, {2319, 1}, {46227, 3}, {2215101, 1}, {any, 3}}},
        {16, {{1005, 1}, {1042, 2}, {2059, 1}, {any, 3}}},
        {any, {{2454, 1}, {any, 3}}}}},
      {4, {{8, {{2861, 1}, {any, 3}}}, {any, {{605, 1}, {any, 3}}}}},
      {8,
       {{16, {{66, 1}, {213, 4}, {514, 1}, {any, 3}}},
        {32, {{91, 1}, {213, 4}, {514, 1}, {any, 3}}},
        {64, {{71, 1}, {213, 4}, {514, 1}, {any, 3}}},
        {128, {{305, 1}, {any, 3}}},
        {any, {{213, 1}, {any, 3}}}}},
      {16, {{8, {{2861, 1}, {any, 3}}}, {any, {{605, 1}, {any, 3}}}}},
  };
  return tables;
}

// The algorithm number Intel MPI's tables give (IMPI_COLL_SELECT): the table of the placement's ranks
// per node (else the first), its first band of at least p processes (else the last), the first
// threshold above the size (else the last).
int impi_algorithm(const std::vector<ImpiTable>& tables, int p, long long bytes, const LibraryPlacement& placement) {
  const auto own = std::ranges::find(tables, placement.ranks_per_node, &ImpiTable::ranks_per_node);
  const ImpiTable& table = own != tables.end() ? *own : tables.front();
  const auto band = std::ranges::find_if(table.bands, [p](const ImpiBand& b) { return p <= b.up_to_procs; });
  const auto& sizes = (band != table.bands.end() ? *band : table.bands.back()).below_bytes;
  const auto size = std::ranges::find_if(sizes, [bytes](const auto& s) { return bytes < s.first; });
  return size != sizes.end() ? size->second : sizes.back().second;
}

LibraryAlgorithm impi_allgather(int p, long long bytes, const LibraryPlacement& placement) {
  using enum LibraryAlgorithm;
  switch (impi_algorithm(impi_allgather_tables(), p, bytes, placement)) {
    case 1: return recursive_doubling;
    case 2: return bruck;
    case 3: return ring;
    default: return gather_bcast;
  }
}

NativeDecision allgather_decision(LibraryAlgorithm algorithm, int p) {
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
      if (power_of_two(p)) return {"recursive_doubling", Collective::allgather, "recursive_doubling", ""};
      return {"recursive_doubling", Collective::allgather, std::string(mpich_recursive_doubling_stand_in), ""};
    case LibraryAlgorithm::two_level:
      return {"two_level (allgather__mvapich2_smp)", Collective::allgather, "",
              "MVAPICH2's two-level Allgather (gather to a node leader, the leaders' Allgather, a node broadcast) has no stand-in yet"};
    case LibraryAlgorithm::gather_bcast:
      return {"gather_bcast (allgather__GB)", Collective::allgather, "",
              "Intel MPI's gather-and-broadcast Allgather has no stand-in yet"};
    case LibraryAlgorithm::not_implemented:
      return {"MPIR_Allgather_RD_Allgather_Comm_MV2", Collective::allgather, "",
              "SMPI 3.32's MVAPICH2 table names a function it does not implement (the call fails)"};
  }
  return {};
}

// Open MPI's Alltoall rules (alltoall__ompi; Open MPI 4.1's ompi_coll_tuned_alltoall_intra_dec_fixed),
// for blocks. SMPI runs its "linear_sync" and "two_proc" as basic linear.
enum class OmpiAlltoall { linear, pair, bruck };
OmpiAlltoall ompi_alltoall(int p, long long bytes) {
  using enum OmpiAlltoall;
  constexpr long long any = any_size;
  static const std::vector<ProcsBand<OmpiAlltoall>> bands{
      {8, {{524288, linear}, {1048576, pair}, {any, linear}}},
      {16, {{any, linear}}},
      {32, {{4, linear}, {512, bruck}, {any, linear}}},
      {64, {{512, bruck}, {any, linear}}},
      {128, {{1024, bruck}, {262144, linear}, {any, pair}}},
      {256, {{1024, bruck}, {262144, linear}, {any, pair}}},
      {512, {{1024, bruck}, {32768, linear}, {any, pair}}},
      {1024, {{512, bruck}, {262144, linear}, {any, pair}}},
      {2048, {{512, bruck}, {any, linear}}},
      {4096, {{1024, bruck}, {any, linear}}},
      {INT_MAX, {{2048, bruck}, {any, linear}}},
  };
  static const std::vector<ProcsBand<OmpiAlltoall>> two_procs{
      {INT_MAX, {{2, pair}, {4, linear}, {16, pair}, {64, linear}, {256, pair}, {4096, linear}, {32768, pair},
                 {1048576, linear}, {any, pair}}}};
  return fixed_rule(p == 2 ? two_procs : bands, p, bytes);
}

NativeDecision xor_pair_decision(int p) {
  if (power_of_two(p)) return {"pair", Collective::alltoall, std::string(xor_pairwise_alltoall_stand_in), ""};
  return {"pair", Collective::alltoall, "", "SMPI 3.32's alltoall__pair throws at a p that is not a power of two (the call fails)"};
}

// MVAPICH2's Alltoall table (alltoall__mvapich2 reads its first, one rank per node, whatever the
// placement), per-pair sizes.
enum class Mvapich2Alltoall { recursive_doubling, bruck, scatter_dest, pair };
struct Mvapich2AlltoallSize {
  long long up_to_bytes;
  Mvapich2Alltoall algorithm;
};
Mvapich2Alltoall mvapich2_alltoall(int p, long long bytes) {
  using enum Mvapich2Alltoall;
  constexpr long long any = any_size;
  static const std::vector<Mvapich2Band<Mvapich2AlltoallSize>> bands{
      {2, {{any, pair}}},
      {4, {{262144, scatter_dest}, {any, pair}}},
      {8, {{8, recursive_doubling}, {any, scatter_dest}}},
      {16, {{64, recursive_doubling}, {512, bruck}, {any, scatter_dest}}},
      {32, {{32, recursive_doubling}, {2048, bruck}, {any, scatter_dest}}},
      {64, {{8, recursive_doubling}, {1024, bruck}, {any, scatter_dest}}},
  };
  return mvapich2_entry(bands, p, bytes).algorithm;
}

// Intel MPI's Alltoall table (SMPI's): 1 Bruck, 2 MVAPICH2's scatter-destination, 3 the pair exchange,
// 4 MVAPICH2's whole decision (SMPI's stand-in for Plum's algorithm).
const std::vector<ImpiTable>& impi_alltoall_tables() {
  constexpr int any = INT_MAX;
  static const std::vector<ImpiTable> tables{
      {1,
       {{2, {{any, 3}}},
        {4, {{0, 4}, {any, 2}}},
        {8, {{any, 2}}},
        {16, {{0, 3}, {84645, 2}, {167570, 3}, {413152, 4}, {any, 2}}},
        {32, {{61, 1}, {164, 2}, {696, 1}, {143254, 2}, {387024, 3}, {any, 2}}},
        {64, {{523, 1}, {146088, 2}, {488989, 4}, {any, 2}}},
        {any, {{270, 1}, {628, 4}, {any, 2}}}}},
      {2,
       {{4, {{1, 2}, {75, 3}, {131072, 2}, {any, 2}}},
        {8, {{709, 1}, {131072, 2}, {any, 2}}},
        {16, {{40048, 2}, {131072, 3}, {155927, 3}, {any, 4}}},
        {32, {{105, 1}, {130, 2}, {1030, 1}, {58893, 2}, {131072, 2}, {271838, 3}, {any, 2}}},
        {any, {{521, 1}, {2032, 4}, {2412, 2}, {4112, 4}, {61620, 2}, {131072, 3}, {427408, 3}, {any, 4}}}}},
      {4,
       {{8, {{512, 1}, {32768, 2}, {any, 2}}},
        {64, {{7, 1}, {199, 4}, {764, 1}, {6409, 4}, {20026, 2}, {32768, 3}, {221643, 4}, {any, 3}}},
        {any, {{262, 1}, {7592, 4}, {22871, 2}, {32768, 3}, {47538, 3}, {101559, 4}, {any, 3}}}}},
      {8,
       {{16, {{973, 1}, {5126, 4}, {16898, 2}, {32768, 4}, {65456, 4}, {any, 2}}},
        {32, {{874, 1}, {6727, 4}, {17912, 2}, {32768, 3}, {41513, 3}, {199604, 4}, {any, 3}}},
        {64, {{5, 1}, {114, 4}, {552, 1}, {8130, 4}, {32768, 3}, {34486, 3}, {160113, 4}, {any, 3}}},
        {128, {{270, 1}, {3679, 4}, {32768, 3}, {64367, 3}, {146595, 4}, {any, 3}}},
        {any, {{133, 1}, {4017, 4}, {32768, 3}, {76351, 4}, {any, 3}}}}},
      {16,
       {{32, {{963, 1}, {1818, 4}, {20007, 2}, {32768, 4}, {54296, 4}, {169735, 3}, {any, 2}}},
        {64, {{17, 1}, {42, 4}, {592, 1}, {2015, 4}, {2753, 2}, {6496, 3}, {20402, 4}, {32768, 3}, {36246, 3}, {93229, 4}, {any, 3}}},
        {128, {{18, 1}, {40, 4}, {287, 1}, {1308, 4}, {6842, 1}, {32768, 3}, {36986, 3}, {129081, 4}, {any, 3}}},
        {256, {{135, 1}, {1538, 4}, {3267, 1}, {4132, 3}, {31469, 4}, {32768, 3}, {any, 3}}},
        {any, {{66, 1}, {1637, 4}, {2626, 1}, {4842, 4}, {32768, 3}, {33963, 3}, {72978, 4}, {any, 3}}}}},
  };
  return tables;
}

// SMPI's alltoall__bruck: radix 2, the blocks whose distance has bit 2^j go to rank + 2^j in step j,
// as collshim's; costed without collshim's size headers (call_setup for natives).
NativeDecision bruck_decision() { return {"bruck", Collective::alltoall, "bruck", ""}; }

NativeDecision scatter_dest_decision() {
  return {"mvapich2_scatter_dest", Collective::alltoall, std::string(scatter_dest_alltoall_stand_in), ""};
}

NativeDecision mvapich2_alltoall_decision(int p, long long bytes) {
  switch (mvapich2_alltoall(p, bytes)) {
    // SMPI's alltoall__rdb: MPICH's recursive-doubling Allgather of the whole send buffers (p blocks
    // each), every rank then keeping its own column.
    case Mvapich2Alltoall::recursive_doubling:
      return {"rdb (a recursive-doubling Allgather of the send buffers)", Collective::allgather,
              std::string(mpich_recursive_doubling_stand_in), "", true};
    case Mvapich2Alltoall::bruck: return bruck_decision();
    case Mvapich2Alltoall::scatter_dest: return scatter_dest_decision();
    case Mvapich2Alltoall::pair: return xor_pair_decision(p);
  }
  return {};
}

NativeDecision alltoall_decision(NativeLibrary library, int p, long long bytes, const LibraryPlacement& placement) {
  switch (library) {
    case NativeLibrary::ompi:
      switch (ompi_alltoall(p, bytes)) {
        case OmpiAlltoall::linear: return {"basic_linear", Collective::alltoall, std::string(ompi_linear_alltoall_stand_in), ""};
        case OmpiAlltoall::pair: return xor_pair_decision(p);
        case OmpiAlltoall::bruck: return bruck_decision();
      }
      break;
    case NativeLibrary::mpich:  // alltoall__mpich
      if (bytes < 256 && p >= 8) return bruck_decision();
      if (bytes < 32768) return scatter_dest_decision();
      if (p % 2 != 0) return xor_pair_decision(p);
      // SMPI's alltoall__ring: in step i the block for rank + i, from rank − i: collshim's pairwise.
      return {"ring", Collective::alltoall, "pairwise", ""};
    case NativeLibrary::mvapich2: return mvapich2_alltoall_decision(p, bytes);
    case NativeLibrary::impi:
      switch (impi_algorithm(impi_alltoall_tables(), p, bytes, placement)) {
        case 1: return bruck_decision();
        case 2: return scatter_dest_decision();
        case 3: return xor_pair_decision(p);
        default: return mvapich2_alltoall_decision(p, bytes);
      }
  }
  return {};
}

// Open MPI's Allreduce rules for commutative operations (allreduce__ompi; Open MPI 4.1's
// ompi_coll_tuned_allreduce_intra_dec_fixed), for vectors, its algorithms numbered as there: 1 and 2
// reduce then broadcast, 3 recursive doubling, 4 the logical ring ("lr"), 5 the segmented ring,
// 6 Rabenseifner.
int ompi_allreduce(int p, long long bytes) {
  constexpr long long any = any_size;
  static const std::vector<ProcsBand<int>> bands{
      {4, {{8, 4}, {4096, 3}, {8192, 4}, {16384, 3}, {65536, 4}, {262144, 5}, {any, 6}}},
      {8, {{16, 4}, {8192, 3}, {any, 6}}},
      {16, {{8192, 3}, {any, 6}}},
      {32, {{64, 5}, {4096, 3}, {any, 6}}},
      {64, {{128, 5}, {any, 6}}},
      {128, {{262144, 3}, {any, 6}}},
      {256, {{131072, 2}, {262144, 3}, {any, 6}}},
      {512, {{4096, 2}, {any, 6}}},
      {2048, {{2048, 2}, {16384, 3}, {any, 6}}},
      {4096, {{2048, 2}, {4096, 5}, {16384, 3}, {any, 6}}},
      {INT_MAX, {{2048, 2}, {16384, 5}, {32768, 3}, {any, 6}}},
  };
  return fixed_rule(bands, p, bytes);
}

// The model's Allreduce vector (and the benchmark's) is int64, summed: a commutative operation.
constexpr long long allreduce_element_bytes = 8;

// SMPI's allreduce__lr (Open MPI's logical ring): collshim's ring where the vector splits into p
// equal segments; otherwise it runs reduce-then-broadcast (fewer elements than ranks) or an
// Allreduce of the selector's own for the remainder.
NativeDecision logical_ring_decision(std::string name, long long count, int p) {
  if (count >= p && count % p == 0) return {std::move(name), Collective::allreduce, "ring", ""};
  return {std::move(name), Collective::allreduce, "",
          "Open MPI's logical ring runs the selector's own Reduce and Bcast, or a nested Allreduce, where "
          "the vector does not split into p equal segments"};
}

NativeDecision recursive_doubling_allreduce(std::string name) {
  return {std::move(name), Collective::allreduce, "recursive_doubling", ""};
}

// MVAPICH2's Allreduce table, per vector size: the leaders' algorithm and whether the call runs
// two-level (a node Reduce, the leaders' Allreduce, a node Bcast). Its multicast entries run
// recursive doubling; in two levels the leaders run recursive doubling where the entry says so and
// the reduce-scatter-allgather otherwise.
enum class Mvapich2Allreduce { recursive_doubling, reduce_scatter_allgather };
struct Mvapich2AllreduceSize {
  long long up_to_bytes;
  Mvapich2Allreduce leaders;
  bool two_level;
};
const Mvapich2AllreduceSize& mvapich2_allreduce(int p, long long bytes) {
  constexpr long long any = any_size;
  constexpr auto rd = Mvapich2Allreduce::recursive_doubling, rs = Mvapich2Allreduce::reduce_scatter_allgather;
  static const std::vector<Mvapich2Band<Mvapich2AllreduceSize>> bands{
      {16, {{1024, rd, true}, {any, rs, false}}},
      {32, {{1024, rd, true}, {16384, rd, true}, {any, rs, false}}},
      {64, {{512, rd, true}, {16384, rd, true}, {any, rs, false}}},
      {128, {{512, rd, true}, {16384, rd, true}, {any, rs, false}}},
      {256, {{512, rd, true}, {16384, rd, true}, {any, rs, false}}},
      {512, {{512, rd, true}, {16384, rd, true}, {any, rs, false}}},
      {1024, {{512, rd, true}, {8192, rd, true}, {65536, rs, true}, {any, rs, false}}},
      // 64-512 B: a Reduce as the leaders' entry (not recursive doubling: reduce-scatter-allgather);
      // 512 B-4 KiB: a multicast entry (recursive doubling).
      {2048, {{64, rd, true}, {512, rs, true}, {4096, rd, true}, {any, rs, false}}},
  };
  return mvapich2_entry(bands, p, bytes);
}

// SMPI's allreduce__mvapich2_rs: MPICH's reduce-scatter-allgather (Rabenseifner), recursive doubling
// where the vector has fewer elements than the largest power of two up to p.
NativeDecision reduce_scatter_allgather_decision(std::string name, long long count, int p) {
  if (count < std::bit_floor(static_cast<unsigned>(p))) return recursive_doubling_allreduce(std::move(name) + ": recursive doubling, fewer elements than ranks");
  return {std::move(name), Collective::allreduce, "rabenseifner", ""};
}

// MVAPICH2's two-level Allreduce with one rank per node: its node phases are empty, the leaders' are all.
NativeDecision two_level_allreduce(NativeDecision leaders, const LibraryPlacement& placement) {
  if (placement.ranks_per_node == 1) {
    leaders.library_algorithm = "mvapich2_two_level (one rank per node: " + leaders.library_algorithm + " among all)";
    return leaders;
  }
  return {"mvapich2_two_level", Collective::allreduce, "",
          "MVAPICH2's two-level Allreduce (node Allreduce, leaders' recursive doubling, node broadcast) has no "
          "stand-in yet"};
}

// Intel MPI's Allreduce table (SMPI's): 1 recursive doubling, 2 Rabenseifner (allreduce__rab1, with
// the selector's own Allgather), 3 reduce-then-broadcast, 4 and 6 MVAPICH2's two-level (leaders'
// recursive doubling), 5 the SMP-aware binomial (reduce-then-broadcast with one rank per node), 7 and
// 8 Open MPI's segmented ring (its logical ring below 1 MiB segments).
const std::vector<ImpiTable>& impi_allreduce_tables() {
  constexpr int any = INT_MAX;
  static const std::vector<ImpiTable> tables{
      {1,
       {{2, {{6, 7}, {85, 1}, {192, 7}, {853, 1}, {1279, 7}, {16684, 1}, {34279, 8}, {1681224, 3}, {any, 7}}},
        {4, {{16, 7}, {47, 1}, {2062, 7}, {16699, 1}, {33627, 7}, {70732, 8}, {1300705, 3}, {any, 8}}},
        {8, {{118, 1}, {146, 4}, {16760, 1}, {36364, 6}, {136239, 8}, {315710, 7}, {3220366, 3}, {any, 8}}},
        {16, {{934, 1}, {1160, 6}, {15505, 1}, {52730, 2}, {300705, 8}, {563680, 7}, {any, 3}}},
        {any, {{5, 6}, {11, 4}, {182, 1}, {700, 6}, {1450, 4}, {11146, 1}, {25539, 6}, {37634, 4}, {93784, 6}, {817658, 2}, {any, 3}}}}},
      {2,
       {{4, {{2084, 7}, {15216, 1}, {99715, 7}, {168666, 3}, {363889, 2}, {any, 7}}},
        {8, {{14978, 1}, {66879, 2}, {179296, 8}, {304801, 3}, {704509, 7}, {any, 2}}},
        {16, {{16405, 1}, {81784, 2}, {346385, 8}, {807546, 7}, {1259854, 2}, {any, 3}}},
        {32, {{8913, 1}, {103578, 2}, {615876, 8}, {any, 2}}},
        {64, {{1000, 1}, {2249, 2}, {6029, 1}, {325357, 2}, {1470976, 8}, {2556670, 7}, {any, 3}}},
        {128, {{664, 1}, {754706, 2}, {1663862, 4}, {3269097, 2}, {any, 7}}},
        {any, {{789, 1}, {2247589, 2}, {any, 8}}}}},
      {4,
       {{4, {{5738, 1}, {197433, 2}, {593742, 7}, {any, 2}}},
        {8, {{5655, 1}, {75166, 2}, {177639, 8}, {988014, 3}, {1643869, 2}, {2494859, 8}, {any, 2}}},
        {16, {{587, 1}, {3941, 2}, {9003, 1}, {101469, 2}, {355768, 8}, {3341814, 3}, {any, 8}}},
        {32, {{795, 1}, {146567, 2}, {732118, 8}, {any, 3}}},
        {64, {{528, 1}, {221277, 2}, {1440737, 8}, {any, 3}}},
        {128, {{481, 1}, {593833, 2}, {2962021, 8}, {any, 7}}},
        {256, {{584, 1}, {any, 2}}},
        {any, {{604, 1}, {2997006, 2}, {any, 8}}}}},
      {8,
       {{8, {{2560, 1}, {114230, 6}, {288510, 8}, {664038, 2}, {1339913, 6}, {any, 4}}},
        {16, {{497, 1}, {54201, 2}, {356217, 8}, {3413609, 3}, {any, 8}}},
        {32, {{377, 1}, {109745, 2}, {716514, 8}, {3976768, 3}, {any, 8}}},
        {64, {{109, 1}, {649, 5}, {266080, 2}, {1493331, 8}, {2541403, 7}, {any, 3}}},
        {128, {{7, 1}, {751, 5}, {408808, 2}, {any, 8}}},
        {256, {{828, 5}, {909676, 2}, {any, 8}}},
        {512, {{847, 5}, {1007066, 2}, {1068775, 4}, {2803389, 2}, {any, 8}}},
        {any, {{1974, 5}, {4007876, 2}, {any, 8}}}}},
      {16,
       {{16, {{409, 1}, {768, 6}, {1365, 4}, {3071, 6}, {11299, 2}, {21746, 6}, {55629, 2}, {86065, 4}, {153867, 2}, {590560, 6}, {1448760, 2}, {any, 8}}},
        {32, {{6, 1}, {24, 5}, {86, 1}, {875, 5}, {74528, 2}, {813050, 8}, {1725981, 7}, {any, 8}}},
        {64, {{1018, 5}, {1217, 6}, {2370, 5}, {160654, 2}, {1885487, 8}, {any, 3}}},
        {128, {{2291, 5}, {434465, 2}, {3525103, 8}, {any, 7}}},
        {256, {{2189, 5}, {713154, 2}, {any, 8}}},
        {512, {{2140, 5}, {1235056, 2}, {any, 8}}},
        {any, {{2153, 5}, {2629855, 2}, {any, 8}}}}},
  };
  return tables;
}

NativeDecision allreduce_decision(NativeLibrary library, int p, long long bytes, const LibraryPlacement& placement) {
  const long long count = bytes / allreduce_element_bytes;
  switch (library) {
    case NativeLibrary::ompi:
      switch (ompi_allreduce(p, bytes)) {
        case 3: return recursive_doubling_allreduce("recursive_doubling (allreduce__rdb)");
        case 6:
          // SMPI's allreduce__rab_rdb is MPICH's Rabenseifner; at a p that is not a power of two it
          // halves count/pof2-element pieces where collshim halves groups of its p segments.
          return {"rabenseifner (allreduce__rab_rdb)", Collective::allreduce, "rabenseifner", ""};
        case 4:
        case 5:  // the segmented ring runs the logical ring below 1 MiB segments
          return logical_ring_decision("lr (allreduce__lr)", count, p);
        default:
          return {"redbcast (allreduce__redbcast)", Collective::allreduce, "",
                  "Open MPI's reduce-then-broadcast runs the selector's own Reduce and Bcast, which are not modelled"};
      }
    case NativeLibrary::mpich:
      // SMPI's MPICH runs MVAPICH2's two-level Allreduce for commutative operations; with one rank per
      // node its node phases are empty and what is left is the leaders' recursive doubling.
      return two_level_allreduce(recursive_doubling_allreduce("allreduce__rdb"), placement);
    case NativeLibrary::mvapich2: {
      const Mvapich2AllreduceSize& entry = mvapich2_allreduce(p, bytes);
      NativeDecision decision = entry.leaders == Mvapich2Allreduce::recursive_doubling
                                    ? recursive_doubling_allreduce("allreduce__rdb")
                                    : reduce_scatter_allgather_decision("allreduce__mvapich2_rs", count, p);
      return entry.two_level ? two_level_allreduce(std::move(decision), placement) : decision;
    }
    case NativeLibrary::impi:
      switch (impi_algorithm(impi_allreduce_tables(), p, bytes, placement)) {
        case 1: return recursive_doubling_allreduce("recursive_doubling (allreduce__rdb)");
        case 4:
        case 6: return two_level_allreduce(recursive_doubling_allreduce("allreduce__rdb"), placement);
        case 7:
        case 8:
          if (count < static_cast<long long>(p) * ((1 << 20) / allreduce_element_bytes))
            return logical_ring_decision("ompi_ring_segmented (allreduce__lr)", count, p);
          return {"ompi_ring_segmented", Collective::allreduce, "", "Open MPI's segmented ring has no stand-in yet"};
        case 2:
          if (!power_of_two(p)) return {"rab1", Collective::allreduce, "", "SMPI 3.32's allreduce__rab1 throws at a p that is not a power of two (the call fails)"};
          return {"rab1", Collective::allreduce, "", "allreduce__rab1 runs the selector's own Allgather, which is not modelled there"};
        case 3: return {"redbcast", Collective::allreduce, "", "reduce-then-broadcast runs the selector's own Reduce and Bcast, which are not modelled"};
        default: return {"smp_binomial", Collective::allreduce, "", "the SMP-aware binomial Allreduce (a Reduce and a Bcast over nodes) has no stand-in yet"};
      }
  }
  return {};
}

constexpr std::array<std::string_view, 4> library_names{"ompi", "mpich", "mvapich2", "impi"};

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

namespace {

// The stand-ins that are schedules of the model's own, with the rank symmetry each has at p.
struct LibrarySchedule {
  std::string_view name;
  Schedule (*schedule)(int p, int rank);
  RankSymmetry (*symmetry)(int p);
};
constexpr std::array<LibrarySchedule, 4> library_schedules{{
    {mpich_recursive_doubling_stand_in,
     [](int p, int rank) { return lower_block_schedule(mpich_recursive_doubling_schedule(p, rank), rank); },
     [](int) { return RankSymmetry{}; }},
    {ompi_linear_alltoall_stand_in, ompi_linear_alltoall_schedule, ompi_linear_alltoall_symmetry},
    {xor_pairwise_alltoall_stand_in, xor_pairwise_alltoall_schedule, xor_pairwise_alltoall_symmetry},
    {scatter_dest_alltoall_stand_in, scatter_dest_alltoall_schedule, scattered_alltoall_symmetry},
}};

const LibrarySchedule* find_library_schedule(std::string_view stand_in) {
  const auto found = std::ranges::find(library_schedules, stand_in, &LibrarySchedule::name);
  return found != library_schedules.end() ? &*found : nullptr;
}

}  // namespace

bool is_library_schedule(std::string_view stand_in) { return find_library_schedule(stand_in) != nullptr; }

NativeStandIn native_stand_in(const NativeDecision& decision, const std::vector<int>& node_of_rank) {
  const int p = static_cast<int>(node_of_rank.size());
  if (const LibrarySchedule* own = find_library_schedule(decision.stand_in))
    return {[p, schedule = own->schedule](int rank) { return schedule(p, rank); }, own->symmetry(p)};
  const SpecParseResult parsed = parse_algorithm_spec(decision.stand_in, decision.costed_as);
  if (!parsed.choice) throw std::logic_error("native stand-in '" + decision.stand_in + "': " + parsed.error);
  return {[choice = *parsed.choice, node_of_rank](int rank) { return generate_schedule(choice, node_of_rank, rank); },
          rank_symmetry(*parsed.choice, node_of_rank)};
}

LibraryPlacement library_placement(const std::vector<int>& node_of_rank) {
  std::map<int, int> ranks_on;
  bool blocked = true;
  for (std::size_t r = 0; r < node_of_rank.size(); ++r) {
    // A node seen before, but not on the previous rank: its ranks are not consecutive.
    if (r > 0 && node_of_rank[r] != node_of_rank[r - 1] && ranks_on.contains(node_of_rank[r])) blocked = false;
    ++ranks_on[node_of_rank[r]];
  }
  const bool uniform =
      std::ranges::all_of(ranks_on, [&](const auto& node) { return node.second == ranks_on.begin()->second; });
  return {uniform && !ranks_on.empty() ? ranks_on.begin()->second : 1, blocked};
}

NativeDecision native_decision(NativeLibrary library, Collective collective, int p, long long bytes,
                               const LibraryPlacement& placement) {
  if (collective == Collective::alltoall) return alltoall_decision(library, p, bytes, placement);
  if (collective == Collective::allreduce) return allreduce_decision(library, p, bytes, placement);
  if (collective != Collective::allgather)
    return {"", collective, "", "only the libraries' Allgather, Alltoall and Allreduce decisions are modelled, not " + std::string(collective_info(collective).name) + "'s"};
  switch (library) {
    case NativeLibrary::ompi: return allgather_decision(ompi_allgather(p, bytes), p);
    case NativeLibrary::mpich: return allgather_decision(mpich_allgather(p, bytes), p);
    case NativeLibrary::mvapich2: return allgather_decision(mvapich2_allgather(p, bytes, placement), p);
    case NativeLibrary::impi: return allgather_decision(impi_allgather(p, bytes, placement), p);
  }
  return {};
}

}  // namespace collshim::model
