#pragma once
// The requests of the nonblocking and persistent collectives the shim runs itself, and their
// progress. The application gets a real MPI_Request of the library (an inactive persistent receive
// from MPI_PROC_NULL, which every MPI call accepts and which never completes anything by itself), so
// that its handle is unique, converts to Fortran and back, and can sit in any request array; the
// shim's completion calls (completion_entry_points.cpp) recognise it and complete the operation
// behind it. Every operation advances in every MPI call the shim intercepts (progress()), and a
// wait that cannot finish yet blocks inside the library on the requests the operations wait for
// together with its own (OperationTable::wait_for_any).
#include <mpi.h>
#include <sched.h>

#include <atomic>
#include <span>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "algorithms/engine/pending_request.hpp"

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
  // After progress() said the run is not complete: appends the library's requests whose completion
  // would let it advance (none where it waits for an earlier run of its communicator). False where
  // it waits for something no request stands for (an envelope it probes for): a wait then polls.
  virtual bool blocked_on(std::vector<PendingRequest>& pending) = 0;
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

  // What a wait does when a pass found it cannot finish yet: blocks inside the library until one
  // request completes, among those every running operation waits for and `own` (the wait's own
  // requests, as the program passed them: the shim's handles among them are inactive requests,
  // which the library ignores). Returns the index in `own` of the request that completed, its handle
  // written back, its status in *status and its result in `rc`; MPI_UNDEFINED where an operation's
  // request completed; `polls` where the wait has to poll instead: under MPI_THREAD_MULTIPLE
  // (another thread may test the same requests, and would wait for the lock this one holds), or
  // where an operation waits for something no request stands for.
  int wait_for_any(std::span<MPI_Request> own, MPI_Status* status, int& rc);
  static constexpr int polls = -2;
  // Set at MPI_Init: whether waits may block inside the library (not under MPI_THREAD_MULTIPLE).
  static void set_waits_block(bool block) { waits_block_ = block; }

 private:
  void forget(MPI_Request request);
  static void advance();  // advance_if_running's part out of line

  std::recursive_mutex mutex_;
  std::unordered_map<MPI_Request, Record> records_;
  std::vector<MPI_Request> running_requests_;        // in start order: operations decide in that order
  std::vector<std::unique_ptr<Operation>> orphans_;  // freed while running
  // wait_for_any's storage, kept so that a wait allocates nothing once warm.
  std::vector<PendingRequest> pending_;
  std::vector<MPI_Request> waited_;
  static inline bool waits_block_ = false;
  static inline std::atomic<int> requests_{0};
  static inline std::atomic<int> running_{0};
};

// The loop of every completion call of the shim: runs `pass` (true when done, its MPI result in
// `rc`) under the table's lock, once (a test) or until done (a wait). Between passes a wait blocks in
// the library (OperationTable::wait_for_any) on what the operations wait for and on `own`, its own
// requests; `completed(index, status, rc)` takes one of those that completed there and says
// whether the wait is done.
// Out of line (as test_once), so that an entry point's pass-through stays a test and a tail call.
template <typename Pass, typename Completed>
[[gnu::noinline]] int poll(bool waits, std::span<MPI_Request> own, Pass&& pass, Completed&& completed) {
  OperationTable& table = OperationTable::instance();
  auto lock = table.lock();
  int rc = MPI_SUCCESS;
  for (;;) {
    if (pass(table, rc) || !waits) return rc;
    MPI_Status status;
    const int index = table.wait_for_any(own, &status, rc);
    if (index >= 0 && completed(index, status, rc)) return rc;
    if (index == OperationTable::polls) {  // other threads may take the lock and the processor
      lock.unlock();
      sched_yield();
      lock.lock();
    }
  }
}

// A test: one pass.
template <typename Pass>
[[gnu::noinline]] int test_once(Pass&& pass) {
  OperationTable& table = OperationTable::instance();
  const auto lock = table.lock();
  int rc = MPI_SUCCESS;
  pass(table, rc);
  return rc;
}

// Completes a request of the library's while advancing the shim's operations: what a blocking call
// does while they run, since the library's own wait would not advance them.
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

  MPI_Request* get() {  // for the call that starts it
    error_ = MPI_SUCCESS;
    return &request_;
  }
  // True once complete, or failed (`rc` then holds the error); `rc` is untouched otherwise.
  bool test(int& rc) {
    if (request_ != MPI_REQUEST_NULL) {
      int flag = 0;
      const int tested = PMPI_Test(&request_, &flag, MPI_STATUS_IGNORE);
      if (tested == MPI_SUCCESS && !flag) return false;
      if (tested != MPI_SUCCESS) error_ = tested;
    }
    if (error_ != MPI_SUCCESS) rc = error_;
    return true;
  }
  // Operation::blocked_on's part: the request, while it runs.
  void add_pending(std::vector<PendingRequest>& pending) {
    if (request_ != MPI_REQUEST_NULL) pending.push_back({&request_, &error_});
  }

 private:
  MPI_Request request_ = MPI_REQUEST_NULL;
  int error_ = MPI_SUCCESS;  // where a wait of the shim that completed it left its error
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
