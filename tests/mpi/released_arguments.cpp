// What a program may do with a nonblocking or persistent collective's arguments once the starting
// call has returned, as mpi4py does (its nonblocking vector tests crashed and hung under the shim's
// algorithms): release the count and displacement arrays at once, free a derived datatype while the
// call is pending (MPI_Type_free: pending communication completes normally), let the allocator hand
// the released memory to the next arrays, and free the buffers right after completion, so that the
// next call's land at the same addresses. Persistent calls (MPI-4's MPI_*_init, Open MPI 4.1's
// MPIX_*_init) are started twice with their arrays released after the init call: the call is bound
// there, as the libraries' own schedules are. Every result is checked against computed values
// (nonblocking_calls.hpp); under ASan a read of a released array or a late write to a freed buffer
// is a heap-use-after-free.
// Prints "released_arguments: N checks passed, M failed".
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "nonblocking_calls.hpp"

using namespace nonblocking;

namespace {

// Overwrites and frees a call's arrays, as a program releasing them does, then takes fresh memory of
// the same sizes filled with other values: a stale pointer reads those (or, under ASan, is reported).
std::vector<std::vector<int>> release_arrays(Call& c) {
  std::vector<std::vector<int>> reused;
  for (std::vector<int>* array : {&c.send_counts, &c.send_displs, &c.recv_counts, &c.recv_displs}) {
    if (array->empty()) continue;
    const std::size_t n = array->size();
    std::fill(array->begin(), array->end(), 0x3fffffff);
    std::vector<int>().swap(*array);
    reused.emplace_back(n, -0x3fffffff);
  }
  return reused;
}

// The element type of a call: a derived type of long long's layout, made for this call alone (and
// freed by the caller while the call is pending); Allreduce's predefined operation needs the
// predefined type.
MPI_Datatype element_type(Kind kind) {
  if (kind == Kind::allreduce) return MPI_LONG_LONG;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(1, MPI_LONG_LONG, &type);
  MPI_Type_commit(&type);
  return type;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int checks = 0, failures = 0;
  const auto expect = [&](bool ok, const std::string& what) {
    ++checks;
    if (ok) return;
    ++failures;
    std::printf("FAIL rank %d: %s\n", rank, what.c_str());
  };

  std::vector<Form> forms = {Form::nonblocking};
#if LIBRARY_HAS_PERSISTENT
  forms.push_back(Form::persistent);
#endif
  for (const Form form : forms) {
    const std::string form_name = form == Form::persistent ? "persistent" : "nonblocking";
    for (const int n : {0, 1, 5}) {  // 0: every block empty
      for (const Kind kind : all_kinds()) {
        for (int salt = 0; salt < 3; ++salt) {
          MPI_Datatype element = element_type(kind);
          auto call = start(kind, MPI_COMM_WORLD, n, salt, form, element);
          const std::string what = form_name + " " + call->what;
          if (element != MPI_LONG_LONG) MPI_Type_free(&element);
          const auto reused = release_arrays(*call);
          if (form == Form::nonblocking) {
            const int rc = MPI_Wait(&call->request, MPI_STATUS_IGNORE);
            expect(rc == MPI_SUCCESS && call->correct(), what);
          } else {
            for (int round = 0; round < 2; ++round) {
              std::fill(call->recv.begin(), call->recv.end(), -77);
              const int started = MPI_Start(&call->request);
              const int rc = MPI_Wait(&call->request, MPI_STATUS_IGNORE);
              expect(started == MPI_SUCCESS && rc == MPI_SUCCESS && call->correct(),
                     what + " start " + std::to_string(round));
            }
            MPI_Request_free(&call->request);
          }
          call.reset();  // the buffers go at once; the next call's may take their addresses
        }
      }
    }
  }

  int all_failures = 0, all_checks = 0;
  MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&checks, &all_checks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("released_arguments: %d checks passed, %d failed\n", all_checks - all_failures, all_failures);
  MPI_Finalize();
  return all_failures == 0 ? 0 : 1;
}
