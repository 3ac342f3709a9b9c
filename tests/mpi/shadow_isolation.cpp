// The shim's traffic must never match an application's receive. Rank 0 posts
// MPI_Irecv(MPI_ANY_SOURCE, MPI_ANY_TAG) on the user's communicator, then every rank runs each
// intercepted collective; afterwards rank 1 sends one message, and the pending receive must get
// exactly that message. Without a shadow communicator the wildcard receive would swallow a message
// of the algorithm and the collective would hang or corrupt data.
#include <mpi.h>

#include <cstdio>
#include <numeric>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int p, rank;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int failures = 0;
  const int app_tag = 77;
  const double app_payload = 3.25;

  double received = 0;
  MPI_Request pending = MPI_REQUEST_NULL;
  if (rank == 0 && p > 1) MPI_Irecv(&received, 1, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &pending);

  std::vector<int> mine(4, rank), gathered(4 * p, -1), expected(4 * p);
  for (int i = 0; i < 4 * p; ++i) expected[i] = i / 4;
  MPI_Allgather(mine.data(), 4, MPI_INT, gathered.data(), 4, MPI_INT, MPI_COMM_WORLD);
  if (gathered != expected) ++failures;

  std::vector<int> counts(p, 4), displs(p);
  for (int i = 0; i < p; ++i) displs[i] = 4 * i;
  std::fill(gathered.begin(), gathered.end(), -1);
  MPI_Allgatherv(mine.data(), 4, MPI_INT, gathered.data(), counts.data(), displs.data(), MPI_INT, MPI_COMM_WORLD);
  if (gathered != expected) ++failures;

  std::vector<int> out(4 * p), in(4 * p, -1);
  for (int i = 0; i < 4 * p; ++i) out[i] = rank * 1000 + i / 4;
  MPI_Alltoallv(out.data(), counts.data(), displs.data(), MPI_INT, in.data(), counts.data(), displs.data(), MPI_INT,
                MPI_COMM_WORLD);
  for (int i = 0; i < 4 * p; ++i) {
    if (in[i] != (i / 4) * 1000 + rank) ++failures;
  }

  if (rank == 1) MPI_Send(&app_payload, 1, MPI_DOUBLE, 0, app_tag, MPI_COMM_WORLD);
  if (rank == 0 && p > 1) {
    MPI_Status status;
    MPI_Wait(&pending, &status);
    if (received != app_payload || status.MPI_SOURCE != 1 || status.MPI_TAG != app_tag) {
      std::printf("FAIL: wildcard receive got value %g from rank %d tag %d\n", received, status.MPI_SOURCE,
                  status.MPI_TAG);
      ++failures;
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("shadow_isolation: %d passed, %d failed\n", failures == 0 ? 1 : 0, failures == 0 ? 0 : 1);
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
