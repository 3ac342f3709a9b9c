// The MPI entry points of libcollshim.so: the only C ABI of the shim. Each collective checks what it
// can cheaply, asks the selector, and either hands the call to the MPI library (PMPI_*) unchanged or
// runs a registry algorithm on the communicator's shadow.
#include <mpi.h>

#include "algorithms/allgatherv_executor.hpp"
#include "intercept/runtime.hpp"

#define COLLSHIM_EXPORT extern "C" __attribute__((visibility("default")))

namespace collshim {
namespace {

int type_size(MPI_Datatype type) {
  int size = 0;
  PMPI_Type_size(type, &size);
  return size;
}

// Everything an algorithm needs before it may take a call. Anything else (null handles, negative
// counts, intercommunicators) goes to the MPI library, which raises the error native MPI would raise
// through the communicator's error handler.
struct Target {
  Runtime* runtime = nullptr;
  int size = 0;
};

Target intracommunicator_target(MPI_Comm comm) {
  Runtime* runtime = Runtime::active();
  if (runtime == nullptr || comm == MPI_COMM_NULL) return {};
  int inter = 0;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) return {};
  int size = 0;
  PMPI_Comm_size(comm, &size);
  return {runtime, size};
}

bool counts_valid(const int* counts, int p) {
  if (counts == nullptr) return false;
  for (int i = 0; i < p; ++i) {
    if (counts[i] < 0) return false;
  }
  return true;
}

// Runs `decision` if it is an algorithm of the shim; returns false when the call must pass through.
template <typename Run>
bool run_decision(Runtime& runtime, Collective collective, MPI_Comm comm, int p, long long bytes_per_block,
                  const Decision& decision, const Run& run, int& rc) {
  const AlgorithmChoice& choice = *decision.choice;
  if (runtime.log->should_log(spdlog::level::debug)) {
    if (decision.choice != decision.requested) {
      runtime.log->debug("{}: {} is not eligible for p={} (needs {}); running {} instead",
                         mpi_function_name(collective), decision.requested->text(), p,
                         decision.requested->algorithm->eligibility, choice.text());
    }
    runtime.log->debug("{}: p={} block_bytes={} algorithm={} ({})", mpi_function_name(collective), p,
                       bytes_per_block, choice.text(), decision.reason);
  }
  if (choice.algorithm->passes_through) return false;
  CommContext* context = runtime.comms.context(comm);
  if (context == nullptr) return false;
  rc = run(choice, *context);
  return true;
}

// A template, not std::function: the pass-through path must not allocate.
template <typename PassThrough>
int allgatherv_entry(Collective collective, const AllgathervCall& call, MPI_Comm comm,
                     const PassThrough& pass_through) {
  const Target target = intracommunicator_target(comm);
  if (target.runtime == nullptr || call.recvtype == MPI_DATATYPE_NULL ||
      (call.sendbuf != MPI_IN_PLACE && (call.sendtype == MPI_DATATYPE_NULL || call.sendcount < 0)) ||
      (call.recvcounts ? !counts_valid(call.recvcounts, target.size) : call.uniform_count < 0) ||
      (call.recvcounts && call.displs == nullptr)) {
    return pass_through();
  }
  long long total_elements = 0;
  for (int block = 0; block < target.size; ++block) total_elements += call.count(block);
  const long long bytes_per_block = total_elements * type_size(call.recvtype) / target.size;

  const Decision decision = target.runtime->selector.decide(collective, target.size);
  int rc = MPI_SUCCESS;
  const auto run = [&](const AlgorithmChoice& choice, CommContext& context) {
    return run_allgatherv_schedule(context.schedule(choice), call, context);
  };
  if (!run_decision(*target.runtime, collective, comm, target.size, bytes_per_block, decision, run, rc))
    return pass_through();
  return rc;
}

}  // namespace
}  // namespace collshim

using namespace collshim;

COLLSHIM_EXPORT int MPI_Init(int* argc, char*** argv) {
  const int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) Runtime::start();
  return rc;
}

COLLSHIM_EXPORT int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) Runtime::start();
  return rc;
}

COLLSHIM_EXPORT int MPI_Finalize() {
  Runtime::stop();
  return PMPI_Finalize();
}

COLLSHIM_EXPORT int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  const AllgathervCall call{sendbuf, sendcount, sendtype, recvbuf, nullptr, nullptr, recvcount, recvtype};
  return allgatherv_entry(Collective::allgather, call, comm, [&] {
    return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  });
}

COLLSHIM_EXPORT int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                                   MPI_Comm comm) {
  const AllgathervCall call{sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, 0, recvtype};
  return allgatherv_entry(Collective::allgatherv, call, comm, [&] {
    return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
  });
}

COLLSHIM_EXPORT int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                  MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  const auto pass_through = [&] {
    return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
  };
  const Target target = intracommunicator_target(comm);
  const bool in_place = sendbuf == MPI_IN_PLACE;
  if (target.runtime == nullptr || recvtype == MPI_DATATYPE_NULL || !counts_valid(recvcounts, target.size) ||
      rdispls == nullptr ||
      (!in_place && (sendtype == MPI_DATATYPE_NULL || !counts_valid(sendcounts, target.size) || sdispls == nullptr))) {
    return pass_through();
  }
  // Counts are rank-local: the decision must not depend on them until an agreement step exists, so
  // the logged size is this rank's own and only informative.
  long long sent_elements = 0;
  const int* counts = in_place ? recvcounts : sendcounts;
  for (int peer = 0; peer < target.size; ++peer) sent_elements += counts[peer];
  const long long bytes_per_block = sent_elements * type_size(in_place ? recvtype : sendtype) / target.size;

  const AlltoallvCall call{sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype};
  const Decision decision = target.runtime->selector.decide(Collective::alltoallv, target.size);
  int rc = MPI_SUCCESS;
  const auto run = [&](const AlgorithmChoice& choice, CommContext& context) {
    return choice.algorithm->run_alltoallv(call, choice, context);
  };
  if (!run_decision(*target.runtime, Collective::alltoallv, comm, target.size, bytes_per_block, decision, run, rc))
    return pass_through();
  return rc;
}
