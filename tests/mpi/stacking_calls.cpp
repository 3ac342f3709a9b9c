// Known calls for the stacking test: each of the seven collectives `repeats` times (argument 1,
// default 3) on MPI_COMM_WORLD, 16 ints per block.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 3;
  int p = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int n = 16;
  std::vector<int> mine(n, rank), all(static_cast<std::size_t>(n) * p), out(all.size(), rank), counts(p, n), displs(p);
  for (int i = 0; i < p; ++i) displs[i] = i * n;
  for (int i = 0; i < repeats; ++i) {
    MPI_Allgather(mine.data(), n, MPI_INT, all.data(), n, MPI_INT, MPI_COMM_WORLD);
    MPI_Allgatherv(mine.data(), n, MPI_INT, all.data(), counts.data(), displs.data(), MPI_INT, MPI_COMM_WORLD);
    MPI_Alltoall(out.data(), n, MPI_INT, all.data(), n, MPI_INT, MPI_COMM_WORLD);
    MPI_Alltoallv(out.data(), counts.data(), displs.data(), MPI_INT, all.data(), counts.data(), displs.data(), MPI_INT,
                  MPI_COMM_WORLD);
    MPI_Allreduce(mine.data(), all.data(), n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Gatherv(mine.data(), n, MPI_INT, all.data(), counts.data(), displs.data(), MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Scatterv(out.data(), counts.data(), displs.data(), MPI_INT, mine.data(), n, MPI_INT, 0, MPI_COMM_WORLD);
  }
  if (rank == 0) std::printf("stacking_calls: %d calls of each collective\n", repeats);
  MPI_Finalize();
  return 0;
}
