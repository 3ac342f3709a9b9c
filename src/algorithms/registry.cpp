#include "algorithms/registry.hpp"

#include <algorithm>

#include "algorithms/alltoallv_algorithms.hpp"
#include "algorithms/grid_routing.hpp"
#include "algorithms/schedules.hpp"

namespace collshim {

using enum Collective;

namespace {

ParamSpec grid_dims_param() {
  return ParamSpec{"dims", "an integer from 2 to " + std::to_string(grid_max_dims) + ", or hypercube", "2",
                   [](std::string_view value) { return parse_grid_dims(value).has_value(); }};
}

}  // namespace

std::string_view collective_name(Collective collective) {
  switch (collective) {
    case allgather: return "allgather";
    case allgatherv: return "allgatherv";
    case alltoallv: return "alltoallv";
  }
  return "?";
}

std::string_view mpi_function_name(Collective collective) {
  switch (collective) {
    case allgather: return "MPI_Allgather";
    case allgatherv: return "MPI_Allgatherv";
    case alltoallv: return "MPI_Alltoallv";
  }
  return "?";
}

bool Algorithm::supports(Collective collective) const {
  return std::find(collectives.begin(), collectives.end(), collective) != collectives.end();
}

const std::vector<Algorithm>& algorithms() {
  static const std::vector<Algorithm> table = [] {
    std::vector<Algorithm> list;
    list.push_back({.name = "native",
                    .summary = "pass the call to the MPI library unchanged",
                    .collectives = {allgather, allgatherv, alltoallv},
                    .passes_through = true});
    list.push_back({.name = "ring",
                    .summary = "classic ring: p-1 steps, neighbour traffic only",
                    .collectives = {allgather, allgatherv},
                    .make_schedule = ring_schedule});
    list.push_back({.name = "linear",
                    .summary = "every Irecv and Isend posted at once, one Waitall",
                    .collectives = {alltoallv},
                    .run_alltoallv = run_linear_alltoallv});
    list.push_back({.name = "pairwise",
                    .summary = "p-1 steps; in step k send to rank+k, receive from rank-k",
                    .collectives = {alltoallv},
                    .run_alltoallv = run_pairwise_alltoallv});
    // Eligible for every p: shapes that do not fit p get holes (grid_routing.hpp).
    list.push_back({.name = "grid",
                    .summary = "k-dimensional grid indirection: about sum(d_j - 1) start-ups instead of p-1, "
                               "each byte forwarded up to k times",
                    .collectives = {alltoallv},
                    .params = {grid_dims_param()},
                    .run_alltoallv = run_grid_alltoallv});
    return list;
  }();
  return table;
}

const Algorithm* find_algorithm(std::string_view name) {
  const auto& table = algorithms();
  const auto found = std::find_if(table.begin(), table.end(), [&](const Algorithm& a) { return a.name == name; });
  return found == table.end() ? nullptr : &*found;
}

std::string algorithm_names(Collective collective) {
  std::string names;
  for (const Algorithm& algorithm : algorithms()) {
    if (!algorithm.supports(collective)) continue;
    if (!names.empty()) names += ", ";
    names += algorithm.name;
  }
  return names;
}

}  // namespace collshim
