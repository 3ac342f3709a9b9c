// Calls whose decisions depend on size and mapping (see rules/size_and_mapping.yaml): Allgather at
// 16 B and 16 KiB blocks, and Alltoallv where each rank's own average block differs but the agreed
// average (total / p^2) decides. Results are compared with the MPI library's; the test runner checks
// in the debug log which algorithm each call got.
#include <string>
#include <vector>

#include "equivalence_harness.hpp"

using namespace equivalence;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int p, rank;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  Tally tally;
  for (int bytes : {16, 16384}) {
    std::vector<unsigned char> mine(bytes), expected(static_cast<std::size_t>(bytes) * p), actual(expected.size());
    fill_pattern(mine, rank, bytes);
    PMPI_Allgather(mine.data(), bytes, MPI_BYTE, expected.data(), bytes, MPI_BYTE, MPI_COMM_WORLD);
    MPI_Allgather(mine.data(), bytes, MPI_BYTE, actual.data(), bytes, MPI_BYTE, MPI_COMM_WORLD);
    tally.check(expected == actual, "allgather " + std::to_string(bytes) + " B", expected, actual);
  }
  // Rank r sends (r+1)*k ints to every rank: local averages differ, the agreed one is 4k(p+1)/2 bytes.
  for (int k : {32, 4}) {
    std::vector<int> sendcounts(p, (rank + 1) * k), sdispls(p), recvcounts(p), rdispls(p);
    int send_total = 0, recv_total = 0;
    for (int peer = 0; peer < p; ++peer) {
      sdispls[peer] = send_total;
      send_total += sendcounts[peer];
      recvcounts[peer] = (peer + 1) * k;
      rdispls[peer] = recv_total;
      recv_total += recvcounts[peer];
    }
    std::vector<unsigned char> out(static_cast<std::size_t>(send_total) * sizeof(int));
    fill_pattern(out, rank, k);
    std::vector<unsigned char> expected(static_cast<std::size_t>(recv_total) * sizeof(int)), actual(expected.size());
    PMPI_Alltoallv(out.data(), sendcounts.data(), sdispls.data(), MPI_INT, expected.data(), recvcounts.data(),
                   rdispls.data(), MPI_INT, MPI_COMM_WORLD);
    MPI_Alltoallv(out.data(), sendcounts.data(), sdispls.data(), MPI_INT, actual.data(), recvcounts.data(),
                  rdispls.data(), MPI_INT, MPI_COMM_WORLD);
    tally.check(expected == actual, "alltoallv k=" + std::to_string(k), expected, actual);
  }
  const int status = tally.finish("selector_decisions");
  MPI_Finalize();
  return status;
}
