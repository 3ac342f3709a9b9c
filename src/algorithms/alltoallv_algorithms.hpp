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
  long long type_size() const { return type_size_; }

 private:
  const char* base_;
  const int* counts_;
  const int* displacements_;
  MPI_Datatype type_;
  MPI_Aint extent_ = 0;
  MPI_Aint origin_ = 0;  // byte offset in the user's buffer that base_ corresponds to
  long long type_size_ = 0;
};

// The receive address of the block from `peer`.
void* alltoallv_recv_address(const AlltoallvCall& call, MPI_Aint recv_extent, int peer);

// A direct exchange (every block goes straight to its destination, as in linear and pairwise):
// construction copies the rank's own block; post_recv/post_send start one peer's message unless it
// carries no bytes. MPI requires the byte counts of each pair to agree, so both sides skip alike.
class DirectAlltoallv {
 public:
  // Returns an MPI error code through `status`.
  DirectAlltoallv(const AlltoallvCall& call, CommContext& context, int tag, int& status);
  int post_recv(int source, MPI_Request* request) const;
  int post_send(int destination, MPI_Request* request) const;

 private:
  const AlltoallvCall& call_;
  const CommContext& context_;
  AlltoallvSendSide send_;
  MPI_Aint recv_extent_ = 0;
  long long recv_type_size_ = 0;
  int tag_;
};

}  // namespace collshim
