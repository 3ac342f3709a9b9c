// Invalid arguments must produce the error native MPI gives, through the communicator's error
// handler, never a crash in the shim. With MPI_ERRORS_RETURN on the communicators, each bad call is
// made through MPI_* (the shim) and PMPI_* (the library); both must fail with the same error class.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

int error_class(int code) {
  int cls = code;
  if (code != MPI_SUCCESS) MPI_Error_class(code, &cls);
  return cls;
}

int handler_calls = 0;
MPI_Comm handler_comm = MPI_COMM_NULL;
void count_error(MPI_Comm* comm, int*, ...) {
  ++handler_calls;
  handler_comm = *comm;
}

// An error inside an algorithm must reach the handler the communicator has at the time of the call,
// here set after the shim made its shadow. The error is a message longer than its receive (rank 0
// sends rank 1 two ints, rank 1 expects one): MPI_ERR_TRUNCATE on rank 1 only. There is no native
// run to compare with: Open MPI's own pairwise Alltoallv leaves the call on the failing rank and the
// others wait forever. The test runs with COLLSHIM_ALLTOALLV=linear and =pairwise, which complete
// every message. Rank 2 sends late, so its message is still in flight when rank 1's truncation is
// seen; it must still have arrived when the call returns (a receive completing after the return
// would write into memory the caller may already have freed).
int algorithm_error_reaches_current_handler(int rank, int p) {
  if (p < 2) return 0;
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  std::vector<int> out(4 * p, rank), in(4 * p), sendcounts(p, 4), recvcounts(p, 4), displs(p);
  for (int i = 0; i < p; ++i) displs[i] = 4 * i;
  MPI_Alltoallv(out.data(), sendcounts.data(), displs.data(), MPI_INT, in.data(), recvcounts.data(), displs.data(),
                MPI_INT, comm);  // valid: the shim now has this communicator's shadow
  MPI_Errhandler handler;
  MPI_Comm_create_errhandler(count_error, &handler);
  MPI_Comm_set_errhandler(comm, handler);
  if (rank == 0) sendcounts[1] = 2;
  if (rank == 1) recvcounts[0] = 1;
  std::fill(in.begin(), in.end(), -1);
  if (rank == 2) std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const int rc = MPI_Alltoallv(out.data(), sendcounts.data(), displs.data(), MPI_INT, in.data(), recvcounts.data(),
                               displs.data(), MPI_INT, comm);
  const bool fails_here = rank == 1;
  int failures = 0;
  if ((rc != MPI_SUCCESS) != fails_here || handler_calls != (fails_here ? 1 : 0) ||
      (fails_here && handler_comm != comm)) {
    ++failures;
    std::printf("FAIL rank %d: truncation inside the algorithm: rc %d, handler calls %d%s\n", rank, rc, handler_calls,
                handler_calls > 0 && handler_comm != comm ? " on another communicator" : "");
  }
  if (rank == 1 && p > 2 && in[8] != 2) {
    ++failures;
    std::printf("FAIL rank 1: the block from rank 2 had not arrived when the failed call returned\n");
  }
  MPI_Comm_free(&comm);
  MPI_Errhandler_free(&handler);
  return failures;
}

// A failed message inside an Allgather schedule must not end the schedule on that rank: the peers
// still wait for its later steps. Rank 1 receives blocks of 2 ints where the others send 4, so only
// rank 1 fails (a shorter message than its receive is no error for the others); every rank must
// return. Without the fix this hangs until the test's timeout.
int algorithm_error_leaves_no_peer_waiting(int rank, int p) {
  if (p < 2) return 0;
  const int count = rank == 1 ? 2 : 4;
  std::vector<int> out(4, rank), in(4 * p, -1);
  const int rc = MPI_Allgather(out.data(), count, MPI_INT, in.data(), count, MPI_INT, MPI_COMM_WORLD);
  if ((rc != MPI_SUCCESS) != (rank == 1)) {
    std::printf("FAIL rank %d: Allgather with rank 1's counts short returned %d\n", rank, rc);
    return 1;
  }
  return 0;
}

