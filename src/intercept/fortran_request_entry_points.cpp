// The Fortran completion calls of libcollshim.so, built for Open MPI only (see CMakeLists.txt):
// MPI_WAIT, MPI_WAITALL, MPI_WAITANY, MPI_WAITSOME, MPI_TEST, MPI_TESTALL, MPI_TESTANY,
// MPI_TESTSOME, MPI_REQUEST_GET_STATUS, MPI_START, MPI_STARTALL and MPI_REQUEST_FREE.
//
// A request the shim's nonblocking or persistent collectives return completes in the shim's C
// MPI_Wait and friends, which advance its schedules. Open MPI's Fortran bindings call PMPI_Wait and
// the rest directly, so a Fortran program would never reach them and would wait forever. The shim
// therefore defines these Fortran symbols too, under every mangling (fortran_abi.hpp), converting as
// Open MPI's own ompi_wait_f and friends do (ompi/mpi/fortran/mpif-h/wait_f.c, ...): request
// arrays through MPI_Request_f2c and back through MPI_Request_c2f (a completed nonblocking request
// comes back as MPI_REQUEST_NULL, a persistent one as itself), statuses of MPI_STATUS_SIZE INTEGERs
// through MPI_Status_c2f unless the program passed MPI_STATUS(ES)_IGNORE, 1-based indices
// (MPI_UNDEFINED kept), LOGICAL flags; then they call the C MPI_* function through the dynamic
// linker, so a Fortran call takes the path of the same call from C.
//
// `use mpi_f08` reaches MPI_Wait, MPI_Waitall, MPI_Waitany, MPI_Waitsome, MPI_Start,
// MPI_Startall and MPI_Request_free through ompi_wait_f and the rest (aliases below), but
// libmpi_usempif08's mpi_test_f08_, mpi_testall_f08_, mpi_testany_f08_, mpi_testsome_f08_ and
// mpi_request_get_status_f08_ call the Fortran pmpi_test_ and friends instead, so the shim defines
// those five f08 symbols as well. Their arguments are the same in memory: TYPE(MPI_Request) and
// TYPE(MPI_Status) hold the INTEGER handle and the MPI_STATUS_SIZE INTEGERs, and an absent ierror
// is a null pointer.
//
// MPICH's mpif.h and `use mpi` completion calls call the C MPI_Wait and the rest already.
#include <mpi.h>

#include <cstddef>
#include <vector>

#include "intercept/fortran_abi.hpp"

// Fortran's MPI_STATUS_IGNORE and MPI_STATUSES_IGNORE are common blocks, recognised by address
// like MPI_IN_PLACE (fortran_entry_points.cpp); C's MPI_F_STATUS(ES)_IGNORE point at them too.
extern "C" {
extern char mpi_fortran_status_ignore_ __attribute__((weak));
extern char mpi_fortran_status_ignore __attribute__((weak));
extern char mpi_fortran_status_ignore__ __attribute__((weak));
extern char MPI_FORTRAN_STATUS_IGNORE __attribute__((weak));
extern char mpi_fortran_statuses_ignore_ __attribute__((weak));
extern char mpi_fortran_statuses_ignore __attribute__((weak));
extern char mpi_fortran_statuses_ignore__ __attribute__((weak));
extern char MPI_FORTRAN_STATUSES_IGNORE __attribute__((weak));
}

