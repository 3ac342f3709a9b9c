#pragma once
// The Fortran completion calls (MPI_WAIT, MPI_WAITALL, MPI_WAITANY, MPI_WAITSOME, MPI_TEST,
// MPI_TESTALL, MPI_TESTANY, MPI_TESTSOME, MPI_REQUEST_GET_STATUS, MPI_START, MPI_STARTALL,
// MPI_REQUEST_FREE) as the bindings that define them convert them: Open MPI's mpif.h, `use mpi`
// and `use mpi_f08` (fortran_request_entry_points.cpp), MPICH's `use mpi_f08`
// (fortran_f08_mpich.cpp). A request the shim's nonblocking or persistent collectives return
// completes only in the shim's C MPI_Wait and friends, and those bindings call PMPI_Wait and the
// rest directly, so the shim defines them itself.
//
// Each converts as Open MPI's ompi_wait_f and friends do (ompi/mpi/fortran/mpif-h/wait_f.c, ...):
// request arrays through MPI_Request_f2c and back through MPI_Request_c2f (a completed nonblocking
// request comes back as MPI_REQUEST_NULL, a persistent one as itself), statuses unless the program
// passed MPI_STATUS(ES)_IGNORE, 1-based indices with MPI_UNDEFINED kept, LOGICAL flags; then calls
// the C MPI_* function through the dynamic linker, so a Fortran call takes the path of the same
// call from C. The binding's statuses differ: `Conventions` says how a Fortran status is laid out
// and which addresses are its MPI_STATUS_IGNORE and MPI_STATUSES_IGNORE:
//
//   struct Conventions {
//     static constexpr std::size_t status_size;  // MPI_Fints per Fortran status
//     static bool status_ignored(const MPI_Fint* status);
//     static bool statuses_ignored(const MPI_Fint* statuses);
//     static void write_status(const MPI_Status& c_status, MPI_Fint* status);
//   };
//
// COLLSHIM_FORTRAN_REQUEST_CALLS(Conventions) defines collshim_<call>_f for the twelve, which the
// file exports under the binding's names.
#include <mpi.h>

#include <cstddef>
#include <vector>

#include "intercept/fortran_abi.hpp"

namespace collshim::fortran {

// A default LOGICAL has the size of a default INTEGER. The MPI library is built with the program's
// Fortran compiler, and gfortran's .TRUE. is 1 (Open MPI's configure measures it as
// OMPI_FORTRAN_VALUE_TRUE; MPICH's f08 bindings assign Fortran's .TRUE.).
using Logical = MPI_Fint;
inline constexpr Logical fortran_true = 1;

inline Logical to_logical(int flag) { return flag != 0 ? fortran_true : 0; }

// A C index as Fortran's 1-based one; MPI_UNDEFINED stays.
inline MPI_Fint to_fortran_index(int index) {
  return static_cast<MPI_Fint>(index == MPI_UNDEFINED ? index : index + 1);
}

// The calls that complete requests report MPI_ERR_IN_STATUS when some failed: the requests and
// statuses are then as meaningful as on success.
inline bool requests_updated(int rc) { return rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS; }

inline std::size_t array_size(MPI_Fint count) { return count > 0 ? static_cast<std::size_t>(count) : 0; }

// Fortran request handles as C handles for the call, and back.
class Requests {
 public:
  Requests(MPI_Fint* handles, MPI_Fint count) : handles_(handles), requests_(array_size(count)) {
    for (std::size_t i = 0; i < requests_.size(); ++i) requests_[i] = PMPI_Request_f2c(handles_[i]);
  }
  MPI_Request* get() { return requests_.data(); }
  void write_back(int i) { handles_[i] = PMPI_Request_c2f(requests_[static_cast<std::size_t>(i)]); }
  void write_back_all() {
    for (std::size_t i = 0; i < requests_.size(); ++i) write_back(static_cast<int>(i));
  }

