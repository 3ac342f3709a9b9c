#include "model/library/native_decision.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <stdexcept>

#include "algorithms/engine/algorithm_spec.hpp"
#include "algorithms/engine/registry.hpp"
#include "model/library/library_alltoall.hpp"
#include "model/library/mpich_recursive_doubling.hpp"

namespace collshim::model {

std::string native_label(std::string_view name) { return "native:" + std::string(name); }

namespace {

// The stand-ins that are schedules of the model's own, with the rank symmetry each has at p, and
// their profiles from counts where a symmetry does not serve.
struct LibrarySchedule {
  std::string_view name;
  Schedule (*schedule)(int p, int rank);
  RankSymmetry (*symmetry)(int p);
  std::optional<DirectOrder> direct = std::nullopt;
  int throttle = 0;                     // the scattered order's pairs per round
  std::string_view uniform_equivalent;  // NativeStandIn's
};
constexpr std::array<LibrarySchedule, 6> library_schedules{{
    {mpich_recursive_doubling_stand_in,
     [](int p, int rank) { return lower_block_schedule(mpich_recursive_doubling_schedule(p, rank), rank); },
     [](int) { return RankSymmetry{}; }},
    {ompi_linear_alltoall_stand_in, ompi_linear_alltoall_schedule, ompi_linear_alltoall_symmetry},
    // Rank order, no rank symmetry. Over uniform blocks it costs as collshim's `linear` (from the next
    // rank up) does: equal in all 490 cells compared at p = 730-1024 (five platforms, four
    // placements, 1 B-1 MiB; docs/cost-model.md); 0.06% apart with a partial last node (unit test).
    {ompi_linear_alltoallv_stand_in, ompi_linear_alltoallv_schedule, [](int) { return RankSymmetry{}; },
     DirectOrder::rank_order, 0, "linear"},
    {xor_pairwise_alltoall_stand_in, xor_pairwise_alltoall_schedule, xor_pairwise_alltoall_symmetry,
     DirectOrder::exclusive_or},
    {scatter_dest_alltoall_stand_in, scatter_dest_alltoall_schedule, scattered_alltoall_symmetry,
     DirectOrder::scattered, scatter_dest_throttle},
    {mpich_scattered_alltoall_stand_in, mpich_scattered_alltoall_schedule, scattered_alltoall_symmetry,
     DirectOrder::scattered, mpich_alltoall_throttle},
}};

const LibrarySchedule* find_library_schedule(std::string_view stand_in) {
  const auto found = std::ranges::find(library_schedules, stand_in, &LibrarySchedule::name);
  return found != library_schedules.end() ? &*found : nullptr;
}

}  // namespace

bool is_library_schedule(std::string_view stand_in) { return find_library_schedule(stand_in) != nullptr; }

NativeStandIn native_stand_in(const NativeDecision& decision, const std::vector<int>& node_of_rank) {
  const int p = static_cast<int>(node_of_rank.size());
  const bool empty = decision.sends_empty_messages;
  if (const LibrarySchedule* own = find_library_schedule(decision.stand_in)) {
    NativeStandIn stand_in{[p, schedule = own->schedule](int rank) { return schedule(p, rank); },
                           own->symmetry(p),
                           {},
                           own->uniform_equivalent};
    if (own->direct) {
      stand_in.counted = [p, order = *own->direct, throttle = own->throttle, empty](const AlltoallBlocks& blocks,
                                                                                    const std::vector<int>& ranks) {
        return direct_alltoall_profiles(order, p, blocks, empty, throttle, ranks);
      };
    }
    return stand_in;
  }
  const SpecParseResult parsed = parse_algorithm_spec(decision.stand_in, decision.costed_as);
  if (!parsed.choice) throw std::logic_error("native stand-in '" + decision.stand_in + "': " + parsed.error);
  const AlgorithmChoice& choice = *parsed.choice;
  return {[choice, node_of_rank](int rank) { return generate_schedule(choice, node_of_rank, rank); },
          rank_symmetry(choice, node_of_rank),
          [choice, node_of_rank, empty](const AlltoallBlocks& blocks, const std::vector<int>& ranks) {
            return counted_alltoall_profiles(choice, node_of_rank, blocks, empty, ranks);
          }};
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
  return {uniform && !ranks_on.empty() ? ranks_on.begin()->second : 1, blocked, static_cast<int>(ranks_on.size())};
}

}  // namespace collshim::model
