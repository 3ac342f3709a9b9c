// A minimal PMPI tool, as mpiP or Score-P are: it defines the seven collectives and MPI_Init,
// MPI_Init_thread and MPI_Finalize, counts each call and hands it to PMPI_*. Preloaded after the
// shim (LD_PRELOAD=libcollshim.so:libcounting_tool.so), it must see every call the shim passes on,
// never the shim's own traffic, and its MPI_Init/MPI_Finalize must run. At MPI_Finalize every rank
// prints its counts.
#include <mpi.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <string>

#include <unistd.h>

namespace {

enum Counted { allgather, allgatherv, alltoall, alltoallv, allreduce, gatherv, scatterv, init, finalize, kinds };
constexpr std::array<const char*, kinds> names{"MPI_Allgather", "MPI_Allgatherv", "MPI_Alltoall",
                                               "MPI_Alltoallv", "MPI_Allreduce",  "MPI_Gatherv",
                                               "MPI_Scatterv",  "MPI_Init",       "MPI_Finalize"};
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
TOOL_EXPORT int MPI_Allgather(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, MPI_Comm c) {
  ++counts[allgather];
  return PMPI_Allgather(sb, sc, st, rb, rc, rt, c);
}
TOOL_EXPORT int MPI_Allgatherv(const void* sb, int sc, MPI_Datatype st, void* rb, const int* rc, const int* d,
                               MPI_Datatype rt, MPI_Comm c) {
  ++counts[allgatherv];
  return PMPI_Allgatherv(sb, sc, st, rb, rc, d, rt, c);
}
TOOL_EXPORT int MPI_Alltoall(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, MPI_Comm c) {
  ++counts[alltoall];
  return PMPI_Alltoall(sb, sc, st, rb, rc, rt, c);
}
TOOL_EXPORT int MPI_Alltoallv(const void* sb, const int* sc, const int* sd, MPI_Datatype st, void* rb, const int* rc,
                              const int* rd, MPI_Datatype rt, MPI_Comm c) {
  ++counts[alltoallv];
  return PMPI_Alltoallv(sb, sc, sd, st, rb, rc, rd, rt, c);
}
TOOL_EXPORT int MPI_Allreduce(const void* sb, void* rb, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  ++counts[allreduce];
  return PMPI_Allreduce(sb, rb, n, t, op, c);
}
TOOL_EXPORT int MPI_Gatherv(const void* sb, int sc, MPI_Datatype st, void* rb, const int* rc, const int* d,
                            MPI_Datatype rt, int root, MPI_Comm c) {
  ++counts[gatherv];
  return PMPI_Gatherv(sb, sc, st, rb, rc, d, rt, root, c);
}
TOOL_EXPORT int MPI_Scatterv(const void* sb, const int* sc, const int* d, MPI_Datatype st, void* rb, int rc,
                             MPI_Datatype rt, int root, MPI_Comm c) {
  ++counts[scatterv];
  return PMPI_Scatterv(sb, sc, d, st, rb, rc, rt, root, c);
}