// `--truncation [RANK]`: for every collective, the forced algorithm on a call whose rank RANK
// (default 1) has its counts short (blocks of 2 ints where the others have 4). Every rank must return (a hang fails on
// the test's timeout); that rank must fail, through the handler its communicator has at the time of the call, which is
// set after the shim made its shadow. Other ranks need not notice (a shorter message than its receive is no error), but
// if one fails, its handler must be called too. A valid call on the same communicator afterwards must give the right
// result.
int truncation_in_every_collective(int rank, int p, int short_rank) {
  if (p < 2) return 0;
  int failures = 0;
  const auto check = [&](const char* collective, MPI_Comm comm, int rc, int calls_before) {
    const int calls = handler_calls - calls_before;
    const bool ok = rank == short_rank ? rc != MPI_SUCCESS && calls == 1 && handler_comm == comm
                                       : calls == (rc != MPI_SUCCESS ? 1 : 0);
    if (!ok) {
      ++failures;
      std::printf("FAIL rank %d: %s with rank %d's counts short: rc %d, handler calls %d\n", rank, collective,
                  short_rank, rc, calls);
    }
  };
  MPI_Errhandler handler;
  MPI_Comm_create_errhandler(count_error, &handler);
  const int full = 4, shorter = rank == short_rank ? 2 : 4;
  std::vector<int> out(4 * p, rank), in(4 * p), counts(p, full), short_counts(p, shorter), displs(p);
  for (int i = 0; i < p; ++i) displs[i] = 4 * i;
  const auto expect_valid = [&](const std::string& collective) {
    for (int i = 0; i < 4 * p; ++i) {
      if (in[i] != i / 4) {
        ++failures;
        std::printf("FAIL rank %d: %s after the failed call: element %d is %d\n", rank, collective.c_str(), i, in[i]);
        return;
      }
    }
  };
  for (const std::string collective : {"allgather", "allgatherv", "alltoallv"}) {
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    const auto call = [&](int count, const int* each) {
      if (collective == "allgather") return MPI_Allgather(out.data(), count, MPI_INT, in.data(), count, MPI_INT, comm);
      if (collective == "allgatherv")
        return MPI_Allgatherv(out.data(), count, MPI_INT, in.data(), each, displs.data(), MPI_INT, comm);
      return MPI_Alltoallv(out.data(), each, displs.data(), MPI_INT, in.data(), each, displs.data(), MPI_INT, comm);
    };
    call(full, counts.data());  // valid: the shim now has this communicator's shadow
    MPI_Comm_set_errhandler(comm, handler);
    const int calls_before = handler_calls;
    check(collective.c_str(), comm, call(shorter, short_counts.data()), calls_before);
    std::fill(in.begin(), in.end(), -1);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    // Alltoallv: rank r sends its own rank to everyone, so block i of the result is i as for the allgathers.
    if (call(full, counts.data()) != MPI_SUCCESS) {
      ++failures;
      std::printf("FAIL rank %d: %s after the failed call returned an error\n", rank, collective.c_str());
    }
    expect_valid(collective);
    MPI_Comm_free(&comm);
  }
  MPI_Errhandler_free(&handler);
  return failures;
}

