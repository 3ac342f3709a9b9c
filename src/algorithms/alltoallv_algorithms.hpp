#pragma once
// Alltoallv algorithms. Their traffic depends on the counts, so they run directly instead of through
// a schedule; they share the registry entry shape of the allgather family.
#include "algorithms/collective_call.hpp"
#include "algorithms/comm_context.hpp"

namespace collshim {

int run_linear_alltoallv(const AlltoallvCall& call, const AlgorithmChoice& choice, CommContext& context);
int run_pairwise_alltoallv(const AlltoallvCall& call, const AlgorithmChoice& choice, CommContext& context);
int run_grid_alltoallv(const AlltoallvCall& call, const AlgorithmChoice& choice, CommContext& context);

// Where the outgoing blocks of an Alltoallv live. With MPI_IN_PLACE they are first copied out of
// recvbuf into the context's staging buffer, since receiving overwrites them.
class AlltoallvSendSide {
 public:
  // Returns an MPI error code through `status`.
  AlltoallvSendSide(const AlltoallvCall& call, CommContext& context, int& status);
  const void* address(int peer) const { return base_ + displacements_[peer] * extent_ - origin_; }
  int count(int peer) const { return counts_[peer]; }
  MPI_Datatype type() const { return type_; }
  int type_size() const { return type_size_; }

 private:
  const char* base_;
  const int* counts_;
  const int* displacements_;
  MPI_Datatype type_;
  MPI_Aint extent_ = 0;
  MPI_Aint origin_ = 0;  // byte offset in the user's buffer that base_ corresponds to
  int type_size_ = 0;
};

// Exchanges with the peer itself: a local copy from the send side to the receive side.
int copy_own_alltoallv_block(const AlltoallvCall& call, const AlltoallvSendSide& send, const CommContext& context);
// The receive address of the block from `peer`.
void* alltoallv_recv_address(const AlltoallvCall& call, MPI_Aint recv_extent, int peer);

}  // namespace collshim