 private:
  MPI_Fint* handles_;
  std::vector<MPI_Request> requests_;
};

// One Fortran status: C's MPI_STATUS_IGNORE for Fortran's.
template <class Conventions>
class Status {
 public:
  explicit Status(MPI_Fint* status) : status_(Conventions::status_ignored(status) ? nullptr : status) {}
  MPI_Status* get() { return status_ == nullptr ? MPI_STATUS_IGNORE : &c_status_; }
  void write_back() {
    if (status_ != nullptr) Conventions::write_status(c_status_, status_);
  }

 private:
  MPI_Fint* status_;
  MPI_Status c_status_{};
};

// An array of Fortran statuses: C's MPI_STATUSES_IGNORE for Fortran's.
template <class Conventions>
class Statuses {
 public:
  Statuses(MPI_Fint* statuses, MPI_Fint count)
      : statuses_(Conventions::statuses_ignored(statuses) ? nullptr : statuses),
        c_statuses_(statuses_ == nullptr ? 0 : array_size(count)) {}
  MPI_Status* get() { return statuses_ == nullptr ? MPI_STATUSES_IGNORE : c_statuses_.data(); }
  // The first n statuses (Waitsome's and Testsome's outcount, or all).
  void write_back(int n) {
    if (statuses_ == nullptr) return;
    for (std::size_t i = 0; i < static_cast<std::size_t>(n) && i < c_statuses_.size(); ++i) {
      Conventions::write_status(c_statuses_[i], statuses_ + i * Conventions::status_size);
    }
  }

