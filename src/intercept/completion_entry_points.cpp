// The MPI completion calls and the blocking point-to-point calls of libcollshim.so: where the
// nonblocking and persistent collectives the shim runs complete, and where they advance while the
// application waits for something else. Each passes straight to the next definition while the shim
// holds no request (OperationTable::holds_requests) or runs no operation (running): a load and a
// tail call. Otherwise the shim's requests are completed by the shim, the library's by the library,
// in one array as MPI defines (MPI_REQUEST_NULL entries, MPI_UNDEFINED, MPI_ERR_IN_STATUS). A wait
// makes passes (every operation advances, then the library's requests are tested) and, between
// them, blocks inside the library on the union of the requests the operations wait for and its own
// (poll, OperationTable::wait_for_any), so it re-enters the shim only when something completed.
#include <dlfcn.h>
#include <mpi.h>

#include <algorithm>
#include <span>
#include <vector>

#include "intercept/nonblocking_requests.hpp"

#define COLLSHIM_EXPORT extern "C" __attribute__((visibility("default")))

// The calls defined here, with their next definition looked up as entry_points.cpp does.
// clang-format off
#define COLLSHIM_COMPLETION_FUNCTIONS(X)                                                              \
  X(Wait) X(Test) X(Waitall) X(Testall) X(Waitany) X(Testany) X(Waitsome) X(Testsome)                 \
  X(Request_get_status) X(Start) X(Startall) X(Request_free)                                          \
  X(Recv) X(Send) X(Ssend) X(Sendrecv) X(Probe) X(Barrier)
// clang-format on

namespace collshim {
namespace {

struct NextCompletionFunctions {
#define COLLSHIM_NEXT_MEMBER(Name) decltype(&PMPI_##Name) Name = &PMPI_##Name;
  COLLSHIM_COMPLETION_FUNCTIONS(COLLSHIM_NEXT_MEMBER)
#undef COLLSHIM_NEXT_MEMBER
};
NextCompletionFunctions next_call;

// A finished operation's error goes to its communicator's error handler, as the library's would.
// (The communicator is taken before the operation finishes: a nonblocking one is gone after.)
int raised(MPI_Comm comm, int rc) {
  if (rc != MPI_SUCCESS) PMPI_Comm_call_errhandler(comm, rc);
  return rc;
}

// A pass's working arrays, kept per thread so that a pass allocates nothing once warm (each thread
// holds at most one pass at a time: nothing a pass calls completes requests of the shim).
struct PassStorage {
  std::vector<MPI_Request> requests;
  std::vector<OperationTable::Record*> ours;
  std::vector<int> errors;
  std::vector<int> indices;
  std::vector<MPI_Status> statuses;
};
thread_local PassStorage pass_storage;

// The library's part of a request array: the shim's requests replaced by MPI_REQUEST_NULL.
struct LibraryRequests {
  std::vector<MPI_Request>& requests = pass_storage.requests;
  std::vector<OperationTable::Record*>& ours = pass_storage.ours;
  bool any_ours = false;
  bool ours_active = false;  // some request of the shim is active (started, not yet completed by a call)

