// A known sequence of calls for the report test: MPI_Allgather at 8 B (once), 1 KiB (twice) and
// 64 KiB (three times) per block, and one MPI_Alltoallv of 5 ints to every peer.
#include <mpi.h>

#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int p;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  for (const auto& [bytes, repeats] : {std::pair{8, 1}, {1024, 2}, {65536, 3}}) {
    std::vector<char> mine(bytes, 1), all(static_cast<std::size_t>(bytes) * p);
    for (int i = 0; i < repeats; ++i)
      MPI_Allgather(mine.data(), bytes, MPI_BYTE, all.data(), bytes, MPI_BYTE, MPI_COMM_WORLD);
  }
  std::vector<int> counts(p, 5), displs(p), out(5 * p, 2), in(5 * p);
  for (int i = 0; i < p; ++i) displs[i] = 5 * i;
  MPI_Alltoallv(out.data(), counts.data(), displs.data(), MPI_INT, in.data(), counts.data(), displs.data(), MPI_INT,
                MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