 private:
  MPI_Fint* statuses_;
  std::vector<MPI_Status> c_statuses_;
};

// The Wait calls in the shape of the Test ones, so one template serves both: a Wait has completed
// whenever it returns.
inline int wait_one(MPI_Request* request, int* flag, MPI_Status* status) {
  *flag = 1;
  return MPI_Wait(request, status);
}
inline int wait_all(int count, MPI_Request* requests, int* flag, MPI_Status* statuses) {
  *flag = 1;
  return MPI_Waitall(count, requests, statuses);
}
inline int wait_any(int count, MPI_Request* requests, int* index, int* flag, MPI_Status* status) {
  *flag = 1;
  return MPI_Waitany(count, requests, index, status);
}

// MPI_WAIT and MPI_TEST (flag null for a Wait, which has none).
template <class Conventions, auto complete>
void complete_one(MPI_Fint* request, Logical* flag, MPI_Fint* status, MPI_Fint* ierr) {
  Requests requests(request, 1);
  Status<Conventions> c_status(status);
  int done = 0;
  const int rc = complete(requests.get(), &done, c_status.get());
  if (rc == MPI_SUCCESS) {
    if (flag != nullptr) *flag = to_logical(done);
    if (done != 0) {
      requests.write_back(0);
      c_status.write_back();
    }
  }
  set_error(ierr, rc);
}

// MPI_WAITALL and MPI_TESTALL.
template <class Conventions, auto complete>
void complete_all(const MPI_Fint* count, MPI_Fint* array_of_requests, Logical* flag, MPI_Fint* array_of_statuses,
                  MPI_Fint* ierr) {
  Requests requests(array_of_requests, *count);
  Statuses<Conventions> statuses(array_of_statuses, *count);
  int done = 0;
  const int rc = complete(static_cast<int>(*count), requests.get(), &done, statuses.get());
  if (requests_updated(rc)) {
    if (flag != nullptr) *flag = to_logical(done);
    if (done != 0) {
      requests.write_back_all();
      statuses.write_back(static_cast<int>(*count));
    }
  }
  set_error(ierr, rc);
}

// MPI_WAITANY and MPI_TESTANY.
template <class Conventions, auto complete>
void complete_any(const MPI_Fint* count, MPI_Fint* array_of_requests, MPI_Fint* index, Logical* flag, MPI_Fint* status,
                  MPI_Fint* ierr) {
  Requests requests(array_of_requests, *count);
  Status<Conventions> c_status(status);
  int c_index = MPI_UNDEFINED;
  int done = 0;
  const int rc = complete(static_cast<int>(*count), requests.get(), &c_index, &done, c_status.get());
  if (rc == MPI_SUCCESS) {
    if (flag != nullptr) *flag = to_logical(done);
    *index = to_fortran_index(c_index);
    if (done != 0) {
      if (c_index != MPI_UNDEFINED) requests.write_back(c_index);
      c_status.write_back();
    }
  }
  set_error(ierr, rc);
}

// MPI_WAITSOME and MPI_TESTSOME, which have the same arguments.
template <class Conventions, auto complete>
void complete_some(const MPI_Fint* incount, MPI_Fint* array_of_requests, MPI_Fint* outcount, MPI_Fint* array_of_indices,
                   MPI_Fint* array_of_statuses, MPI_Fint* ierr) {
  Requests requests(array_of_requests, *incount);
  Statuses<Conventions> statuses(array_of_statuses, *incount);
  std::vector<int> indices(array_size(*incount));
  int c_outcount = MPI_UNDEFINED;
  const int rc = complete(static_cast<int>(*incount), requests.get(), &c_outcount, indices.data(), statuses.get());
  if (requests_updated(rc)) {
    *outcount = static_cast<MPI_Fint>(c_outcount);
    if (c_outcount != MPI_UNDEFINED) {
      for (int i = 0; i < c_outcount; ++i) {
        requests.write_back(indices[static_cast<std::size_t>(i)]);
        array_of_indices[i] = to_fortran_index(indices[static_cast<std::size_t>(i)]);
      }
      statuses.write_back(c_outcount);
    }
  }
  set_error(ierr, rc);
}

// The request is only looked at; MPI_STATUS_IGNORE is passed on as C's (Open MPI 4.1's own wrapper
// instead answers .FALSE. without asking).
template <class Conventions>
void request_get_status(const MPI_Fint* request, Logical* flag, MPI_Fint* status, MPI_Fint* ierr) {
  Status<Conventions> c_status(status);
  int done = 0;
  const int rc = MPI_Request_get_status(PMPI_Request_f2c(*request), &done, c_status.get());
  if (rc == MPI_SUCCESS) {
    *flag = to_logical(done);
    if (done != 0) c_status.write_back();
  }
  set_error(ierr, rc);
}

// MPI_START and MPI_STARTALL write the handles back: a library may give a persistent request a new
// descriptor when it starts.
inline void start(MPI_Fint* request, MPI_Fint* ierr) {
  Requests requests(request, 1);
  const int rc = MPI_Start(requests.get());
  if (rc == MPI_SUCCESS) requests.write_back(0);
  set_error(ierr, rc);
}

inline void startall(const MPI_Fint* count, MPI_Fint* array_of_requests, MPI_Fint* ierr) {
  Requests requests(array_of_requests, *count);
  const int rc = MPI_Startall(static_cast<int>(*count), requests.get());
  if (rc == MPI_SUCCESS) requests.write_back_all();
  set_error(ierr, rc);
}

inline void request_free(MPI_Fint* request, MPI_Fint* ierr) {
  Requests requests(request, 1);
  const int rc = MPI_Request_free(requests.get());
  if (rc == MPI_SUCCESS) requests.write_back(0);  // MPI_REQUEST_NULL
  set_error(ierr, rc);
}

}  // namespace collshim::fortran