// `--own-block [RANK]`: each collective where only rank RANK's copy of its own block truncates: it
// sends 4 ints and expects 2 of its own (Allgatherv, Alltoallv, Gatherv at the root, Scatterv at
// the root); every other block is consistent. That rank must fail through its handler with
// MPI_ERR_TRUNCATE, as Open MPI's own Gatherv does; nobody may hang. An Allreduce
// has one count and type, so its own-block copy cannot truncate: in place or not, it must succeed.
int own_block_truncation(int rank, int p, int short_rank) {
  int failures = 0;
  MPI_Errhandler handler;
  MPI_Comm_create_errhandler(count_error, &handler);
  std::vector<int> out(4 * p, rank), in(4 * p), counts(p, 4), displs(p);
  for (int i = 0; i < p; ++i) displs[i] = 4 * i;
  const bool short_here = rank == short_rank;
  std::vector<int> own_short = counts;  // this rank's view: its own block 2 ints on the short rank
  if (short_here) own_short[rank] = 2;
  struct Case {
    const char* name;
    std::function<int(MPI_Comm)> call;
    bool fails_here;
    bool erroneous_elsewhere = true;
  };
  const std::vector<Case> cases = {
      {"allgatherv",
       [&](MPI_Comm c) {
         return MPI_Allgatherv(out.data(), 4, MPI_INT, in.data(), own_short.data(), displs.data(), MPI_INT, c);
       },
       short_here},
      {"alltoallv",
       [&](MPI_Comm c) {
         return MPI_Alltoallv(out.data(), counts.data(), displs.data(), MPI_INT, in.data(), own_short.data(),
                              displs.data(), MPI_INT, c);
       },
       short_here},
      {"gatherv",
       [&](MPI_Comm c) {
         return MPI_Gatherv(out.data(), 4, MPI_INT, in.data(), own_short.data(), displs.data(), MPI_INT, short_rank, c);
       },
       short_here},
      {"scatterv",
       [&](MPI_Comm c) {
         return MPI_Scatterv(out.data(), counts.data(), displs.data(), MPI_INT, in.data(), short_here ? 2 : 4, MPI_INT,
                             short_rank, c);
       },
       short_here},
      {"allreduce", [&](MPI_Comm c) { return MPI_Allreduce(out.data(), in.data(), 4 * p, MPI_INT, MPI_SUM, c); }, false,
       false},
      {"allreduce in place",
       [&](MPI_Comm c) { return MPI_Allreduce(MPI_IN_PLACE, in.data(), 4 * p, MPI_INT, MPI_SUM, c); }, false, false},
  };
  for (const Case& test : cases) {
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, handler);
    const int calls_before = handler_calls;
    const int rc = test.call(comm);
    const int calls = handler_calls - calls_before;
    // Elsewhere the call is erroneous too (MPI may report it on any rank, as hierarchical:intra=shm
    // does where a node shares the short block): success, or an error through the handler.
    const bool ok = test.fails_here ? error_class(rc) == MPI_ERR_TRUNCATE && calls == 1 && handler_comm == comm
                    : test.erroneous_elsewhere ? calls == (rc != MPI_SUCCESS ? 1 : 0)
                                               : rc == MPI_SUCCESS && calls == 0;
    if (!ok) {
      ++failures;
      std::printf("FAIL rank %d: %s with rank %d's own block short: rc %d (class %d), handler calls %d\n", rank,
                  test.name, short_rank, rc, error_class(rc), calls);
    }
    MPI_Comm_free(&comm);
  }
  MPI_Errhandler_free(&handler);
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int p, rank;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  if (argc > 1 && std::string(argv[1]) == "--own-block") {
    const int short_rank = argc > 2 ? std::atoi(argv[2]) : 0;
    int failures = own_block_truncation(rank, p, short_rank);
    MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) std::printf("error_semantics --own-block: %d passed, %d failed\n", failures == 0 ? 6 : 0, failures);
    MPI_Finalize();
    return failures == 0 ? 0 : 1;
  }
  if (argc > 1 && std::string(argv[1]) == "--truncation") {
    const int short_rank = argc > 2 ? std::atoi(argv[2]) : 1;
    int failures = truncation_in_every_collective(rank, p, short_rank);
    MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) std::printf("error_semantics --truncation: %d passed, %d failed\n", failures == 0 ? 3 : 0, failures);
    MPI_Finalize();
    return failures == 0 ? 0 : 1;
  }

  std::vector<int> out(4 * p, rank), in(4 * p), counts(p, 4), bad_counts(p, 4), displs(p);
  for (int i = 0; i < p; ++i) displs[i] = 4 * i;
  bad_counts[p - 1] = -1;
  struct Case {
    std::string name;
    std::function<int(bool shim)> call;
  };
  const std::vector<Case> cases = {
      {"allgather negative count",
       [&](bool shim) {
         return (shim ? MPI_Allgather : PMPI_Allgather)(out.data(), -1, MPI_INT, in.data(), -1, MPI_INT,
                                                        MPI_COMM_WORLD);
       }},
      {"allgather null datatype",
       [&](bool shim) {
         return (shim ? MPI_Allgather : PMPI_Allgather)(out.data(), 4, MPI_DATATYPE_NULL, in.data(), 4,
                                                        MPI_DATATYPE_NULL, MPI_COMM_WORLD);
       }},
      {"allgatherv negative count",
       [&](bool shim) {
         // Every rank's own count is invalid, so every rank fails its local argument check.
         return (shim ? MPI_Allgatherv : PMPI_Allgatherv)(out.data(), -1, MPI_INT, in.data(), bad_counts.data(),
                                                          displs.data(), MPI_INT, MPI_COMM_WORLD);
       }},
      {"allgatherv null datatype",
       [&](bool shim) {
         return (shim ? MPI_Allgatherv : PMPI_Allgatherv)(out.data(), 4, MPI_INT, in.data(), counts.data(),
                                                          displs.data(), MPI_DATATYPE_NULL, MPI_COMM_WORLD);
       }},
      {"alltoallv negative count",
       [&](bool shim) {
         return (shim ? MPI_Alltoallv : PMPI_Alltoallv)(out.data(), bad_counts.data(), displs.data(), MPI_INT,
                                                        in.data(), bad_counts.data(), displs.data(), MPI_INT,
                                                        MPI_COMM_WORLD);
       }},
      {"alltoallv null datatype",
       [&](bool shim) {
         return (shim ? MPI_Alltoallv : PMPI_Alltoallv)(out.data(), counts.data(), displs.data(), MPI_DATATYPE_NULL,
                                                        in.data(), counts.data(), displs.data(), MPI_INT,
                                                        MPI_COMM_WORLD);
       }},
  };
  int failures = 0;
  // MPI_COMM_NULL: Open MPI 4.1.4's own MPI_Allgather crashes on it, so there is no native result to
  // compare with; the shim must return MPI_ERR_COMM through the error handler instead.
  for (const char* name : {"allgather", "allgatherv", "alltoallv"}) {
    const std::string which = name;
    const int rc = which == "allgather"    ? MPI_Allgather(out.data(), 4, MPI_INT, in.data(), 4, MPI_INT, MPI_COMM_NULL)
                   : which == "allgatherv" ? MPI_Allgatherv(out.data(), 4, MPI_INT, in.data(), counts.data(),
                                                            displs.data(), MPI_INT, MPI_COMM_NULL)
                                           : MPI_Alltoallv(out.data(), counts.data(), displs.data(), MPI_INT, in.data(),
                                                           counts.data(), displs.data(), MPI_INT, MPI_COMM_NULL);
    if (error_class(rc) != MPI_ERR_COMM) {
      ++failures;
      std::printf("FAIL rank %d: %s on MPI_COMM_NULL returned class %d, expected MPI_ERR_COMM\n", rank, name,
                  error_class(rc));
    }
  }
  for (const Case& c : cases) {
    const int native = error_class(c.call(false));
    const int shim = error_class(c.call(true));
    if (native == MPI_SUCCESS || shim != native) {
      ++failures;
      std::printf("FAIL rank %d: %s: native error class %d, shim %d\n", rank, c.name.c_str(), native, shim);
    }
  }
  failures += algorithm_error_reaches_current_handler(rank, p);
  failures += algorithm_error_leaves_no_peer_waiting(rank, p);
  // A valid call still works afterwards.
  MPI_Allgather(out.data(), 4, MPI_INT, in.data(), 4, MPI_INT, MPI_COMM_WORLD);
  for (int i = 0; i < 4 * p; ++i) {
    if (in[i] != i / 4) ++failures;
  }
  MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("error_semantics: %d passed, %d failed\n", failures == 0 ? static_cast<int>(cases.size()) + 6 : 0,
                failures);
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
