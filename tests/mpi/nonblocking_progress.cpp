// Nonblocking collectives must complete whatever the application does while they are outstanding:
// the shim's schedules progress only inside MPI calls, so each case is a way of (not) calling MPI.
// Every result is checked against values computed in advance (nonblocking_calls.hpp).
//
// usage: nonblocking_progress CASE, one of
//   wait              every rank starts each collective and waits on it
//   test_loop         every rank computes between MPI_Test calls until all its collectives are done
//   blocking_recv     rank 0 waits on a collective while rank 1, which started it too, sits in a blocking
//                     MPI_Recv whose send rank 0 makes only after its wait returned: rank 1's part of the
//                     schedule must progress inside that MPI_Recv
//   many_outstanding  collectives of every kind and several sizes outstanding on one communicator at
//                     once, completed in reverse order, then in an order of each rank's own
//   communicators     collectives outstanding on several communicators (dups, splits) at once, then
//                     from several threads under MPI_THREAD_MULTIPLE, each on its own communicator
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "nonblocking_calls.hpp"

using nonblocking::Call;
using nonblocking::Kind;

namespace {

struct Counts {
  long passed = 0;
  long failed = 0;

  void check(const Call& call, const std::string& context) {
    if (call.correct() && call.request == MPI_REQUEST_NULL) {
      ++passed;
      return;
    }
    ++failed;
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::printf("FAIL rank %d: %s %s: %s\n", rank, context.c_str(), call.what.c_str(),
                call.rc != MPI_SUCCESS             ? "the call failed"
                : call.request != MPI_REQUEST_NULL ? "request still set after completion"
                                                   : "wrong result");
  }
};

const std::vector<int> sizes = {1, 100, 20000};  // 20000 long longs per block: past every eager limit

void wait_case(Counts& counts) {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  int salt = 0;
  for (Kind kind : nonblocking::all_kinds()) {
    for (int n : sizes) {
      auto call = nonblocking::start(kind, comm, n, ++salt);
      MPI_Wait(&call->request, MPI_STATUS_IGNORE);
      counts.check(*call, "wait");
    }
  }
  MPI_Comm_free(&comm);
}

// Work between the tests, whose result is printed so the compiler keeps it.
double compute(int steps) {
  double x = 1.0;
  for (int i = 0; i < steps; ++i) x = x * 1.0000001 + 1e-9;
  return x;
}

void test_loop_case(Counts& counts) {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  int rank;
  MPI_Comm_rank(comm, &rank);
  int salt = 0;
  double work = 0;
  for (int n : sizes) {
    std::vector<std::unique_ptr<Call>> calls;
    for (Kind kind : nonblocking::all_kinds()) calls.push_back(nonblocking::start(kind, comm, n, ++salt));
    std::size_t done = 0;
    std::vector<bool> finished(calls.size(), false);
    while (done < calls.size()) {
      work += compute(20000 + 5000 * rank);  // ranks test at different paces
      for (std::size_t i = 0; i < calls.size(); ++i) {
        if (finished[i]) continue;
        int flag = 0;
        MPI_Test(&calls[i]->request, &flag, MPI_STATUS_IGNORE);
        if (flag) {
          finished[i] = true;
          ++done;
          counts.check(*calls[i], "test_loop");
        }
      }
    }
  }
  if (work < 0) std::printf("%f\n", work);
  MPI_Comm_free(&comm);
}

void blocking_recv_case(Counts& counts) {
  int p, rank;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (p < 2) return;
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  int salt = 0;
  for (Kind kind : {Kind::allgather, Kind::alltoallv, Kind::allreduce, Kind::allgatherv}) {
    for (int n : sizes) {
      auto call = nonblocking::start(kind, comm, n, ++salt);
      int token = -1;
      if (rank == 0) {
        MPI_Wait(&call->request, MPI_STATUS_IGNORE);
        token = salt;
        MPI_Send(&token, 1, MPI_INT, 1, 77, MPI_COMM_WORLD);
      } else if (rank == 1) {
        MPI_Recv(&token, 1, MPI_INT, 0, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&call->request, MPI_STATUS_IGNORE);
        if (token != salt) {
          ++counts.failed;
          std::printf("FAIL rank 1: blocking_recv %s: token %d, expected %d\n", call->what.c_str(), token, salt);
        }
      } else {
        MPI_Wait(&call->request, MPI_STATUS_IGNORE);
      }
      counts.check(*call, "blocking_recv");
    }
  }
  MPI_Comm_free(&comm);
}

// Starts every kind at every size on `comm`, in one order on all ranks.
std::vector<std::unique_ptr<Call>> start_batch(MPI_Comm comm, int& salt) {
  std::vector<std::unique_ptr<Call>> calls;
  for (int n : sizes)
    for (Kind kind : nonblocking::all_kinds()) calls.push_back(nonblocking::start(kind, comm, n, ++salt));
  return calls;
}

void many_outstanding_case(Counts& counts) {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  int rank;
  MPI_Comm_rank(comm, &rank);
  int salt = 0;
  auto calls = start_batch(comm, salt);
  for (auto it = calls.rbegin(); it != calls.rend(); ++it) {
    MPI_Wait(&(*it)->request, MPI_STATUS_IGNORE);
    counts.check(**it, "many_outstanding reverse");
  }
  std::mt19937 random(1234 + rank);  // each rank its own order
  for (int round = 0; round < 3; ++round) {
    calls = start_batch(comm, salt);
    std::vector<std::size_t> order(calls.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), random);
    for (std::size_t i : order) {
      MPI_Wait(&calls[i]->request, MPI_STATUS_IGNORE);
      counts.check(*calls[i], "many_outstanding random");
    }
  }
  MPI_Comm_free(&comm);
}

