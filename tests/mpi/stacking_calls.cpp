// Known calls for the stacking test: every collective of the entry-point table
// (every_collective.hpp) `repeats` times (argument 1, default 3) on MPI_COMM_WORLD, 16 ints per
// block.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "every_collective.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 3;
  int p = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int n = 16;
  std::vector<int> send(static_cast<std::size_t>(n) * p, rank), recv(send.size()), counts(p, n), displs(p);
  for (int i = 0; i < p; ++i) displs[i] = i * n;
  const every_collective::Arguments a{n, send.data(), recv.data(), counts.data(), displs.data(), MPI_COMM_WORLD, 0};
  const std::vector<every_collective::Function> functions = every_collective::blocking();
  for (int i = 0; i < repeats; ++i) {
    for (const every_collective::Function& f : functions) f.call(a, nullptr);
  }
  if (rank == 0) std::printf("stacking_calls: %d calls of each collective\n", repeats);
  MPI_Finalize();
  return 0;
}