  LibraryRequests(OperationTable& table, int count, const MPI_Request* array) {
    requests.assign(array, array + count);
    ours.assign(static_cast<std::size_t>(count), nullptr);
    for (int i = 0; i < count; ++i) {
      ours[i] = table.find(array[i]);
      if (ours[i] == nullptr) continue;
      any_ours = true;
      ours_active = ours_active || ours[i]->active;
      requests[i] = MPI_REQUEST_NULL;
    }
  }
  // The library's requests as its call left them (a completed nonblocking one is null now).
  void write_back(MPI_Request* array) const {
    for (std::size_t i = 0; i < ours.size(); ++i) {
      if (ours[i] == nullptr) array[i] = requests[i];
    }
  }
};

// A request of the library's that a wait completed while blocking in the library
// (OperationTable::wait_for_any), before the rest of its array: Waitall reports it at the end.
struct EarlyCompletion {
  int index;
  MPI_Status status;
  int rc;
};

MPI_Status* status_at(MPI_Status* statuses, int index) {
  return statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[index];
}

// Waitall and Testall: complete all or none. Returns true when done (`rc` then holds the result).
bool all_pass(OperationTable& table, int count, MPI_Request* array, MPI_Status* statuses,
              std::span<const EarlyCompletion> early, int& rc) {
  OperationTable::advance_if_running();
  LibraryRequests split(table, count, array);
  for (const OperationTable::Record* record : split.ours) {
    if (record != nullptr && record->active && !record->complete) return false;
  }
  int flag = 1;
  rc = next_call.Testall(count, split.requests.data(), &flag, statuses);
  if (!flag && rc == MPI_SUCCESS) return false;
  split.write_back(array);
  bool early_failed = false;
  for (const EarlyCompletion& completed : early) {
    if (statuses != MPI_STATUSES_IGNORE) statuses[completed.index] = completed.status;
    early_failed = early_failed || completed.rc != MPI_SUCCESS;
  }
  MPI_Comm failed = MPI_COMM_NULL;
  std::vector<int>& errors = pass_storage.errors;
  errors.assign(static_cast<std::size_t>(count), MPI_SUCCESS);
  for (const EarlyCompletion& completed : early) errors[completed.index] = completed.rc;
  for (int i = 0; i < count; ++i) {
    OperationTable::Record* record = split.ours[i];
    if (record == nullptr) continue;
    const MPI_Comm comm = record->operation->comm();
    if (!record->active) {
      set_empty_status(status_at(statuses, i));
      continue;
    }
    errors[i] = table.finish(&array[i], *record, status_at(statuses, i));
    if (errors[i] != MPI_SUCCESS && failed == MPI_COMM_NULL) failed = comm;
  }
  if (failed == MPI_COMM_NULL && !early_failed) return true;
  // MPI_ERR_IN_STATUS: each status says how its request ended.
  if (statuses != MPI_STATUSES_IGNORE) {
    for (int i = 0; i < count; ++i) {
      if (split.ours[i] != nullptr || errors[i] != MPI_SUCCESS) {
        statuses[i].MPI_ERROR = errors[i];
      } else if (rc == MPI_SUCCESS) {
        statuses[i].MPI_ERROR = MPI_SUCCESS;
      }
    }
  }
  // (A request of the library's that failed early was raised by the library then.)
  rc = failed != MPI_COMM_NULL ? raised(failed, MPI_ERR_IN_STATUS) : MPI_ERR_IN_STATUS;
  return true;
}

// Waitany and Testany: one request completes, or none is active (index MPI_UNDEFINED).
bool any_pass(OperationTable& table, int count, MPI_Request* array, int* index, MPI_Status* status, int& rc) {
  OperationTable::advance_if_running();
  LibraryRequests split(table, count, array);
  for (int i = 0; i < count; ++i) {
    OperationTable::Record* record = split.ours[i];
    if (record == nullptr || !record->active || !record->complete) continue;
    *index = i;
    const MPI_Comm comm = record->operation->comm();
    rc = raised(comm, table.finish(&array[i], *record, status));
    return true;
  }
  int flag = 1;
  int found = MPI_UNDEFINED;
  rc = next_call.Testany(count, split.requests.data(), &found, &flag, status);
  if (rc != MPI_SUCCESS || (flag && found != MPI_UNDEFINED)) {
    split.write_back(array);
    *index = found;
    return true;
  }
  if (flag && !split.ours_active) {  // nothing active anywhere in the array
    *index = MPI_UNDEFINED;
    set_empty_status(status);
    return true;
  }
  return false;
}

// Waitsome and Testsome: every request complete now, at least one; none active: MPI_UNDEFINED.
bool some_pass(OperationTable& table, int count, MPI_Request* array, int* outcount, int* indices, MPI_Status* statuses,
               int& rc) {
  OperationTable::advance_if_running();
  LibraryRequests split(table, count, array);
  int done = 0;
  MPI_Comm failed = MPI_COMM_NULL;
  std::vector<int>& errors = pass_storage.errors;
  errors.clear();
  for (int i = 0; i < count; ++i) {
    OperationTable::Record* record = split.ours[i];
    if (record == nullptr || !record->active || !record->complete) continue;
    const MPI_Comm comm = record->operation->comm();
    const int error = table.finish(&array[i], *record, status_at(statuses, done));
    if (error != MPI_SUCCESS && failed == MPI_COMM_NULL) failed = comm;
    errors.push_back(error);
    indices[done++] = i;
  }
  int library_done = 0;
  std::vector<int>& library_indices = pass_storage.indices;
  std::vector<MPI_Status>& library_statuses = pass_storage.statuses;
  if (library_indices.size() < static_cast<std::size_t>(count)) library_indices.resize(static_cast<std::size_t>(count));
  if (library_statuses.size() < static_cast<std::size_t>(count))
    library_statuses.resize(static_cast<std::size_t>(count));
  rc = next_call.Testsome(count, split.requests.data(), &library_done, library_indices.data(), library_statuses.data());
  if (library_done == MPI_UNDEFINED) {
    if (done == 0 && !split.ours_active) {
      *outcount = MPI_UNDEFINED;
      return true;
    }
    library_done = 0;
  }
  split.write_back(array);
  for (int k = 0; k < library_done; ++k) {
    if (statuses != MPI_STATUSES_IGNORE) statuses[done + k] = library_statuses[k];
    indices[done + k] = library_indices[k];
  }
  if (done + library_done == 0 && rc == MPI_SUCCESS) return false;
  *outcount = done + library_done;
  if (failed != MPI_COMM_NULL) {
    if (statuses != MPI_STATUSES_IGNORE) {
      for (int k = 0; k < done; ++k) statuses[k].MPI_ERROR = errors[k];
      for (int k = 0; k < library_done && rc == MPI_SUCCESS; ++k) statuses[done + k].MPI_ERROR = MPI_SUCCESS;
    }
    rc = raised(failed, MPI_ERR_IN_STATUS);
  }
  return true;
}

// Wait and Test of one request.
bool one_pass(OperationTable& table, MPI_Request* request, MPI_Status* status, int& rc) {
  OperationTable::advance_if_running();
  OperationTable::Record* record = table.find(*request);
  if (record == nullptr) {
    int flag = 1;
    rc = next_call.Test(request, &flag, status);
    return rc != MPI_SUCCESS || flag;
  }
  if (!record->active) {  // an inactive persistent request: complete at once, empty status
    set_empty_status(status);
    rc = MPI_SUCCESS;
    return true;
  }
  if (!record->complete) return false;
  const MPI_Comm comm = record->operation->comm();
  rc = raised(comm, table.finish(request, *record, status));
  return true;
}

// A wait's own requests completed in the library: Wait and Waitany return the one, Waitsome reports
// it alone (MPI lets it return any nonempty subset), Waitall keeps it for the end.
void copy_status(MPI_Status* to, const MPI_Status& from) {
  if (to != MPI_STATUS_IGNORE) *to = from;
}

}  // namespace
}  // namespace collshim

