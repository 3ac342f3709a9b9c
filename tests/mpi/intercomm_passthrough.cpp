// Intercommunicators are not the shim's business: Allgather, Allgatherv, Alltoallv, Gatherv and
// Scatterv (root MPI_ROOT in one group, MPI_PROC_NULL beside it, the root's rank in the other) on an
// intercommunicator must reach the MPI library unchanged (and so give its results), even when an
// algorithm is forced. The runner also checks the log: no algorithm ran for these calls.
#include <mpi.h>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int p, rank;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int failures = 0;
  if (p >= 2) {
    MPI_Comm half, inter;
    const int color = rank < p / 2 ? 0 : 1;
    MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, color == 0 ? p / 2 : 0, 5, &inter);
    int remote;
    MPI_Comm_remote_size(inter, &remote);
    std::vector<int> mine(3, rank), expected(3 * remote, -1), actual(3 * remote, -2);
    PMPI_Allgather(mine.data(), 3, MPI_INT, expected.data(), 3, MPI_INT, inter);
    MPI_Allgather(mine.data(), 3, MPI_INT, actual.data(), 3, MPI_INT, inter);
    if (expected != actual) ++failures;

    std::vector<int> counts(remote, 3), displs(remote);
    for (int i = 0; i < remote; ++i) displs[i] = 3 * (remote - 1 - i);
    std::fill(actual.begin(), actual.end(), -2);
    std::fill(expected.begin(), expected.end(), -1);
    PMPI_Allgatherv(mine.data(), 3, MPI_INT, expected.data(), counts.data(), displs.data(), MPI_INT, inter);
    MPI_Allgatherv(mine.data(), 3, MPI_INT, actual.data(), counts.data(), displs.data(), MPI_INT, inter);
    if (expected != actual) ++failures;

    std::vector<int> out(3 * remote);
    for (int i = 0; i < 3 * remote; ++i) out[i] = rank * 100 + i;
    std::fill(actual.begin(), actual.end(), -2);
    std::fill(expected.begin(), expected.end(), -1);
    PMPI_Alltoallv(out.data(), counts.data(), displs.data(), MPI_INT, expected.data(), counts.data(), displs.data(),
                   MPI_INT, inter);
    MPI_Alltoallv(out.data(), counts.data(), displs.data(), MPI_INT, actual.data(), counts.data(), displs.data(),
                  MPI_INT, inter);
    if (expected != actual) ++failures;

    // Rooted: group 0's rank 0 is the root; the other group sends (Gatherv) or receives (Scatterv).
    // Buffers start alike: the ranks that receive nothing must find them as they were.
    const int root = color == 0 ? (rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    std::fill(actual.begin(), actual.end(), -1);
    std::fill(expected.begin(), expected.end(), -1);
    PMPI_Gatherv(mine.data(), 3, MPI_INT, expected.data(), counts.data(), displs.data(), MPI_INT, root, inter);
    MPI_Gatherv(mine.data(), 3, MPI_INT, actual.data(), counts.data(), displs.data(), MPI_INT, root, inter);
    if (expected != actual) ++failures;

    std::vector<int> block_expected(3, -1), block_actual(3, -1);
    PMPI_Scatterv(out.data(), counts.data(), displs.data(), MPI_INT, block_expected.data(), 3, MPI_INT, root, inter);
    MPI_Scatterv(out.data(), counts.data(), displs.data(), MPI_INT, block_actual.data(), 3, MPI_INT, root, inter);
    if (block_expected != block_actual) ++failures;
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
  }
  MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("intercomm_passthrough: %d passed, %d failed\n", failures == 0 ? 5 : 0, failures);
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
