// Online tuning's test program (tests/mpi/online_tuning_test.sh): many Allgather and Alltoallv calls
// of two sizes on MPI_COMM_WORLD and on a duplicate of it (two communicators of the same size tune
// independently), each checked against the values every rank must receive. Under COLLSHIM_TUNE=online
// the first calls of each size are the tuner's trials: every one of them must still be correct.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

// The value rank `from` contributes at element `i` of call `call` (to rank `to` for Alltoallv).
int value(int call, int from, int to, int i) { return call * 1000003 + from * 1009 + to * 31 + i; }

int allgather_errors(MPI_Comm comm, int call, int count) {
  int rank = 0, p = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  std::vector<int> mine(count), all(static_cast<std::size_t>(count) * p, -1);
  for (int i = 0; i < count; ++i) mine[i] = value(call, rank, 0, i);
  MPI_Allgather(mine.data(), count, MPI_INT, all.data(), count, MPI_INT, comm);
  int errors = 0;
  for (int from = 0; from < p; ++from) {
    for (int i = 0; i < count; ++i)
      errors += all[static_cast<std::size_t>(from) * count + i] != value(call, from, 0, i);
  }
  return errors;
}

int alltoallv_errors(MPI_Comm comm, int call, int count) {
  int rank = 0, p = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  std::vector<int> counts(p, count), displs(p);
  for (int r = 0; r < p; ++r) displs[r] = r * count;
  std::vector<int> send(static_cast<std::size_t>(count) * p), recv(send.size(), -1);
  for (int to = 0; to < p; ++to) {
    for (int i = 0; i < count; ++i) send[static_cast<std::size_t>(to) * count + i] = value(call, rank, to, i);
  }
  MPI_Alltoallv(send.data(), counts.data(), displs.data(), MPI_INT, recv.data(), counts.data(), displs.data(), MPI_INT,
                comm);
  int errors = 0;
  for (int from = 0; from < p; ++from) {
    for (int i = 0; i < count; ++i)
      errors += recv[static_cast<std::size_t>(from) * count + i] != value(call, from, rank, i);
  }
  return errors;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm twin;
  MPI_Comm_dup(MPI_COMM_WORLD, &twin);
  MPI_Comm_set_name(twin, "twin");                        // the shim's log names the communicator it tuned
  const int calls = argc > 1 ? std::atoi(argv[1]) : 120;  // more than any key's trials
  long long checks = 0, failed = 0;
  for (int call = 0; call < calls; ++call) {
    for (MPI_Comm comm : {MPI_COMM_WORLD, twin}) {
      for (int count : {2, 1024}) {  // 8 B and 4 KiB blocks: two size buckets
        failed += allgather_errors(comm, call, count) != 0;
        failed += alltoallv_errors(comm, call, count / 2) != 0;
        checks += 2;
      }
    }
  }
  MPI_Comm_free(&twin);
  // MPI_Reduce: the shim does not intercept it, so the tally is no tuning trial of its own.
  long long mine[2] = {checks, failed}, totals[2] = {0, 0};
  MPI_Reduce(mine, totals, 2, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) std::printf("online_tuning: %lld checks passed, %lld failed\n", totals[0] - totals[1], totals[1]);
  MPI_Finalize();
  return failed == 0 ? 0 : 1;
}