// collshim_wait_f ... collshim_request_free_f with the statuses of `Conventions`: the definitions
// that the including file exports, under its binding's names, as aliases (fortran_abi.hpp).
#define COLLSHIM_FORTRAN_REQUEST_CALLS(Conventions)                                                                   \
  extern "C" void collshim_wait_f(MPI_Fint* request, MPI_Fint* status, MPI_Fint* ierr) {                              \
    collshim::fortran::complete_one<Conventions, collshim::fortran::wait_one>(request, nullptr, status, ierr);        \
  }                                                                                                                   \
  extern "C" void collshim_test_f(MPI_Fint* request, collshim::fortran::Logical* flag, MPI_Fint* status,              \
                                  MPI_Fint* ierr) {                                                                   \
    collshim::fortran::complete_one<Conventions, MPI_Test>(request, flag, status, ierr);                              \
  }                                                                                                                   \
  extern "C" void collshim_waitall_f(const MPI_Fint* count, MPI_Fint* array_of_requests, MPI_Fint* array_of_statuses, \
                                     MPI_Fint* ierr) {                                                                \
    collshim::fortran::complete_all<Conventions, collshim::fortran::wait_all>(count, array_of_requests, nullptr,      \
                                                                              array_of_statuses, ierr);               \
  }                                                                                                                   \
  extern "C" void collshim_testall_f(const MPI_Fint* count, MPI_Fint* array_of_requests,                              \
                                     collshim::fortran::Logical* flag, MPI_Fint* array_of_statuses, MPI_Fint* ierr) { \
    collshim::fortran::complete_all<Conventions, MPI_Testall>(count, array_of_requests, flag, array_of_statuses,      \
                                                              ierr);                                                  \
  }                                                                                                                   \
  extern "C" void collshim_waitany_f(const MPI_Fint* count, MPI_Fint* array_of_requests, MPI_Fint* index,             \
                                     MPI_Fint* status, MPI_Fint* ierr) {                                              \
    collshim::fortran::complete_any<Conventions, collshim::fortran::wait_any>(count, array_of_requests, index,        \
                                                                              nullptr, status, ierr);                 \
  }                                                                                                                   \
  extern "C" void collshim_testany_f(const MPI_Fint* count, MPI_Fint* array_of_requests, MPI_Fint* index,             \
                                     collshim::fortran::Logical* flag, MPI_Fint* status, MPI_Fint* ierr) {            \
    collshim::fortran::complete_any<Conventions, MPI_Testany>(count, array_of_requests, index, flag, status, ierr);   \
  }                                                                                                                   \
  extern "C" void collshim_waitsome_f(const MPI_Fint* incount, MPI_Fint* array_of_requests, MPI_Fint* outcount,       \
                                      MPI_Fint* array_of_indices, MPI_Fint* array_of_statuses, MPI_Fint* ierr) {      \
    collshim::fortran::complete_some<Conventions, MPI_Waitsome>(incount, array_of_requests, outcount,                 \
                                                                array_of_indices, array_of_statuses, ierr);           \
  }                                                                                                                   \
  extern "C" void collshim_testsome_f(const MPI_Fint* incount, MPI_Fint* array_of_requests, MPI_Fint* outcount,       \
                                      MPI_Fint* array_of_indices, MPI_Fint* array_of_statuses, MPI_Fint* ierr) {      \
    collshim::fortran::complete_some<Conventions, MPI_Testsome>(incount, array_of_requests, outcount,                 \
                                                                array_of_indices, array_of_statuses, ierr);           \
  }                                                                                                                   \
  extern "C" void collshim_request_get_status_f(const MPI_Fint* request, collshim::fortran::Logical* flag,            \
                                                MPI_Fint* status, MPI_Fint* ierr) {                                   \
    collshim::fortran::request_get_status<Conventions>(request, flag, status, ierr);                                  \
  }                                                                                                                   \
  extern "C" void collshim_start_f(MPI_Fint* request, MPI_Fint* ierr) { collshim::fortran::start(request, ierr); }    \
  extern "C" void collshim_startall_f(const MPI_Fint* count, MPI_Fint* array_of_requests, MPI_Fint* ierr) {           \
    collshim::fortran::startall(count, array_of_requests, ierr);                                                      \
  }                                                                                                                   \
  extern "C" void collshim_request_free_f(MPI_Fint* request, MPI_Fint* ierr) {                                        \
    collshim::fortran::request_free(request, ierr);                                                                   \
  }

// X(lower, UPPER) for each of the twelve: the names after mpi_ and MPI_.
// clang-format off
#define COLLSHIM_FORTRAN_REQUEST_CALL_NAMES(X)                                                     \
  X(wait, WAIT) X(waitall, WAITALL) X(waitany, WAITANY) X(waitsome, WAITSOME)                      \
  X(test, TEST) X(testall, TESTALL) X(testany, TESTANY) X(testsome, TESTSOME)                      \
  X(request_get_status, REQUEST_GET_STATUS) X(start, START) X(startall, STARTALL)                  \
  X(request_free, REQUEST_FREE)
// clang-format on
