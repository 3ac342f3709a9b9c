// The shim's traffic must never match an application's receive. Rank 0 posts
// MPI_Irecv(MPI_ANY_SOURCE, MPI_ANY_TAG) on the user's communicator, then every rank runs each
// intercepted collective; afterwards rank 1 sends one message, and the pending receive must get
// exactly that message. Without a shadow communicator the wildcard receive would swallow a message
// of the algorithm and the collective would hang or corrupt data. Every rank also keeps a wildcard
// receive pending on MPI_COMM_SELF (also a user communicator) while the collectives convert between
// send and receive types of different layout, which the shim must not do with messages on it.
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
  const int self_tag = 78;
  const double self_payload = 6.5;
  double self_received = 0;
  MPI_Request self_pending = MPI_REQUEST_NULL;
  MPI_Irecv(&self_received, 1, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &self_pending);

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

  // Same signature, different layout: two ints sent, one pair-of-ints received, so the own block is
  // copied with a type conversion.
  MPI_Datatype pair;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  std::vector<int> pair_counts(p, 2), pair_displs(p), one(p, 1), one_displs(p);
  for (int i = 0; i < p; ++i) pair_displs[i] = 2 * i, one_displs[i] = i;
  std::vector<int> pair_out(2 * p), pair_in(2 * p, -1);
  for (int i = 0; i < 2 * p; ++i) pair_out[i] = rank * 1000 + i;
  MPI_Alltoallv(pair_out.data(), pair_counts.data(), pair_displs.data(), MPI_INT, pair_in.data(), one.data(),
                one_displs.data(), pair, MPI_COMM_WORLD);
  for (int i = 0; i < 2 * p; ++i) {
    if (pair_in[i] != (i / 2) * 1000 + 2 * rank + i % 2) ++failures;
  }
  std::fill(pair_in.begin(), pair_in.end(), -1);
  MPI_Allgather(pair_out.data(), 2, MPI_INT, pair_in.data(), 1, pair, MPI_COMM_WORLD);
  for (int i = 0; i < 2 * p; ++i) {
    if (pair_in[i] != (i / 2) * 1000 + i % 2) ++failures;
  }
  MPI_Type_free(&pair);

  MPI_Send(&self_payload, 1, MPI_DOUBLE, 0, self_tag, MPI_COMM_SELF);
  MPI_Status self_status;
  MPI_Wait(&self_pending, &self_status);
  if (self_received != self_payload || self_status.MPI_TAG != self_tag) {
    std::printf("FAIL: rank %d: wildcard receive on MPI_COMM_SELF got value %g tag %d\n", rank, self_received,
                self_status.MPI_TAG);
    ++failures;
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
