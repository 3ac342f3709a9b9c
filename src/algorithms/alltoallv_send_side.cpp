#include <algorithm>
#include <cstring>

#include "algorithms/alltoallv_algorithms.hpp"
#include "algorithms/local_copy.hpp"

namespace collshim {

AlltoallvSendSide::AlltoallvSendSide(const AlltoallvCall& call, CommContext& context, int& status) {
  status = MPI_SUCCESS;
  MPI_Aint lower_bound = 0;
  if (call.sendbuf != MPI_IN_PLACE) {
    base_ = static_cast<const char*>(call.sendbuf);
    counts_ = call.sendcounts;
    displacements_ = call.sdispls;
    type_ = call.sendtype;
    PMPI_Type_get_extent(type_, &lower_bound, &extent_);
    PMPI_Type_size(type_, &type_size_);
    return;
  }
  counts_ = call.recvcounts;
  displacements_ = call.rdispls;
  type_ = call.recvtype;
  PMPI_Type_get_extent(type_, &lower_bound, &extent_);
  PMPI_Type_size(type_, &type_size_);
  // Copy the byte span that covers every outgoing block, gaps included, so each block keeps its
  // layout and can be sent with the user's datatype.
  MPI_Aint true_lb = 0, true_extent = 0;
  PMPI_Type_get_true_extent(type_, &true_lb, &true_extent);
  MPI_Aint span_begin = 0, span_end = 0;
  bool any = false;
  for (int peer = 0; peer < context.size(); ++peer) {
    if (counts_[peer] == 0) continue;
    const MPI_Aint begin = displacements_[peer] * extent_ + true_lb;
    const MPI_Aint end = begin + (counts_[peer] - 1) * extent_ + true_extent;
    span_begin = any ? std::min(span_begin, begin) : begin;
    span_end = any ? std::max(span_end, end) : end;
    any = true;
  }
  context.staging.resize(static_cast<std::size_t>(span_end - span_begin));
  if (any) {
    std::memcpy(context.staging.data(), static_cast<const char*>(call.recvbuf) + span_begin,
                context.staging.size());
  }
  base_ = reinterpret_cast<const char*>(context.staging.data());
  origin_ = span_begin;
}

void* alltoallv_recv_address(const AlltoallvCall& call, MPI_Aint recv_extent, int peer) {
  return static_cast<char*>(call.recvbuf) + static_cast<MPI_Aint>(call.rdispls[peer]) * recv_extent;
}

int copy_own_alltoallv_block(const AlltoallvCall& call, const AlltoallvSendSide& send, const CommContext& context) {
  const int rank = context.rank();
  MPI_Aint lower_bound = 0, extent = 0;
  PMPI_Type_get_extent(call.recvtype, &lower_bound, &extent);
  return copy_typed(send.address(rank), send.count(rank), send.type(), alltoallv_recv_address(call, extent, rank),
                    call.recvcounts[rank], call.recvtype, context.comm(), rank);
}

}  // namespace collshim
