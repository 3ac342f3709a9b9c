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
    type_size_ = collshim::type_size(type_);
    return;
  }
  counts_ = call.recvcounts;
  displacements_ = call.rdispls;
  type_ = call.recvtype;
  PMPI_Type_get_extent(type_, &lower_bound, &extent_);
  type_size_ = collshim::type_size(type_);
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

DirectAlltoallv::DirectAlltoallv(const AlltoallvCall& call, CommContext& context, int tag, int& status)
    : call_(call), context_(context), send_(call, context, status), tag_(tag) {
  if (status != MPI_SUCCESS) return;
  MPI_Aint lower_bound = 0;
  PMPI_Type_get_extent(call.recvtype, &lower_bound, &recv_extent_);
  recv_type_size_ = type_size(call.recvtype);
  const int rank = context.rank();
  status = copy_typed(send_.address(rank), send_.count(rank), send_.type(),
                      alltoallv_recv_address(call, recv_extent_, rank), call.recvcounts[rank], call.recvtype,
                      context.comm(), rank);
}

int DirectAlltoallv::post_recv(int source, MPI_Request* request) const {
  *request = MPI_REQUEST_NULL;
  if (call_.recvcounts[source] * recv_type_size_ == 0) return MPI_SUCCESS;
  return PMPI_Irecv(alltoallv_recv_address(call_, recv_extent_, source), call_.recvcounts[source], call_.recvtype,
                    source, tag_, context_.comm(), request);
}

int DirectAlltoallv::post_send(int destination, MPI_Request* request) const {
  *request = MPI_REQUEST_NULL;
  if (send_.count(destination) * send_.type_size() == 0) return MPI_SUCCESS;
  return PMPI_Isend(send_.address(destination), send_.count(destination), send_.type(), destination, tag_,
                    context_.comm(), request);
}

}  // namespace collshim