void communicators_case(Counts& counts) {
  int p, rank;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // Two dups, a split in halves and a split in reversed order: each rank is in all four.
  std::vector<MPI_Comm> comms(4);
  MPI_Comm_dup(MPI_COMM_WORLD, &comms[0]);
  MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]);
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &comms[2]);
  MPI_Comm_split(MPI_COMM_WORLD, 0, p - rank, &comms[3]);
  std::mt19937 random(99 + rank);
  int salt = 0;
  for (int round = 0; round < 3; ++round) {
    std::vector<std::unique_ptr<Call>> calls;
    for (int n : sizes)
      for (Kind kind : nonblocking::all_kinds())
        for (MPI_Comm comm : comms) calls.push_back(nonblocking::start(kind, comm, n, ++salt));
    std::vector<std::size_t> order(calls.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), random);
    for (std::size_t i : order) {
      MPI_Wait(&calls[i]->request, MPI_STATUS_IGNORE);
      counts.check(*calls[i], "communicators");
    }
  }
  for (MPI_Comm& comm : comms) MPI_Comm_free(&comm);

  // Threads: each its own communicator (made here, in one order on every rank), each with its own
  // collectives outstanding at once, completed by MPI_Test and MPI_Wait in turn.
  const int threads = 4;
  std::vector<MPI_Comm> thread_comms(threads);
  for (MPI_Comm& comm : thread_comms) MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  std::vector<Counts> thread_counts(threads);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      int thread_salt = 1000 * (t + 1);
      for (int round = 0; round < 4; ++round) {
        std::vector<std::unique_ptr<Call>> calls;
        for (Kind kind : nonblocking::all_kinds())
          calls.push_back(nonblocking::start(kind, thread_comms[t], sizes[(round + t) % sizes.size()], ++thread_salt));
        for (std::size_t i = 0; i < calls.size(); ++i) {
          if ((i + t) % 2 == 0) {
            MPI_Wait(&calls[i]->request, MPI_STATUS_IGNORE);
          } else {
            for (int flag = 0; !flag;) MPI_Test(&calls[i]->request, &flag, MPI_STATUS_IGNORE);
          }
          thread_counts[t].check(*calls[i], "thread " + std::to_string(t));
        }
      }
    });
  }
  for (std::thread& worker : workers) worker.join();
  for (const Counts& c : thread_counts) {
    counts.passed += c.passed;
    counts.failed += c.failed;
  }
  for (MPI_Comm& comm : thread_comms) MPI_Comm_free(&comm);
}

}  // namespace

int main(int argc, char** argv) {
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  const std::string which = argc > 1 ? argv[1] : "";
  Counts counts;
  if (which == "wait") {
    wait_case(counts);
  } else if (which == "test_loop") {
    test_loop_case(counts);
  } else if (which == "blocking_recv") {
    blocking_recv_case(counts);
  } else if (which == "many_outstanding") {
    many_outstanding_case(counts);
  } else if (which == "communicators" && provided == MPI_THREAD_MULTIPLE) {
    communicators_case(counts);
  } else {
    ++counts.failed;
    std::printf("FAIL: unknown case '%s'%s\n", which.c_str(),
                provided != MPI_THREAD_MULTIPLE ? " (or no MPI_THREAD_MULTIPLE)" : "");
  }
  long totals[2] = {counts.passed, counts.failed};
  MPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    std::printf("nonblocking_progress %s: %ld checks passed, %ld failed\n", which.c_str(), totals[0], totals[1]);
  MPI_Finalize();
  return totals[1] == 0 && totals[0] > 0 ? 0 : 1;
}
