// Every communicator constructor gives the new communicator the shim's state before the program can
// use it: on each communicator made (MPI_Comm_dup, _dup_with_info, _idup, _split, _split_type,
// _create, _create_group, MPI_Cart_create, MPI_Cart_sub, MPI_Graph_create, MPI_Dist_graph_create,
// _adjacent, MPI_Intercomm_merge; with MPI-4 also MPI_Comm_idup_with_info and
// MPI_Comm_create_from_group) the first calls are MPI_Iallgather, MPI_Iallreduce and MPI_Ialltoallv,
// whose results are checked against the values they must give. The test runs with the algorithms
// forced and a report: a communicator without a state would pass them to the library (the report's
// "passed through, not handled"), and the debug log counts the shim's runs. Ranks a constructor gives
// MPI_COMM_NULL skip. MPI_Comm_idup never waits for the other ranks: one rank sends only after its
// idup to a rank that idups only after receiving, and one rank completes its idup while another sits
// in MPI_Recv, which the first then serves; several idups run at once with a collective between.
//
// usage: made_communicators
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "nonblocking_calls.hpp"

using nonblocking::Call;
using nonblocking::Kind;

namespace {

long passed = 0, failed = 0;
int rank = 0, size = 1;
long made = 0;  // communicators made on this rank and checked

void expect(bool ok, const std::string& what) {
  if (ok) {
    ++passed;
    return;
  }
  ++failed;
  std::printf("FAIL rank %d: %s\n", rank, what.c_str());
}

// The first calls on `comm`, made by `what` (MPI_COMM_NULL: this rank is not in it), checked; then
// it is freed.
void use_and_free(MPI_Comm& comm, const std::string& what, int rc = MPI_SUCCESS) {
  static int constructor = 0;  // the same on every rank, in or out of `comm`: the calls' sizes and data
  const int salt = ++constructor * 10;
  expect(rc == MPI_SUCCESS, what + ": returned " + std::to_string(rc));
  if (comm == MPI_COMM_NULL) return;
  int inter = 1;
  MPI_Comm_test_inter(comm, &inter);
  expect(!inter, what + ": an intracommunicator");
  ++made;
  std::vector<std::unique_ptr<Call>> calls;
  std::vector<MPI_Request> requests;
  int k = 0;
  for (Kind kind : {Kind::allgather, Kind::allreduce, Kind::alltoallv}) {
    calls.push_back(nonblocking::start(kind, comm, 5 + salt % 7 + k, salt + k));
    ++k;
    requests.push_back(calls.back()->request);
  }
  // Errors come back: a failed call is reported as this test's failure, with its error.
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  std::vector<MPI_Status> statuses(requests.size());
  const int waited = MPI_Waitall(static_cast<int>(requests.size()), requests.data(), statuses.data());
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const int error = waited == MPI_ERR_IN_STATUS ? statuses[i].MPI_ERROR : waited;
    expect(error == MPI_SUCCESS && calls[i]->correct(),
           what + ": " + calls[i]->what + " error " + std::to_string(error));
  }
  MPI_Comm_free(&comm);
}

// The ranks of `comm`'s group in reverse order.
MPI_Group reversed_group(MPI_Comm comm, int first = 0) {
  MPI_Group group, chosen;
  MPI_Comm_group(comm, &group);
  std::vector<int> ranks;
  for (int r = size - 1; r >= first; --r) ranks.push_back(r);
  MPI_Group_incl(group, static_cast<int>(ranks.size()), ranks.data(), &chosen);
  MPI_Group_free(&group);
  return chosen;
}

void blocking_constructors() {
  MPI_Comm comm = MPI_COMM_NULL;
  use_and_free(comm, "MPI_Comm_dup", MPI_Comm_dup(MPI_COMM_WORLD, &comm));
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
  use_and_free(comm, "MPI_Comm_dup_with_info", MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &comm));
  // The last rank is in no part; the others in one, in reverse order.
  use_and_free(comm, "MPI_Comm_split",
               MPI_Comm_split(MPI_COMM_WORLD, rank == size - 1 ? MPI_UNDEFINED : 0, -rank, &comm));
  use_and_free(comm, "MPI_Comm_split_type",
               MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, -rank, MPI_INFO_NULL, &comm));
  MPI_Info_free(&info);

  // Rank 0 is outside the group (it gets MPI_COMM_NULL from MPI_Comm_create, and does not call
  // MPI_Comm_create_group).
  MPI_Group group = reversed_group(MPI_COMM_WORLD, 1);
  use_and_free(comm, "MPI_Comm_create", MPI_Comm_create(MPI_COMM_WORLD, group, &comm));
  comm = MPI_COMM_NULL;
  use_and_free(comm, "MPI_Comm_create_group",
               rank == 0 ? MPI_SUCCESS : MPI_Comm_create_group(MPI_COMM_WORLD, group, 7, &comm));
  MPI_Group_free(&group);

  // A ring of all but the last rank, which gets MPI_COMM_NULL.
  const int ring_dims[] = {size - 1}, periodic[] = {1};
  use_and_free(comm, "MPI_Cart_create", MPI_Cart_create(MPI_COMM_WORLD, 1, ring_dims, periodic, 0, &comm));
  // A grid of every rank, cut into its columns (3 ranks: one of 3; 4 ranks: two of 2).
  int grid_dims[2] = {0, 0};
  const int open[] = {0, 0}, column[] = {1, 0};
  MPI_Dims_create(size, 2, grid_dims);
  MPI_Comm grid;
  MPI_Cart_create(MPI_COMM_WORLD, 2, grid_dims, open, 1, &grid);
  use_and_free(comm, "MPI_Cart_sub", MPI_Cart_sub(grid, column, &comm));
  MPI_Comm_free(&grid);

  // A ring as a graph: node i joins i - 1 and i + 1.
  std::vector<int> index, edges;
  for (int i = 0; i < size; ++i) {
    edges.push_back((i + size - 1) % size);
    edges.push_back((i + 1) % size);
    index.push_back(static_cast<int>(edges.size()));
  }
  use_and_free(comm, "MPI_Graph_create", MPI_Graph_create(MPI_COMM_WORLD, size, index.data(), edges.data(), 0, &comm));
  // The same ring as distributed graphs: each rank names its own edges.
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  const int neighbours[] = {left, right}, degree[] = {2};
  use_and_free(
      comm, "MPI_Dist_graph_create",
      MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &rank, degree, neighbours, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &comm));
  use_and_free(comm, "MPI_Dist_graph_create_adjacent",
               MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, neighbours, MPI_UNWEIGHTED, 2, neighbours,
                                              MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &comm));

  // The two halves of the world as an intercommunicator (which gets no state), merged.
  MPI_Comm half, inter;
  const int low = rank < size / 2 ? 1 : 0;
  MPI_Comm_split(MPI_COMM_WORLD, low, rank, &half);
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, low ? size / 2 : 0, 11, &inter);
  use_and_free(comm, "MPI_Intercomm_merge", MPI_Intercomm_merge(inter, low ? 0 : 1, &comm));
  // An intercommunicator's idup gives an intercommunicator: no state, and no hang.
  MPI_Request request;
  const int rc = MPI_Comm_idup(inter, &comm, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  expect(rc == MPI_SUCCESS && comm != MPI_COMM_NULL, "MPI_Comm_idup of an intercommunicator");
  if (rc == MPI_SUCCESS) MPI_Comm_free(&comm);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);

