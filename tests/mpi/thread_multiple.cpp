// MPI_THREAD_MULTIPLE: several threads run intercepted collectives at once, each on its own
// communicator, and every result must equal the MPI library's. Exercises the thread safety of the
// shadow-communicator cache, the decision caches and the report.
#include <mpi.h>

#include <atomic>
#include <cstdio>
#include <thread>
#include <vector>

#include "equivalence_harness.hpp"

using namespace equivalence;

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int p, rank;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (provided < MPI_THREAD_MULTIPLE) {
    if (rank == 0) std::printf("thread_multiple: MPI library provides only level %d\n", provided);
    MPI_Finalize();
    return 1;
  }
  const int threads = 4, rounds = 30;
  std::vector<MPI_Comm> comms(threads);
  for (MPI_Comm& comm : comms) MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  std::atomic<int> passed{0}, failed{0};
  auto work = [&](int t) {
    MPI_Comm comm = comms[t];
    for (int round = 0; round < rounds; ++round) {
      const int bytes = 8 << (round % 8);
      std::vector<unsigned char> mine(bytes), expected(static_cast<std::size_t>(bytes) * p), actual(expected.size());
      fill_pattern(mine, rank, t * 1000 + round);
      PMPI_Allgather(mine.data(), bytes, MPI_BYTE, expected.data(), bytes, MPI_BYTE, comm);
      MPI_Allgather(mine.data(), bytes, MPI_BYTE, actual.data(), bytes, MPI_BYTE, comm);
      (expected == actual ? passed : failed)++;
      std::vector<int> counts(p), displs(p);
      int total = 0;
      for (int r = 0; r < p; ++r) {
        counts[r] = (r + round + t) % 5;
        displs[r] = total;
        total += counts[r];
      }
      std::vector<int> out(counts[rank], rank * 100 + round), exp(total, -1), act(total, -1);
      PMPI_Allgatherv(out.data(), counts[rank], MPI_INT, exp.data(), counts.data(), displs.data(), MPI_INT, comm);
      MPI_Allgatherv(out.data(), counts[rank], MPI_INT, act.data(), counts.data(), displs.data(), MPI_INT, comm);
      (exp == act ? passed : failed)++;
      std::vector<int> send(3 * p), recv_expected(3 * p), recv_actual(3 * p), three(p, 3), d(p);
      for (int i = 0; i < 3 * p; ++i) send[i] = rank * 1000 + i + t;
      for (int r = 0; r < p; ++r) d[r] = 3 * r;
      PMPI_Alltoallv(send.data(), three.data(), d.data(), MPI_INT, recv_expected.data(), three.data(), d.data(),
                     MPI_INT, comm);
      MPI_Alltoallv(send.data(), three.data(), d.data(), MPI_INT, recv_actual.data(), three.data(), d.data(), MPI_INT,
                    comm);
      (recv_expected == recv_actual ? passed : failed)++;
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(work, t);
  for (std::thread& thread : pool) thread.join();
  for (MPI_Comm& comm : comms) MPI_Comm_free(&comm);
  int counts[2] = {passed.load(), failed.load()};
  MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("thread_multiple: %d passed, %d failed\n", counts[0], counts[1]);
  MPI_Finalize();
  return counts[1] == 0 ? 0 : 1;
}
