// 10,000 communicators created, used by an intercepted collective, and freed must leave no shim
// state behind: the runner checks the shim's count of live communicator states at MPI_Finalize
// (logged at info level), and the results are checked here.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int p, rank;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 10000;
  int failures = 0;
  std::vector<int> all(p);
  for (int i = 0; i < rounds; ++i) {
    MPI_Comm comm;
    if (i % 2 == 0)
      MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    else
      MPI_Comm_split(MPI_COMM_WORLD, 0, p - rank, &comm);  // reversed order
    int mine = i * 1000 + rank, comm_rank;
    MPI_Comm_rank(comm, &comm_rank);
    MPI_Allgather(&mine, 1, MPI_INT, all.data(), 1, MPI_INT, comm);
    for (int r = 0; r < p; ++r) {
      const int world = i % 2 == 0 ? r : p - 1 - r;
      if (all[r] != i * 1000 + world) ++failures;
    }
    MPI_Comm_free(&comm);
  }
  MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("communicator_lifecycle: %d passed, %d failed\n", failures == 0 ? rounds : 0, failures);
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
