// A failure inside a nonblocking collective must reach the application through the completion call,
// on the rank where it happened, and leave no rank waiting forever. One rank's Alltoallv counts are
// short (blocks of 2 ints where the others have 4): it receives 4 ints into room for 2, a truncation
// on that rank only (a shorter message than its receive is no error for the others). Under
// MPI_ERRORS_RETURN, MPI_Wait must return an error of class MPI_ERR_TRUNCATE there; MPI_Waitall must
// return MPI_ERR_IN_STATUS with the truncation in the request's status (or the truncation itself).
// Every rank must return (a hang fails on the test's timeout), and a valid call on the same
// communicator afterwards must give the right result.
//
// usage: nonblocking_errors [SHORT_RANK]   (default 1)
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

int error_class(int code) {
  int cls = code;
  if (code != MPI_SUCCESS) MPI_Error_class(code, &cls);
  return cls;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const int short_rank = argc > 1 ? std::atoi(argv[1]) : 1;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int failures = 0, checks = 0;
  const auto expect = [&](bool ok, const std::string& what) {
    ++checks;
    if (ok) return;
    ++failures;
    std::printf("FAIL rank %d: %s\n", rank, what.c_str());
  };
  const int shorter = rank == short_rank ? 2 : 4;
  std::vector<int> out(4 * p, rank), in(4 * p), full(p, 4), short_counts(p, shorter), displs(p);
  for (int i = 0; i < p; ++i) displs[i] = 4 * i;
  for (const std::string completion : {"MPI_Wait", "MPI_Waitall"}) {
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Request request;
    // A valid call first: the shim has this communicator's shadow before the failing one.
    MPI_Ialltoallv(out.data(), full.data(), displs.data(), MPI_INT, in.data(), full.data(), displs.data(), MPI_INT,
                   comm, &request);
    expect(MPI_Wait(&request, MPI_STATUS_IGNORE) == MPI_SUCCESS, completion + ": the valid call before");
    const int start_rc = MPI_Ialltoallv(out.data(), short_counts.data(), displs.data(), MPI_INT, in.data(),
                                        short_counts.data(), displs.data(), MPI_INT, comm, &request);
    int error = start_rc;  // an error may be found at the start already
    if (start_rc == MPI_SUCCESS) {
      if (completion == "MPI_Wait") {
        error = MPI_Wait(&request, MPI_STATUS_IGNORE);
      } else {
        MPI_Status statuses[2];
        MPI_Request requests[2] = {MPI_REQUEST_NULL, request};
        const int rc = MPI_Waitall(2, requests, statuses);
        error = error_class(rc) == MPI_ERR_IN_STATUS ? statuses[1].MPI_ERROR : rc;
        expect(error_class(rc) != MPI_ERR_IN_STATUS || statuses[0].MPI_ERROR == MPI_SUCCESS,
               "MPI_Waitall: the null entry's status carries no error");
      }
    }
    if (rank == short_rank) {
      expect(error_class(error) == MPI_ERR_TRUNCATE, completion + " on the short rank: error class " +
                                                         std::to_string(error_class(error)) +
                                                         ", expected MPI_ERR_TRUNCATE");
    } else {
      expect(error == MPI_SUCCESS || error_class(error) == MPI_ERR_TRUNCATE,
             completion + " on a full rank: error class " + std::to_string(error_class(error)));
    }
    // The communicator still works: block i of a valid exchange is rank i's.
    std::fill(in.begin(), in.end(), -1);
    MPI_Ialltoallv(out.data(), full.data(), displs.data(), MPI_INT, in.data(), full.data(), displs.data(), MPI_INT,
                   comm, &request);
    expect(MPI_Wait(&request, MPI_STATUS_IGNORE) == MPI_SUCCESS, completion + ": the valid call after");
    bool right = true;
    for (int i = 0; i < 4 * p; ++i) right = right && in[i] == i / 4;
    expect(right, completion + ": the valid call after the failed one gives the right result");
    MPI_Comm_free(&comm);
  }
  int totals[2] = {checks - failures, failures};
  MPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("nonblocking_errors: %d checks passed, %d failed\n", totals[0], totals[1]);
  MPI_Finalize();
  return totals[1] == 0 ? 0 : 1;
}
