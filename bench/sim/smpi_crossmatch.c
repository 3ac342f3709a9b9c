/* SMPI's `impi` selector delivers one communicator's message to another's receive. No collshim here:
 * a plain MPI program that broadcasts on a duplicate of MPI_COMM_WORLD, splits it once, and
 * broadcasts on it again. Every MPI library keeps the communicators apart; under SimGrid 3.32 with
 * `smpi/coll-selector:impi` on 64 ranks of the contending platforms, the second broadcast matches the
 * new communicator's internal broadcast of its id (SMPI matches any message to a communicator whose
 * id is MPI_UNDEFINED: the node and leader helpers its SMP-aware collectives create, and a
 * communicator whose id is still being broadcast), and the run aborts with MPI_ERR_TRUNCATE or, with
 * collshim's larger traffic, deadlocks. docs/simulation.md ("Caveats") gives the command.
 *
 * usage: smpi_crossmatch [RANKS_PER_NODE]   (the split's colour: rank / RANKS_PER_NODE, default 8) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int per_node = argc > 1 ? atoi(argv[1]) : 8;
  MPI_Comm duplicate = MPI_COMM_NULL, node = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &duplicate);
  char payload[440]; /* the size of collshim's broadcast verdict */
  long wrong = 0;
  for (int round = 0; round < 2; ++round) {
    memset(payload, rank == 0 ? 'A' + round : 0, sizeof payload);
    MPI_Bcast(payload, sizeof payload, MPI_BYTE, 0, duplicate);
    for (size_t i = 0; i < sizeof payload; ++i) wrong += payload[i] != 'A' + round;
    if (round == 0) MPI_Comm_split(duplicate, rank / per_node, rank, &node);
  }
  long total = 0;
  MPI_Reduce(&wrong, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("smpi_crossmatch: %ld bytes differ from the root's broadcast\n", total);
  MPI_Comm_free(&node);
  MPI_Comm_free(&duplicate);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
