#pragma once
// The arguments of one collective call, as the algorithms see them.
#include <mpi.h>

#include <cstddef>

namespace collshim {

// Allgather runs as Allgatherv with equal counts: recvcounts == nullptr means every block has
// uniform_count elements at displacement rank * uniform_count (computed in MPI_Aint, so it cannot
// overflow int the way an explicit displacement array would).
struct AllgathervCall {
  const void* sendbuf;  // MPI_IN_PLACE: the own block is already at its place in recvbuf
  int sendcount;
  MPI_Datatype sendtype;
  void* recvbuf;
  const int* recvcounts;
  const int* displs;
  int uniform_count;
  MPI_Datatype recvtype;

  int count(int block) const { return recvcounts ? recvcounts[block] : uniform_count; }
  MPI_Aint displacement(int block) const {
    return displs ? static_cast<MPI_Aint>(displs[block]) : static_cast<MPI_Aint>(block) * uniform_count;
  }
};

// Alltoall runs as Alltoallv with equal counts: null count arrays mean every block has the uniform
// count, block d at displacement d * count (in MPI_Aint, like the Allgather form above).
struct AlltoallvCall {
  const void* sendbuf;  // MPI_IN_PLACE: outgoing data is read from recvbuf before it is overwritten
  const int* sendcounts;
  const int* sdispls;
  MPI_Datatype sendtype;
  void* recvbuf;
  const int* recvcounts;
  const int* rdispls;
  MPI_Datatype recvtype;
  int send_uniform_count = 0;  // when sendcounts is null
  int recv_uniform_count = 0;  // when recvcounts is null
};

// MPI_Allreduce. Every rank passes the same count, type and op.
struct AllreduceCall {
  const void* sendbuf;  // MPI_IN_PLACE: the contribution is in recvbuf
  void* recvbuf;
  int count;
  MPI_Datatype type;
  MPI_Op op;
};

// MPI_Gatherv: the root receives block b (recvcounts[b] elements at displs[b]) from rank b. The
// receive arguments mean something at the root only, the send arguments everywhere but at an
// MPI_IN_PLACE root (whose own block is then already in recvbuf).
struct GathervCall {
  const void* sendbuf;
  int sendcount;
  MPI_Datatype sendtype;
  void* recvbuf;
  const int* recvcounts;
  const int* displs;
  MPI_Datatype recvtype;
  int root;
};

// MPI_Scatterv: the root sends block b (sendcounts[b] elements at displs[b]) to rank b. The send
// arguments mean something at the root only; an MPI_IN_PLACE root keeps its block in sendbuf.
struct ScattervCall {
  const void* sendbuf;
  const int* sendcounts;
  const int* displs;
  MPI_Datatype sendtype;
  void* recvbuf;
  int recvcount;
  MPI_Datatype recvtype;
  int root;
};

}  // namespace collshim
