// A minimal PMPI tool, as mpiP or Score-P are: it defines every collective of the entry-point table
// (src/intercept/entry_point_table.hpp, the int form of each row) and MPI_Init, MPI_Init_thread and
// MPI_Finalize, counts each call and hands it to PMPI_*. Preloaded after the
// shim (LD_PRELOAD=libcollshim.so:libcounting_tool.so), it must see every call the shim passes on,
// never the shim's own traffic, and its MPI_Init/MPI_Finalize must run. At MPI_Finalize every rank
// prints its counts.
#include <mpi.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <string>

#include <unistd.h>

#include "intercept/entry_point_table.hpp"

namespace {

// The collectives in table order, then MPI_Init and MPI_Finalize.
enum Counted {
#define COUNTING_TOOL_KIND(Name, ...) Name,
  COLLSHIM_COLLECTIVES(COUNTING_TOOL_KIND, -)
#undef COUNTING_TOOL_KIND
      init,
  finalize,
  kinds
};
constexpr std::array<const char*, kinds> names{
#define COUNTING_TOOL_NAME(Name, ...) "MPI_" #Name,
    COLLSHIM_COLLECTIVES(COUNTING_TOOL_NAME, -)
#undef COUNTING_TOOL_NAME
        "MPI_Init",
    "MPI_Finalize"};
std::array<std::atomic<long>, kinds> counts{};

}  // namespace

#define TOOL_EXPORT extern "C" __attribute__((visibility("default")))

TOOL_EXPORT int MPI_Init(int* argc, char*** argv) {
  ++counts[init];
  return PMPI_Init(argc, argv);
}
TOOL_EXPORT int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  ++counts[init];
  return PMPI_Init_thread(argc, argv, required, provided);
}
TOOL_EXPORT int MPI_Finalize() {
  ++counts[finalize];
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // One write of the whole line: the launcher forwards each rank's output as it comes, and a line
  // written in pieces can be interleaved with another rank's.
  std::string line = "counting_tool: rank " + std::to_string(rank) + ":";
  for (int kind = 0; kind < kinds; ++kind)
    line += " " + std::string(names[kind]) + "=" + std::to_string(counts[kind].load());
  line += "\n";
  std::fflush(stdout);
  if (write(STDOUT_FILENO, line.data(), line.size()) < 0) return PMPI_Finalize();
  return PMPI_Finalize();
}
#define COUNTING_TOOL_FUNCTION(Name, lower, UPPER, parameters, ...)  \
  TOOL_EXPORT int MPI_##Name(COLLSHIM_PARAMETERS(int, parameters)) { \
    ++counts[Name];                                                  \
    return PMPI_##Name(COLLSHIM_ARGUMENT_NAMES(parameters));         \
  }
COLLSHIM_COLLECTIVES(COUNTING_TOOL_FUNCTION, -)
#undef COUNTING_TOOL_FUNCTION
