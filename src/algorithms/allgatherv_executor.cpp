#include "algorithms/allgatherv_executor.hpp"

#include <climits>

#include "algorithms/local_copy.hpp"

namespace collshim {
namespace {

struct MessageView {
  void* address = nullptr;
  int count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
};

// Describes the blocks of one transfer as (address, count, type). Returns count 0 for an empty message.
int describe_message(const BlockTransfer& transfer, const AllgathervCall& call, MPI_Aint extent,
                     CommContext& context, MessageView& view) {
  char* const base = static_cast<char*>(call.recvbuf);
  long long total = 0;
  bool back_to_back = true;
  MPI_Aint expected_next = 0;
  for (std::size_t i = 0; i < transfer.blocks.size(); ++i) {
    const int block = transfer.blocks[i];
    const MPI_Aint displacement = call.displacement(block);
    if (i > 0 && displacement != expected_next) back_to_back = false;
    expected_next = displacement + call.count(block);
    total += call.count(block);
  }
  view = {};
  if (total == 0) return MPI_SUCCESS;
  if (back_to_back && total <= INT_MAX) {
    view.address = base + call.displacement(transfer.blocks.front()) * extent;
    view.count = static_cast<int>(total);
    view.type = call.recvtype;
    return MPI_SUCCESS;
  }
  MPI_Datatype type = MPI_DATATYPE_NULL;
  const int rc = create_blocks_type(call, transfer.blocks, extent, context, type);
  if (rc != MPI_SUCCESS) return rc;
  context.message_types.push_back(type);
  view.address = base;
  view.count = 1;
  view.type = type;
  return MPI_SUCCESS;
}

void free_message_types(CommContext& context) {
  for (MPI_Datatype& type : context.message_types) PMPI_Type_free(&type);
  context.message_types.clear();
}

}  // namespace

int create_blocks_type(const AllgathervCall& call, const std::vector<int>& blocks, MPI_Aint extent,
                       CommContext& context, MPI_Datatype& type) {
  // One entry per run of blocks that lie back to back (a broadcast of all blocks but one is two runs,
  // not p-1 entries), as long as a run's length fits the int of an hindexed entry.
  context.type_lengths.clear();
  context.type_offsets.clear();
  MPI_Aint run_end = 0;
  for (const int block : blocks) {
    const int count = call.count(block);
    if (count == 0) continue;
    const MPI_Aint displacement = call.displacement(block);
    if (!context.type_lengths.empty() && displacement == run_end && context.type_lengths.back() <= INT_MAX - count) {
      context.type_lengths.back() += count;
    } else {
      context.type_lengths.push_back(count);
      context.type_offsets.push_back(displacement * extent);
    }
    run_end = displacement + count;
  }
  int rc = PMPI_Type_create_hindexed(static_cast<int>(context.type_lengths.size()), context.type_lengths.data(),
                                     context.type_offsets.data(), call.recvtype, &type);
  if (rc == MPI_SUCCESS) rc = PMPI_Type_commit(&type);
  return rc;
}

int copy_own_block(const AllgathervCall& call, CommContext& context) {
  if (call.sendbuf == MPI_IN_PLACE) return MPI_SUCCESS;
  MPI_Aint lower_bound = 0, extent = 0;
  PMPI_Type_get_extent(call.recvtype, &lower_bound, &extent);
  const int rank = context.rank();
  char* own = static_cast<char*>(call.recvbuf) + call.displacement(rank) * extent;
  return copy_typed(call.sendbuf, call.sendcount, call.sendtype, own, call.count(rank), call.recvtype, context.comm(),
                    rank);
}

int run_allgatherv_schedule(const Schedule& schedule, const AllgathervCall& call, CommContext& context) {
  const int rc = copy_own_block(call, context);
  if (rc != MPI_SUCCESS) return rc;
  return run_schedule_steps(schedule, 0, schedule.steps.size(), call, context);
}

int run_allgatherv(const AllgathervCall& call, const AlgorithmChoice& choice, CommContext& context) {
  if (choice.algorithm->run_allgatherv != nullptr) return choice.algorithm->run_allgatherv(call, choice, context);
  return run_allgatherv_schedule(context.schedule(choice), call, context);
}

int run_schedule_steps(const Schedule& schedule, std::size_t first, std::size_t last, const AllgathervCall& call,
                       CommContext& context) {
  MPI_Aint lower_bound = 0, extent = 0;
  PMPI_Type_get_extent(call.recvtype, &lower_bound, &extent);
  int first_error = MPI_SUCCESS;
  for (std::size_t step_index = first; step_index < last; ++step_index) {
    const ScheduleStep& step = schedule.steps[step_index];
    // Steps complete before the next starts; a tag per step keeps traces readable.
    const int tag = static_cast<int>(step_index & 0x7fff);
    context.requests.clear();
    int rc = MPI_SUCCESS;
    MessageView view;
    for (const BlockTransfer& recv : step.recvs) {
      if ((rc = describe_message(recv, call, extent, context, view)) != MPI_SUCCESS) break;
      if (view.count == 0) continue;
      context.requests.push_back(MPI_REQUEST_NULL);
      rc = PMPI_Irecv(view.address, view.count, view.type, recv.peer, tag, context.comm(), &context.requests.back());
      if (rc != MPI_SUCCESS) break;
    }
    for (const BlockTransfer& send : step.sends) {
      if (rc != MPI_SUCCESS) break;
      if ((rc = describe_message(send, call, extent, context, view)) != MPI_SUCCESS) break;
      if (view.count == 0) continue;
      context.requests.push_back(MPI_REQUEST_NULL);
      rc = PMPI_Isend(view.address, view.count, view.type, send.peer, tag, context.comm(), &context.requests.back());
    }
    const int complete_rc = context.complete_requests(context.requests);
    free_message_types(context);
    if (rc != MPI_SUCCESS) return rc;
    // A failed message (a truncation, from receive counts that disagree between ranks) does not stop
    // the schedule: the peers are waiting for this rank's later steps, and leaving them would hang.
    if (first_error == MPI_SUCCESS) first_error = complete_rc;
  }
  return first_error;
}

}  // namespace collshim