using namespace collshim;

COLLSHIM_EXPORT int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  if (!OperationTable::holds_requests()) return next_call.Wait(request, status);
  return poll(
      true, std::span(request, 1), [&](OperationTable& table, int& rc) { return one_pass(table, request, status, rc); },
      [&](int, const MPI_Status& completed, int) {
        copy_status(status, completed);
        return true;
      });
}

COLLSHIM_EXPORT int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  if (!OperationTable::holds_requests()) return next_call.Test(request, flag, status);
  return test_once(
      [&](OperationTable& table, int& rc) { return *flag = one_pass(table, request, status, rc) ? 1 : 0; });
}

COLLSHIM_EXPORT int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  if (!OperationTable::holds_requests()) return next_call.Waitall(count, requests, statuses);
  std::vector<EarlyCompletion> early;  // grows only as requests complete while the wait blocks
  return poll(
      true, std::span(requests, static_cast<std::size_t>(std::max(count, 0))),
      [&](OperationTable& table, int& rc) { return all_pass(table, count, requests, statuses, early, rc); },
      [&](int index, const MPI_Status& completed, int rc) {
        early.push_back({index, completed, rc});
        return false;
      });
}

COLLSHIM_EXPORT int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  if (!OperationTable::holds_requests()) return next_call.Testall(count, requests, flag, statuses);
  return test_once([&](OperationTable& table, int& rc) {
    return *flag = all_pass(table, count, requests, statuses, {}, rc) ? 1 : 0;
  });
}

