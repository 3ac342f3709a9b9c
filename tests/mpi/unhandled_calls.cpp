// Known nonblocking and persistent calls of every collective of the entry-point table, in each
// form the library has (every_collective.hpp: MPI_I<name>; MPI_<Name>_init or Open MPI 4.1's
// MPIX_<Name>_init; under MPI-4 the large-count _c ones): `repeats` times each (argument 1,
// default 3) on MPI_COMM_WORLD, 16 ints per block. The shim passes them on unhandled and counts them for the
// report; their results must equal the blocking PMPI_* call's, element for element. Prints
// "unhandled_calls: N calls of each of M variants, every result equal" (or FAIL lines and exit
// status 1).
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "every_collective.hpp"

namespace {

constexpr int n = 16;

int failures = 0;

void check(const every_collective::Function& f, int p, int rank, int repeats) {
  // Values that differ by rank and position, so a block in the wrong place shows.
  std::vector<int> send(static_cast<std::size_t>(n) * p), counts(p, n), displs(p);
  for (std::size_t i = 0; i < send.size(); ++i) send[i] = rank * 100000 + static_cast<int>(i);
  for (int i = 0; i < p; ++i) displs[i] = i * n;
  const std::vector<MPI_Count> large_counts(counts.begin(), counts.end());
  const std::vector<MPI_Aint> large_displs(displs.begin(), displs.end());
  std::vector<int> expected(send.size(), -1), got(send.size(), -1);
  every_collective::Arguments a{
      n, send.data(),         expected.data(),    counts.data(), displs.data(), MPI_COMM_WORLD,
      0, large_counts.data(), large_displs.data()};
  f.reference(a);
  a.recv = got.data();
  for (int i = 0; i < repeats; ++i) {
    std::fill(got.begin(), got.end(), -1);
    MPI_Request request = MPI_REQUEST_NULL;
    f.call(a, &request);
    if (f.persistent) MPI_Start(&request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    if (f.persistent) MPI_Request_free(&request);
    if (got != expected) {
      std::printf("FAIL: %s on rank %d: result differs from the blocking call's\n", f.name.c_str(), rank);
      ++failures;
      return;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 3;
  int p = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::vector<every_collective::Function> variants = every_collective::unhandled();
  for (const every_collective::Function& f : variants) check(f, p, rank, repeats);
  int total_failures = 0;
  MPI_Allreduce(&failures, &total_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0 && total_failures == 0)
    std::printf("unhandled_calls: %d calls of each of %zu variants, every result equal\n", repeats, variants.size());
  MPI_Finalize();
  return total_failures == 0 ? 0 : 1;
}
