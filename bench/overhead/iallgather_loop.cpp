// The nonblocking pass-through's workload for bench/overhead/nonblocking_passthrough.sh: 8-byte
// MPI_Iallgather + MPI_Wait on MPI_COMM_WORLD in a loop (usage: iallgather_loop CALLS). Five warm-up
// pairs run first; callgrind counts only collshim_bench_measured_loop (not inlined, not renamed).
#include <mpi.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>
extern "C" __attribute__((noinline, used)) int collshim_bench_measured_loop(long calls, const std::uint64_t* send,
                                                                            std::uint64_t* recv) {
  int errors = 0;
  for (long i = 0; i < calls; ++i) {
    MPI_Request r;
    if (MPI_Iallgather(send, 8, MPI_BYTE, recv, 8, MPI_BYTE, MPI_COMM_WORLD, &r) != MPI_SUCCESS) ++errors;
    if (MPI_Wait(&r, MPI_STATUS_IGNORE) != MPI_SUCCESS) ++errors;
  }
  return errors;
}
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::uint64_t send = 1;
  std::vector<std::uint64_t> recv(static_cast<std::size_t>(size));
  collshim_bench_measured_loop(5, &send, recv.data());
  int e = collshim_bench_measured_loop(std::atol(argv[1]), &send, recv.data());
  MPI_Finalize();
  return e;
}