COLLSHIM_EXPORT int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  if (!OperationTable::holds_requests()) return next_call.Waitany(count, requests, index, status);
  return poll(
      true, std::span(requests, static_cast<std::size_t>(std::max(count, 0))),
      [&](OperationTable& table, int& rc) { return any_pass(table, count, requests, index, status, rc); },
      [&](int completed_index, const MPI_Status& completed, int) {
        *index = completed_index;
        copy_status(status, completed);
        return true;
      });
}

COLLSHIM_EXPORT int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
  if (!OperationTable::holds_requests()) return next_call.Testany(count, requests, index, flag, status);
  *flag = 0;
  *index = MPI_UNDEFINED;
  return test_once([&](OperationTable& table, int& rc) {
    return *flag = any_pass(table, count, requests, index, status, rc) ? 1 : 0;
  });
}

COLLSHIM_EXPORT int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                                 MPI_Status statuses[]) {
  if (!OperationTable::holds_requests()) return next_call.Waitsome(incount, requests, outcount, indices, statuses);
  return poll(
      true, std::span(requests, static_cast<std::size_t>(std::max(incount, 0))),
      [&](OperationTable& table, int& rc) {
        return some_pass(table, incount, requests, outcount, indices, statuses, rc);
      },
      [&](int index, const MPI_Status& completed, int& rc) {
        *outcount = 1;
        indices[0] = index;
        if (statuses != MPI_STATUSES_IGNORE) statuses[0] = completed;
        if (rc != MPI_SUCCESS) {
          if (statuses != MPI_STATUSES_IGNORE) statuses[0].MPI_ERROR = rc;
          rc = MPI_ERR_IN_STATUS;
        }
        return true;
      });
}

COLLSHIM_EXPORT int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                                 MPI_Status statuses[]) {
  if (!OperationTable::holds_requests()) return next_call.Testsome(incount, requests, outcount, indices, statuses);
  *outcount = 0;
  return test_once([&](OperationTable& table, int& rc) {
    if (!some_pass(table, incount, requests, outcount, indices, statuses, rc)) *outcount = 0;
    return true;
  });
}

COLLSHIM_EXPORT int MPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  if (!OperationTable::holds_requests()) return next_call.Request_get_status(request, flag, status);
  return test_once([&](OperationTable& table, int& rc) {
    OperationTable::advance_if_running();
    const OperationTable::Record* record = table.find(request);
    if (record == nullptr) {
      rc = next_call.Request_get_status(request, flag, status);
      return true;
    }
    *flag = !record->active || record->complete ? 1 : 0;
    if (*flag) set_empty_status(status);
    rc = MPI_SUCCESS;
    return true;
  });
}

COLLSHIM_EXPORT int MPI_Start(MPI_Request* request) {
  if (!OperationTable::holds_requests()) return next_call.Start(request);
  return test_once([&](OperationTable& table, int& rc) {
    OperationTable::Record* record = table.find(*request);
    if (record == nullptr) {
      rc = next_call.Start(request);
    } else if (record->active) {  // MPI: starting an active request is erroneous
      rc = raised(record->operation->comm(), MPI_ERR_REQUEST);
    } else {
      table.start(*request, *record);
      rc = MPI_SUCCESS;
    }
    return true;
  });
}

COLLSHIM_EXPORT int MPI_Startall(int count, MPI_Request requests[]) {
  if (!OperationTable::holds_requests()) return next_call.Startall(count, requests);
  int first_error = MPI_SUCCESS;
  for (int i = 0; i < count; ++i) {
    const int rc = MPI_Start(&requests[i]);
    if (first_error == MPI_SUCCESS) first_error = rc;
  }
  return first_error;
}

