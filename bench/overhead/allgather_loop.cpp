// The workload of bench/overhead: MPI_Allgather of 8 bytes per rank on MPI_COMM_WORLD, in a loop.
// Built against plain MPI (no shim); bench/overhead/run preloads libcollshim.so or not and runs this
// under callgrind.
//
// usage: allgather_loop CALLS [WARMUP]
//
// The WARMUP calls run first, outside the measured region: the shim's first call on a communicator
// creates its state (a PMPI_Comm_dup and the mapping detection, both collective) and the dynamic
// linker resolves the PMPI symbols lazily; neither is per-call cost. The CALLS measured calls run in
// collshim_bench_measured_loop(), which the driver names in callgrind's --toggle-collect, so callgrind
// counts only them. The function must not be inlined or renamed.
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

extern "C" __attribute__((noinline, used)) int collshim_bench_measured_loop(long calls, const std::uint64_t* send,
                                                                            std::uint64_t* recv) {
  int errors = 0;
  for (long i = 0; i < calls; ++i) {
    if (MPI_Allgather(send, 8, MPI_BYTE, recv, 8, MPI_BYTE, MPI_COMM_WORLD) != MPI_SUCCESS) ++errors;
  }
  return errors;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CALLS [WARMUP]\n", argv[0]);
    return 2;
  }
  const long calls = std::strtol(argv[1], nullptr, 10);
  const long warmup = argc > 2 ? std::strtol(argv[2], nullptr, 10) : 10;
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::uint64_t send = 0x0101010101010101ull * static_cast<unsigned>(rank + 1);
  std::vector<std::uint64_t> recv(static_cast<std::size_t>(size));

  int errors = 0;
  for (long i = 0; i < warmup; ++i) {
    errors += MPI_Allgather(&send, 8, MPI_BYTE, recv.data(), 8, MPI_BYTE, MPI_COMM_WORLD) != MPI_SUCCESS;
  }
  errors += collshim_bench_measured_loop(calls, &send, recv.data());
  // The result must be what native MPI gives: rank r's block is (r+1) in every byte.
  for (int r = 0; r < size; ++r) errors += recv[static_cast<std::size_t>(r)] != 0x0101010101010101ull * (r + 1u);
  int total_errors = 0;
  MPI_Reduce(&errors, &total_errors, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) std::printf("allgather_loop: %d ranks, %ld calls, %d errors\n", size, calls, total_errors);
  MPI_Finalize();
  return total_errors == 0 ? 0 : 1;
}
