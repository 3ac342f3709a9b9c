// Communicators created and freed in a loop, with sizes changing from one to the next, so the MPI
// library hands out freed handles again: the shim must never use a freed communicator's state (its
// size, shadow or decisions) for a new communicator with the same handle, nor treat a new
// intercommunicator as the intracommunicator that had its handle. Also alternates calls between
// live communicators. Every result must equal the MPI library's own.
#include <mpi.h>

#include <cstdio>
#include <vector>

namespace {

int check_allgather(MPI_Comm comm, int salt) {
  int inter = 0, p = 0, rank = 0;
  MPI_Comm_test_inter(comm, &inter);
  if (inter) {
    MPI_Comm_remote_size(comm, &p);
  } else {
    MPI_Comm_size(comm, &p);
  }
  MPI_Comm_rank(comm, &rank);
  std::vector<int> mine(2, rank * 1000 + salt), expected(2 * p, -1), actual(2 * p, -2);
  PMPI_Allgather(mine.data(), 2, MPI_INT, expected.data(), 2, MPI_INT, comm);
  MPI_Allgather(mine.data(), 2, MPI_INT, actual.data(), 2, MPI_INT, comm);
  std::vector<int> counts(p, 2), displs(p);
  for (int i = 0; i < p; ++i) displs[i] = 2 * (p - 1 - i);
  std::vector<int> expected_v(2 * p, -1), actual_v(2 * p, -2);
  PMPI_Allgatherv(mine.data(), 2, MPI_INT, expected_v.data(), counts.data(), displs.data(), MPI_INT, comm);
  MPI_Allgatherv(mine.data(), 2, MPI_INT, actual_v.data(), counts.data(), displs.data(), MPI_INT, comm);
  return (expected != actual) + (expected_v != actual_v);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int p = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int failures = 0, checks = 0;
  for (int round = 0; round < 2 * p; ++round) {
    // Sizes change every round: 1, 2, ..., p groups.
    const int groups = round % p + 1;
    MPI_Comm comm;
    MPI_Comm_split(MPI_COMM_WORLD, rank % groups, rank, &comm);
    failures += check_allgather(comm, round);
    failures += check_allgather(MPI_COMM_WORLD, round);  // switch away and back
    failures += check_allgather(comm, round + 100);
    checks += 3;
    MPI_Comm_free(&comm);
    if (p >= 2) {
      // An intercommunicator, likely on a handle an intracommunicator had: it must pass through.
      MPI_Comm half, inter;
      const int color = rank < p / 2 ? 0 : 1;
      MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half);
      failures += check_allgather(half, round + 200);
      MPI_Comm_free(&half);
      MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half);
      MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, color == 0 ? p / 2 : 0, 7, &inter);
      failures += check_allgather(inter, round + 300);
      MPI_Comm_free(&inter);
      MPI_Comm_free(&half);
      checks += 2;
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("comm_reuse: %d checks, %d failed\n", checks, failures);
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