COLLSHIM_EXPORT int MPI_Request_free(MPI_Request* request) {
  if (!OperationTable::holds_requests()) return next_call.Request_free(request);
  return test_once([&](OperationTable& table, int& rc) {
    OperationTable::Record* record = table.find(*request);
    rc = MPI_SUCCESS;
    if (record == nullptr) {
      rc = next_call.Request_free(request);
    } else {
      table.free(request, *record);
    }
    return true;
  });
}

// The blocking calls in which an application most often sits while a peer waits for a collective
// of the shim: they poll while operations run. Others (MPI_Bcast, MPI_Mrecv, ...) do not advance the
// shim's operations: docs/nonblocking.md says so, and what to do.
COLLSHIM_EXPORT int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
                             MPI_Status* status) {
  if (!OperationTable::running()) return next_call.Recv(buf, count, type, source, tag, comm, status);
  MPI_Request request = MPI_REQUEST_NULL;
  const int rc = PMPI_Irecv(buf, count, type, source, tag, comm, &request);
  return rc != MPI_SUCCESS ? rc : complete_advancing(&request, status);
}

COLLSHIM_EXPORT int MPI_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  if (!OperationTable::running()) return next_call.Send(buf, count, type, dest, tag, comm);
  MPI_Request request = MPI_REQUEST_NULL;
  const int rc = PMPI_Isend(buf, count, type, dest, tag, comm, &request);
  return rc != MPI_SUCCESS ? rc : complete_advancing(&request, MPI_STATUS_IGNORE);
}

COLLSHIM_EXPORT int MPI_Ssend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  if (!OperationTable::running()) return next_call.Ssend(buf, count, type, dest, tag, comm);
  MPI_Request request = MPI_REQUEST_NULL;
  const int rc = PMPI_Issend(buf, count, type, dest, tag, comm, &request);
  return rc != MPI_SUCCESS ? rc : complete_advancing(&request, MPI_STATUS_IGNORE);
}

COLLSHIM_EXPORT int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                                 MPI_Comm comm, MPI_Status* status) {
  if (!OperationTable::running())
    return next_call.Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                              recvtag, comm, status);
  MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  int rc = PMPI_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &requests[0]);
  if (rc == MPI_SUCCESS) rc = PMPI_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &requests[1]);
  if (rc != MPI_SUCCESS) {
    if (requests[0] != MPI_REQUEST_NULL) PMPI_Cancel(&requests[0]);
    PMPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
    return rc;
  }
  const int sent = complete_advancing(&requests[1], MPI_STATUS_IGNORE);
  const int received = complete_advancing(&requests[0], status);
  return received != MPI_SUCCESS ? received : sent;
}

COLLSHIM_EXPORT int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  if (!OperationTable::running()) return next_call.Probe(source, tag, comm, status);
  // No request stands for a probe, so this one polls, offering the processor between passes.
  for (;;) {
    int flag = 0;
    const int rc = test_once([&](OperationTable&, int& result) {
      OperationTable::advance_if_running();
      result = PMPI_Iprobe(source, tag, comm, &flag, status);
      return true;
    });
    if (rc != MPI_SUCCESS || flag) return rc;
    sched_yield();
  }
}

COLLSHIM_EXPORT int MPI_Barrier(MPI_Comm comm) {
  if (!OperationTable::running()) return next_call.Barrier(comm);
  MPI_Request request = MPI_REQUEST_NULL;
  const int rc = PMPI_Ibarrier(comm, &request);
  return rc != MPI_SUCCESS ? rc : complete_advancing(&request, MPI_STATUS_IGNORE);
}

// Runs when the library is loaded, before the program's main.
[[gnu::constructor]] static void collshim_look_up_next_completion_functions() {
#define COLLSHIM_LOOK_UP(Name)                                                 \
  if (void* found = dlsym(RTLD_NEXT, "MPI_" #Name);                            \
      found != nullptr && found != reinterpret_cast<const void*>(&MPI_##Name)) \
    next_call.Name = reinterpret_cast<decltype(next_call.Name)>(found);
  COLLSHIM_COMPLETION_FUNCTIONS(COLLSHIM_LOOK_UP)
#undef COLLSHIM_LOOK_UP
}
