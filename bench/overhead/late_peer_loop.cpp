// The workload of bench/overhead/late_peer_wait.sh: rank 0 sleeps 100 ms before each 8-byte
// MPI_Iallgather + MPI_Wait on MPI_COMM_WORLD, so every other rank sits in MPI_Wait that long.
// usage: late_peer_loop CALLS. Two warm-up pairs first; callgrind counts only
// collshim_bench_measured_loop (not inlined, not renamed).
#include <mpi.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <vector>
extern "C" __attribute__((noinline, used)) int collshim_bench_measured_loop(long calls, int rank,
                                                                            const std::uint64_t* send,
                                                                            std::uint64_t* recv) {
  int errors = 0;
  for (long i = 0; i < calls; ++i) {
    if (rank == 0) usleep(100000);
    MPI_Request r;
    if (MPI_Iallgather(send, 8, MPI_BYTE, recv, 8, MPI_BYTE, MPI_COMM_WORLD, &r) != MPI_SUCCESS) ++errors;
    if (MPI_Wait(&r, MPI_STATUS_IGNORE) != MPI_SUCCESS) ++errors;
  }
  return errors;
}
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::uint64_t send = static_cast<std::uint64_t>(rank);
  std::vector<std::uint64_t> recv(static_cast<std::size_t>(size));
  collshim_bench_measured_loop(2, rank, &send, recv.data());
  const int errors = collshim_bench_measured_loop(std::atol(argv[1]), rank, &send, recv.data());
  MPI_Finalize();
  return errors;
}