#if MPI_VERSION >= 4
  MPI_Group world_group = reversed_group(MPI_COMM_WORLD);
  use_and_free(comm, "MPI_Comm_create_from_group",
               MPI_Comm_create_from_group(world_group, "collshim.made_communicators", MPI_INFO_NULL,
                                          MPI_ERRORS_ARE_FATAL, &comm));
  MPI_Group_free(&world_group);
#endif
}

void nonblocking_duplicates() {
  // The plain case: every rank waits at once.
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Request request = MPI_REQUEST_NULL;
  int rc = MPI_Comm_idup(MPI_COMM_WORLD, &comm, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  expect(request == MPI_REQUEST_NULL, "MPI_Comm_idup: its request completes");
  use_and_free(comm, "MPI_Comm_idup", rc);
#if MPI_VERSION >= 4
  rc = MPI_Comm_idup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &comm, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  use_and_free(comm, "MPI_Comm_idup_with_info", rc);
#endif

  // The idup never waits for the others: rank 0 sends to rank 1 after its idup, and rank 1 idups
  // only after receiving.
  int token = 0;
  if (rank == 1) MPI_Recv(&token, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  rc = MPI_Comm_idup(MPI_COMM_WORLD, &comm, &request);
  if (rank == 0) MPI_Send(&token, 1, MPI_INT, 1, 5, MPI_COMM_WORLD);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  use_and_free(comm, "MPI_Comm_idup before a send the others wait for", rc);

  // Rank 0 completes its idup while rank 1 sits in MPI_Recv, waiting for what rank 0 sends after.
  rc = MPI_Comm_idup(MPI_COMM_WORLD, &comm, &request);
  if (rank == 1) MPI_Recv(&token, 1, MPI_INT, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  if (rank == 0) MPI_Send(&token, 1, MPI_INT, 1, 6, MPI_COMM_WORLD);
  use_and_free(comm, "MPI_Comm_idup completed while a peer receives", rc);

  // Two idups and a collective outstanding together, completed in another order. The idups are of
  // two communicators: Open MPI 4.1.4's own idups of one communicator, outstanding together, hang
  // now and then without the shim too (open-mpi/ompi#2025).
  MPI_Comm other, first = MPI_COMM_NULL, second = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &other);
  MPI_Request requests[3];
  const int rc_first = MPI_Comm_idup(MPI_COMM_WORLD, &first, &requests[2]);
  auto between = nonblocking::start(Kind::allgather, MPI_COMM_WORLD, 3, 99);
  requests[1] = between->request;
  const int rc_second = MPI_Comm_idup(other, &second, &requests[0]);
  MPI_Waitall(3, requests, MPI_STATUSES_IGNORE);
  expect(between->correct(), "a collective between two idups: " + between->what);
  use_and_free(second, "the second of two outstanding MPI_Comm_idup", rc_second);
  use_and_free(first, "the first of two outstanding MPI_Comm_idup", rc_first);
  MPI_Comm_free(&other);

  // The library's error at the call returns at once.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  comm = MPI_COMM_NULL;
  rc = MPI_Comm_idup(MPI_COMM_NULL, &comm, &request);
  expect(rc != MPI_SUCCESS, "MPI_Comm_idup of MPI_COMM_NULL fails");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 3) {
    if (rank == 0) std::printf("made_communicators: needs 3 ranks or more\n");
    MPI_Finalize();
    return 1;
  }
  blocking_constructors();
  nonblocking_duplicates();
  long totals[3] = {passed, failed, made};
  MPI_Allreduce(MPI_IN_PLACE, totals, 3, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("made_communicators: %ld communicators made, %ld checks passed, %ld failed\n", totals[2], totals[0],
                totals[1]);
  MPI_Finalize();
  return totals[1] == 0 && totals[0] > 0 ? 0 : 1;
}
