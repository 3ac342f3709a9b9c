#include "intercept/nonblocking_requests.hpp"

#include <algorithm>
#include <chrono>

namespace collshim {

OperationTable& OperationTable::instance() {
  static OperationTable table;
  return table;
}

void set_empty_status(MPI_Status* status) {
  if (status == MPI_STATUS_IGNORE) return;
  status->MPI_SOURCE = MPI_ANY_SOURCE;
  status->MPI_TAG = MPI_ANY_TAG;
  PMPI_Status_set_elements(status, MPI_BYTE, 0);
  PMPI_Status_set_cancelled(status, 0);
}

int OperationTable::add(std::unique_ptr<Operation> operation, bool persistent, MPI_Request* request) {
  // The handle: a request of the library's that completes nothing (MPI_PROC_NULL) and stays until freed.
  const int rc = PMPI_Recv_init(nullptr, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_SELF, request);
  if (rc != MPI_SUCCESS) return rc;
  Record& record = records_[*request];
  record.operation = std::move(operation);
  record.persistent = persistent;
  requests_.fetch_add(1, std::memory_order_relaxed);
  if (!persistent) start(*request, record);
  return MPI_SUCCESS;
}

OperationTable::Record* OperationTable::find(MPI_Request request) {
  if (request == MPI_REQUEST_NULL) return nullptr;
  const auto found = records_.find(request);
  return found == records_.end() ? nullptr : &found->second;
}

void OperationTable::start(MPI_Request request, Record& record) {
  record.active = true;
  record.complete = false;
  record.operation->start();
  running_requests_.push_back(request);
  running_.fetch_add(1, std::memory_order_relaxed);
  progress();  // what can run at once does: a local step, the first messages
}

void OperationTable::advance() {
  OperationTable& table = instance();
  const auto lock = table.lock();
  table.progress();
}

void OperationTable::progress() {
  // Completed operations leave the list; an operation completing may let a later one act
  // (decisions in start order), so the pass goes on to the end.
  std::erase_if(running_requests_, [&](MPI_Request request) {
    Record& record = records_.at(request);
    if (!record.operation->progress()) return false;
    record.complete = true;
    running_.fetch_sub(1, std::memory_order_relaxed);
    return true;
  });
  std::erase_if(orphans_, [&](const std::unique_ptr<Operation>& operation) {
    if (!operation->progress()) return false;
    running_.fetch_sub(1, std::memory_order_relaxed);
    return true;
  });
}

int OperationTable::finish(MPI_Request* request, Record& record, MPI_Status* status) {
  const int rc = record.operation->error();
  set_empty_status(status);
  record.active = false;
  if (!record.persistent) {
    forget(*request);  // `record` is gone
    *request = MPI_REQUEST_NULL;
  }
  return rc;
}

void OperationTable::free(MPI_Request* request, Record& record) {
  if (record.active && !record.complete) {
    // Still running (the application may free an active request): it runs to its end unseen.
    std::erase(running_requests_, *request);
    orphans_.push_back(std::move(record.operation));
  }
  forget(*request);
  *request = MPI_REQUEST_NULL;
}

void OperationTable::forget(MPI_Request request) {
  records_.erase(request);
  requests_.fetch_sub(1, std::memory_order_relaxed);
  MPI_Request handle = request;
  PMPI_Request_free(&handle);
}

ProgressThread::ProgressThread()
    : thread_([](std::stop_token stop) {
        using namespace std::chrono_literals;
        while (!stop.stop_requested()) {
          OperationTable::advance_if_running();
          std::this_thread::sleep_for(OperationTable::running() ? 20us : 200us);
        }
      }) {}

ProgressThread::~ProgressThread() = default;  // the jthread asks to stop and joins

int OperationTable::wait_for_any(std::span<MPI_Request> own, MPI_Status* status, int& rc) {
  if (!waits_block_) return polls;
  pending_.clear();
  for (const MPI_Request request : running_requests_) {
    if (!records_.at(request).operation->blocked_on(pending_)) return polls;
  }
  for (const std::unique_ptr<Operation>& operation : orphans_) {
    if (!operation->blocked_on(pending_)) return polls;
  }
  const int index = collshim::wait_for_any(own, pending_, waited_, status, rc);
  return index == nothing_active ? polls : index;
}

int complete_advancing(MPI_Request* request, MPI_Status* status) {
  return poll(
      true, std::span(request, 1),
      [&](OperationTable&, int& rc) {
        OperationTable::advance_if_running();
        int flag = 0;
        rc = PMPI_Test(request, &flag, status);
        return rc != MPI_SUCCESS || flag;
      },
      [&](int, const MPI_Status& completed, int) {
        if (status != MPI_STATUS_IGNORE) *status = completed;
        return true;
      });
}

}  // namespace collshim
