#pragma once
// The collectives the shim intercepts, declared once. The entry points, the selector, the rule
// parser, the tools and the report derive every name, variable and per-collective array from this
// table. Header-only and free of MPI, so collshim-run (which links no MPI) reads it too.
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace collshim {

enum class Collective {
  allgather = 0,
  allgatherv = 1,
  alltoallv = 2,
  allreduce = 3,
  gatherv = 4,
  scatterv = 5,
  alltoall = 6
};

// The arguments' shape; decides which algorithms can serve a collective.
enum class CallShape {
  allgather_like,  // every rank contributes one block and receives all (the executor's block model)
  alltoallv_like,  // every rank sends a block to each rank
  reduction,       // every rank contributes a vector and receives the reduction of all (block_bytes: the vector)
  rooted,          // one rank (the call's root) receives every rank's block (gather) or sends one to each (scatter)
};

// How the ranks come to the same size (block_bytes) so that all of them take the same decision.
enum class SizeAgreement {
  global,  // every rank computes the same size from its own arguments (Allgather, Allgatherv)
  local,   // the size is rank-local (Alltoallv): one 8-byte Allreduce when some rule tests block_bytes
  root,    // only the root knows every count (Gatherv, Scatterv): the same sum, of the root's total alone,
           // when some rule tests block_bytes
};

struct CollectiveInfo {
  Collective collective;
  std::string_view name;          // "allgather": rule tables, --collective, --force, the report
  std::string_view mpi_function;  // "MPI_Allgather": log lines
  const char* forcing_variable;   // "COLLSHIM_ALLGATHER"; a C string for getenv
  CallShape shape;
  SizeAgreement size_agreement;
};

// In enum order (checked below): a collective indexes the table.
inline constexpr std::array collectives{
    CollectiveInfo{Collective::allgather, "allgather", "MPI_Allgather", "COLLSHIM_ALLGATHER", CallShape::allgather_like,
                   SizeAgreement::global},
    CollectiveInfo{Collective::allgatherv, "allgatherv", "MPI_Allgatherv", "COLLSHIM_ALLGATHERV",
                   CallShape::allgather_like, SizeAgreement::global},
    CollectiveInfo{Collective::alltoallv, "alltoallv", "MPI_Alltoallv", "COLLSHIM_ALLTOALLV", CallShape::alltoallv_like,
                   SizeAgreement::local},
    CollectiveInfo{Collective::allreduce, "allreduce", "MPI_Allreduce", "COLLSHIM_ALLREDUCE", CallShape::reduction,
                   SizeAgreement::global},
    CollectiveInfo{Collective::gatherv, "gatherv", "MPI_Gatherv", "COLLSHIM_GATHERV", CallShape::rooted,
                   SizeAgreement::root},
    CollectiveInfo{Collective::scatterv, "scatterv", "MPI_Scatterv", "COLLSHIM_SCATTERV", CallShape::rooted,
                   SizeAgreement::root},
    // Alltoall runs as Alltoallv with equal counts (AlltoallvCall's uniform form): every rank passes
    // the same count, so the size is global.
    CollectiveInfo{Collective::alltoall, "alltoall", "MPI_Alltoall", "COLLSHIM_ALLTOALL", CallShape::alltoallv_like,
                   SizeAgreement::global},
};
inline constexpr int collective_count = static_cast<int>(collectives.size());

constexpr bool collectives_in_enum_order() {
  for (int c = 0; c < collective_count; ++c) {
    if (static_cast<int>(collectives[c].collective) != c) return false;
  }
  return true;
}
static_assert(collectives_in_enum_order(), "collectives[] must list the collectives in enum order");

constexpr const CollectiveInfo& collective_info(Collective collective) {
  return collectives[static_cast<int>(collective)];
}
constexpr std::string_view collective_name(Collective collective) { return collective_info(collective).name; }
constexpr std::string_view mpi_function_name(Collective collective) { return collective_info(collective).mpi_function; }
constexpr const char* forcing_variable(Collective collective) { return collective_info(collective).forcing_variable; }

constexpr std::optional<Collective> find_collective(std::string_view name) {
  for (const CollectiveInfo& info : collectives) {
    if (info.name == name) return info.collective;
  }
  return std::nullopt;
}

// Every collective, in table order: what `native` (pass through) serves.
inline std::vector<Collective> all_collectives() {
  std::vector<Collective> all;
  for (const CollectiveInfo& info : collectives) all.push_back(info.collective);
  return all;
}

// "a, b or c", for messages that list what was expected.
template <typename Names>
std::string alternatives_text(const Names& names) {
  std::string text;
  std::size_t i = 0;
  for (const auto& name : names) {
    if (i > 0) text += i + 1 == std::size(names) ? " or " : ", ";
    text += name;
    ++i;
  }
  return text;
}

// "allgather, allgatherv, alltoallv, allreduce, gatherv or scatterv".
inline std::string collective_names() {
  std::array<std::string_view, collective_count> names;
  for (int c = 0; c < collective_count; ++c) names[c] = collectives[c].name;
  return alternatives_text(names);
}

}  // namespace collshim
