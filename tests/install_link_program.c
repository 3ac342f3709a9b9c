/* A tiny MPI program for the install test: linked against the installed collshim (pkg-config or
   find_package), not preloaded. Prints whether its MPI_Allgather gave every rank's value. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, p = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  int* all = malloc(sizeof(int) * (size_t)p);
  int mine = rank * 7 + 1, ok = 1;
  MPI_Allgather(&mine, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
  for (int r = 0; r < p; ++r) ok = ok && all[r] == r * 7 + 1;
  PMPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0) printf("install_link_program: allgather %s\n", ok ? "correct" : "WRONG");
  free(all);
  MPI_Finalize();
  return ok ? 0 : 1;
}