namespace {

using collshim::fortran::is_sentinel;
using collshim::fortran::set_error;

// A default LOGICAL has the size of a default INTEGER. Open MPI is built with the program's Fortran
// compiler, and gfortran's .TRUE. is 1 (Open MPI's configure measures it as OMPI_FORTRAN_VALUE_TRUE).
using FortranLogical = MPI_Fint;
constexpr FortranLogical fortran_true = 1;

FortranLogical to_logical(int flag) { return flag != 0 ? fortran_true : 0; }

// MPI_STATUS_SIZE: what MPI_Status_c2f writes, the C status read as ints (mpif-config.h says 6).
constexpr std::size_t fortran_status_size = sizeof(MPI_Status) / sizeof(int);

// A C index as Fortran's 1-based one; MPI_UNDEFINED stays.
MPI_Fint to_fortran_index(int index) { return static_cast<MPI_Fint>(index == MPI_UNDEFINED ? index : index + 1); }

// The calls that complete requests report MPI_ERR_IN_STATUS when some failed: the requests and
// statuses are then as meaningful as on success.
bool requests_updated(int rc) { return rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS; }

std::size_t array_size(MPI_Fint count) { return count > 0 ? static_cast<std::size_t>(count) : 0; }

// Fortran request handles as C handles for the call, and back.
class FortranRequests {
 public:
  FortranRequests(MPI_Fint* handles, MPI_Fint count) : handles_(handles), requests_(array_size(count)) {
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
class FortranStatus {
 public:
  explicit FortranStatus(MPI_Fint* status)
      : status_(status == MPI_F_STATUS_IGNORE ||
                        is_sentinel(status, &mpi_fortran_status_ignore_, &mpi_fortran_status_ignore,
                                    &mpi_fortran_status_ignore__, &MPI_FORTRAN_STATUS_IGNORE)
                    ? nullptr
                    : status) {}
  MPI_Status* get() { return status_ == nullptr ? MPI_STATUS_IGNORE : &c_status_; }
  void write_back() {
    if (status_ != nullptr) PMPI_Status_c2f(&c_status_, status_);
  }

 private:
  MPI_Fint* status_;
  MPI_Status c_status_{};
};

// An array of Fortran statuses: C's MPI_STATUSES_IGNORE for Fortran's.
class FortranStatuses {
 public:
  FortranStatuses(MPI_Fint* statuses, MPI_Fint count)
      : statuses_(statuses == MPI_F_STATUSES_IGNORE ||
                          is_sentinel(statuses, &mpi_fortran_statuses_ignore_, &mpi_fortran_statuses_ignore,
                                      &mpi_fortran_statuses_ignore__, &MPI_FORTRAN_STATUSES_IGNORE)
                      ? nullptr
                      : statuses),
        c_statuses_(statuses_ == nullptr ? 0 : array_size(count)) {}
  MPI_Status* get() { return statuses_ == nullptr ? MPI_STATUSES_IGNORE : c_statuses_.data(); }
  // The first n statuses (Waitsome's and Testsome's outcount, or all).
  void write_back(int n) {
    if (statuses_ == nullptr) return;
    for (std::size_t i = 0; i < static_cast<std::size_t>(n) && i < c_statuses_.size(); ++i) {
      PMPI_Status_c2f(&c_statuses_[i], statuses_ + i * fortran_status_size);
    }
  }

 private:
  MPI_Fint* statuses_;
  std::vector<MPI_Status> c_statuses_;
};

// The Wait calls in the shape of the Test ones, so one template serves both: a Wait has completed
// whenever it returns.
int wait_one(MPI_Request* request, int* flag, MPI_Status* status) {
  *flag = 1;
  return MPI_Wait(request, status);
}
int wait_all(int count, MPI_Request* requests, int* flag, MPI_Status* statuses) {
  *flag = 1;
  return MPI_Waitall(count, requests, statuses);
}
int wait_any(int count, MPI_Request* requests, int* index, int* flag, MPI_Status* status) {
  *flag = 1;
  return MPI_Waitany(count, requests, index, status);
}

// MPI_WAIT and MPI_TEST (flag null for a Wait, which has none).
template <auto complete>
void complete_one(MPI_Fint* request, FortranLogical* flag, MPI_Fint* status, MPI_Fint* ierr) {
  FortranRequests requests(request, 1);
  FortranStatus c_status(status);
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
template <auto complete>
void complete_all(const MPI_Fint* count, MPI_Fint* array_of_requests, FortranLogical* flag, MPI_Fint* array_of_statuses,
                  MPI_Fint* ierr) {
  FortranRequests requests(array_of_requests, *count);
  FortranStatuses statuses(array_of_statuses, *count);
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
template <auto complete>
void complete_any(const MPI_Fint* count, MPI_Fint* array_of_requests, MPI_Fint* index, FortranLogical* flag,
                  MPI_Fint* status, MPI_Fint* ierr) {
  FortranRequests requests(array_of_requests, *count);
  FortranStatus c_status(status);
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
template <auto complete>
void complete_some(const MPI_Fint* incount, MPI_Fint* array_of_requests, MPI_Fint* outcount, MPI_Fint* array_of_indices,
                   MPI_Fint* array_of_statuses, MPI_Fint* ierr) {
  FortranRequests requests(array_of_requests, *incount);
  FortranStatuses statuses(array_of_statuses, *incount);
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

}  // namespace

// One internal definition per call; the exported names below are its aliases, as in libmpi_mpifh.
extern "C" void collshim_wait_f(MPI_Fint* request, MPI_Fint* status, MPI_Fint* ierr) {
  complete_one<wait_one>(request, nullptr, status, ierr);
}

extern "C" void collshim_test_f(MPI_Fint* request, FortranLogical* flag, MPI_Fint* status, MPI_Fint* ierr) {
  complete_one<MPI_Test>(request, flag, status, ierr);
}

extern "C" void collshim_waitall_f(const MPI_Fint* count, MPI_Fint* array_of_requests, MPI_Fint* array_of_statuses,
                                   MPI_Fint* ierr) {
  complete_all<wait_all>(count, array_of_requests, nullptr, array_of_statuses, ierr);
}

extern "C" void collshim_testall_f(const MPI_Fint* count, MPI_Fint* array_of_requests, FortranLogical* flag,
                                   MPI_Fint* array_of_statuses, MPI_Fint* ierr) {
  complete_all<MPI_Testall>(count, array_of_requests, flag, array_of_statuses, ierr);
}

extern "C" void collshim_waitany_f(const MPI_Fint* count, MPI_Fint* array_of_requests, MPI_Fint* index,
                                   MPI_Fint* status, MPI_Fint* ierr) {
  complete_any<wait_any>(count, array_of_requests, index, nullptr, status, ierr);
}

extern "C" void collshim_testany_f(const MPI_Fint* count, MPI_Fint* array_of_requests, MPI_Fint* index,
                                   FortranLogical* flag, MPI_Fint* status, MPI_Fint* ierr) {
  complete_any<MPI_Testany>(count, array_of_requests, index, flag, status, ierr);
}

extern "C" void collshim_waitsome_f(const MPI_Fint* incount, MPI_Fint* array_of_requests, MPI_Fint* outcount,
                                    MPI_Fint* array_of_indices, MPI_Fint* array_of_statuses, MPI_Fint* ierr) {
  complete_some<MPI_Waitsome>(incount, array_of_requests, outcount, array_of_indices, array_of_statuses, ierr);
}

extern "C" void collshim_testsome_f(const MPI_Fint* incount, MPI_Fint* array_of_requests, MPI_Fint* outcount,
                                    MPI_Fint* array_of_indices, MPI_Fint* array_of_statuses, MPI_Fint* ierr) {
  complete_some<MPI_Testsome>(incount, array_of_requests, outcount, array_of_indices, array_of_statuses, ierr);
}

// The request is only looked at; MPI_STATUS_IGNORE is passed on as C's (Open MPI 4.1's own wrapper
// instead answers .FALSE. without asking).
extern "C" void collshim_request_get_status_f(const MPI_Fint* request, FortranLogical* flag, MPI_Fint* status,
                                              MPI_Fint* ierr) {
  FortranStatus c_status(status);
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
extern "C" void collshim_start_f(MPI_Fint* request, MPI_Fint* ierr) {
  FortranRequests requests(request, 1);
  const int rc = MPI_Start(requests.get());
  if (rc == MPI_SUCCESS) requests.write_back(0);
  set_error(ierr, rc);
}

extern "C" void collshim_startall_f(const MPI_Fint* count, MPI_Fint* array_of_requests, MPI_Fint* ierr) {
  FortranRequests requests(array_of_requests, *count);
  const int rc = MPI_Startall(static_cast<int>(*count), requests.get());
  if (rc == MPI_SUCCESS) requests.write_back_all();
  set_error(ierr, rc);
}

extern "C" void collshim_request_free_f(MPI_Fint* request, MPI_Fint* ierr) {
  FortranRequests requests(request, 1);
  const int rc = MPI_Request_free(requests.get());
  if (rc == MPI_SUCCESS) requests.write_back(0);  // MPI_REQUEST_NULL
  set_error(ierr, rc);
}

// Exported under every mangling (fortran_abi.hpp), and the five mpi_f08 entry points that call the
// Fortran PMPI_* rather than ompi_*_f (above) under gfortran's mangling, the only one
// libmpi_usempif08 exports (mpi_test_f08_).
#define COLLSHIM_FORTRAN_REQUEST_NAMES(lower, UPPER) \
  COLLSHIM_FORTRAN_NAMES(mpi_##lower, MPI_##UPPER, collshim_##lower##_f)
#define COLLSHIM_FORTRAN_F08_NAME(lower) \
  COLLSHIM_EXPORT __typeof__(collshim_##lower##_f) mpi_##lower##_f08_ __attribute__((alias("collshim_" #lower "_f")));
COLLSHIM_FORTRAN_REQUEST_NAMES(wait, WAIT)
COLLSHIM_FORTRAN_REQUEST_NAMES(waitall, WAITALL)
COLLSHIM_FORTRAN_REQUEST_NAMES(waitany, WAITANY)
COLLSHIM_FORTRAN_REQUEST_NAMES(waitsome, WAITSOME)
COLLSHIM_FORTRAN_REQUEST_NAMES(test, TEST)
COLLSHIM_FORTRAN_REQUEST_NAMES(testall, TESTALL)
COLLSHIM_FORTRAN_REQUEST_NAMES(testany, TESTANY)
COLLSHIM_FORTRAN_REQUEST_NAMES(testsome, TESTSOME)
COLLSHIM_FORTRAN_REQUEST_NAMES(request_get_status, REQUEST_GET_STATUS)
COLLSHIM_FORTRAN_REQUEST_NAMES(start, START)
COLLSHIM_FORTRAN_REQUEST_NAMES(startall, STARTALL)
COLLSHIM_FORTRAN_REQUEST_NAMES(request_free, REQUEST_FREE)
COLLSHIM_FORTRAN_F08_NAME(test)
COLLSHIM_FORTRAN_F08_NAME(testall)
COLLSHIM_FORTRAN_F08_NAME(testany)
COLLSHIM_FORTRAN_F08_NAME(testsome)
COLLSHIM_FORTRAN_F08_NAME(request_get_status)
