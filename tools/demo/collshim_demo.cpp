// A small, ordinary MPI application for the demo: it knows nothing of collshim. Each rank owns a
// slice of particles; every iteration it shares positions with MPI_Allgather, a variable-length
// neighbour list with MPI_Allgatherv, and migrates particles with MPI_Alltoallv. It prints a checksum
// of everything it received, so runs with and without the shim can be compared.
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int p, rank;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 20;  // online tuning needs more calls per size
  std::uint64_t checksum = 0;
  auto absorb = [&](const void* data, std::size_t bytes) {
    const auto* b = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < bytes; ++i) checksum = checksum * 1099511628211ull + b[i];
  };
  for (int it = 0; it < iterations; ++it) {
    for (int per_rank : {4, 512, 16384}) {  // doubles per rank: small, medium and large blocks
      std::vector<double> mine(per_rank), all(static_cast<std::size_t>(per_rank) * p);
      for (int i = 0; i < per_rank; ++i) mine[i] = rank + 0.001 * i + it;
      MPI_Allgather(mine.data(), per_rank, MPI_DOUBLE, all.data(), per_rank, MPI_DOUBLE, MPI_COMM_WORLD);
      absorb(all.data(), all.size() * sizeof(double));
    }
    std::vector<int> counts(p), displs(p);
    int total = 0;
    for (int r = 0; r < p; ++r) {
      counts[r] = 1 + (r * 7 + it) % 13;
      displs[r] = total;
      total += counts[r];
    }
    std::vector<int> neighbours(counts[rank], rank * 100 + it), gathered(total);
    MPI_Allgatherv(neighbours.data(), counts[rank], MPI_INT, gathered.data(), counts.data(), displs.data(), MPI_INT,
                   MPI_COMM_WORLD);
    absorb(gathered.data(), gathered.size() * sizeof(int));

    std::vector<int> send_counts(p), send_displs(p), recv_counts(p), recv_displs(p);
    int send_total = 0, recv_total = 0;
    for (int r = 0; r < p; ++r) {
      send_counts[r] = (rank + r + it) % 4;
      recv_counts[r] = (r + rank + it) % 4;
      send_displs[r] = send_total;
      recv_displs[r] = recv_total;
      send_total += send_counts[r];
      recv_total += recv_counts[r];
    }
    std::vector<double> outgoing(send_total, rank + it * 0.5), incoming(recv_total);
    MPI_Alltoallv(outgoing.data(), send_counts.data(), send_displs.data(), MPI_DOUBLE, incoming.data(),
                  recv_counts.data(), recv_displs.data(), MPI_DOUBLE, MPI_COMM_WORLD);
    absorb(incoming.data(), incoming.size() * sizeof(double));
  }
  std::uint64_t checksums[2] = {checksum, checksum};
  MPI_Allreduce(MPI_IN_PLACE, &checksums[0], 1, MPI_UINT64_T, MPI_BXOR, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("collshim-demo: %d ranks, %d iterations, checksum %016llx\n", p, iterations,
                static_cast<unsigned long long>(checksums[0]));
  MPI_Finalize();
  return 0;
}
