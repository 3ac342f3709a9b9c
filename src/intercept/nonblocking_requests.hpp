#pragma once
// The requests of the nonblocking and persistent collectives the shim runs itself, and their
// progress. The application gets a real MPI_Request of the library (an inactive persistent receive
// from MPI_PROC_NULL, which every MPI call accepts and which never completes anything by itself), so
// that its handle is unique, converts to Fortran and back, and can sit in any request array; the
// shim's completion calls (completion_entry_points.cpp) recognise it and complete the operation
// behind it. Every operation advances in every MPI call the shim intercepts (progress()).
#include <mpi.h>
#include <sched.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

namespace collshim {

// One nonblocking or persistent collective the shim runs (entry_points.cpp makes them).
class Operation {
 public:
  virtual ~Operation() = default;
  // Begins a run: at the nonblocking call, or at each MPI_Start of a persistent one. Never waits for
  // other ranks.
  virtual void start() = 0;
  // Advances the run as far as it can without waiting; true once it is complete.
  virtual bool progress() = 0;
  // The run's result once complete: MPI_SUCCESS or an error code.
  virtual int error() const = 0;
  // The user's communicator, whose error handler the run's error goes to.
  virtual MPI_Comm comm() const = 0;
};

class OperationTable {
 public:
  static OperationTable& instance();

  // Whether any request of the shim exists (then the completion calls look at their requests), and
  // whether any operation is running (then every intercepted call advances them). Plain loads: the
  // pass-through of a job that runs none stays a few instructions.
  static bool holds_requests() { return requests_.load(std::memory_order_relaxed) != 0; }
  static bool running() { return running_.load(std::memory_order_relaxed) != 0; }

  // The lock every use below needs: operations of several threads share the table. Recursive: a
  // completion call holds it while an error handler it calls may call MPI again.
  std::unique_lock<std::recursive_mutex> lock() { return std::unique_lock(mutex_); }

  // A request for `operation`, handed to the application in *request. A nonblocking one starts now;
  // a persistent one waits for MPI_Start. Returns an MPI error code.
  int add(std::unique_ptr<Operation> operation, bool persistent, MPI_Request* request);

  struct Record {
    std::unique_ptr<Operation> operation;
    bool persistent = false;
    bool active = false;    // started and not yet completed by a completion call
    bool complete = false;  // its run is complete (progress() said so)
  };
  // The shim's record for `request`, or null (MPI_REQUEST_NULL and the library's own requests).
  Record* find(MPI_Request request);

  // Advances every running operation once (under the lock).
  void progress();
  // What every call the shim intercepts does first: where operations run, takes the lock and
  // advances them; otherwise a load.
  static void advance_if_running() {
    if (running()) advance();
  }

  // MPI_Start of a persistent request of the shim.
  void start(MPI_Request request, Record& record);
  // What a completion call does with a complete record: fills `status` (empty, as MPI defines a
  // collective's; may be MPI_STATUS_IGNORE), and frees a nonblocking request (*request becomes
  // MPI_REQUEST_NULL) or makes a persistent one inactive. Returns the run's error code.
  int finish(MPI_Request* request, Record& record, MPI_Status* status);
  // MPI_Request_free of a request of the shim.
  void free(MPI_Request* request, Record& record);

 private:
  void forget(MPI_Request request);
  static void advance();  // advance_if_running's part out of line

  std::recursive_mutex mutex_;
  std::unordered_map<MPI_Request, Record> records_;
  std::vector<MPI_Request> running_requests_;        // in start order: operations decide in that order
  std::vector<std::unique_ptr<Operation>> orphans_;  // freed while running
  static inline std::atomic<int> requests_{0};
  static inline std::atomic<int> running_{0};
};

// The polling loop of every wait of the shim: runs `pass` (true when done, its MPI result in `rc`)
// under the table's lock, once (a test) or until done (a wait), offering the processor to other
// threads between passes (several may wait at once).
template <typename Pass>
int poll(bool waits, Pass&& pass) {
  OperationTable& table = OperationTable::instance();
  int rc = MPI_SUCCESS;
  for (;;) {
    {
      const auto lock = table.lock();
      if (pass(table, rc) || !waits) return rc;
    }
    sched_yield();
  }
}

// Completes a request of the library's while advancing the shim's operations (polling): what a
// blocking call does while they run, since the library's own wait would not advance them.
int complete_advancing(MPI_Request* request, MPI_Status* status);

// A request of the library's that an operation started (its own nonblocking call, a step's
// agreement): tested without waiting; waited for if the operation is destroyed while it runs (freed
// by the program, then MPI_Finalize), so that nothing lands after.
class LibraryRequest {
 public:
  LibraryRequest() = default;
  ~LibraryRequest() {
    if (request_ != MPI_REQUEST_NULL) PMPI_Wait(&request_, MPI_STATUS_IGNORE);
  }
  LibraryRequest(const LibraryRequest&) = delete;
  LibraryRequest& operator=(const LibraryRequest&) = delete;

  MPI_Request* get() { return &request_; }  // for the call that starts it
  // True once complete, or failed (`rc` then holds the error); `rc` is untouched otherwise.
  bool test(int& rc) {
    if (request_ == MPI_REQUEST_NULL) return true;
    int flag = 0;
    const int tested = PMPI_Test(&request_, &flag, MPI_STATUS_IGNORE);
    if (tested != MPI_SUCCESS) rc = tested;
    return tested != MPI_SUCCESS || flag;
  }

 private:
  MPI_Request request_ = MPI_REQUEST_NULL;
};

// COLLSHIM_PROGRESS_THREAD=1: a thread that advances the shim's operations while the application
// computes or sits in calls the shim does not intercept. Only under MPI_THREAD_MULTIPLE (it calls
// MPI beside the application's threads). Polls every 20 us while operations run, every 200 us
// otherwise; stopped (joined) before MPI_Finalize.
class ProgressThread {
 public:
  ProgressThread();
  ~ProgressThread();
  ProgressThread(const ProgressThread&) = delete;
  ProgressThread& operator=(const ProgressThread&) = delete;

 private:
  std::jthread thread_;
};

// An empty status, as a completed collective's (source and tag "any", no elements, not cancelled);
// MPI_ERROR is left as it is. MPI_STATUS_IGNORE is allowed.
void set_empty_status(MPI_Status* status);

}  // namespace collshim
