#pragma once
// Every intercepted MPI function, declared once: its name, the call shape that reads its arguments
// (entry_points.cpp's *Entry structs, one per shape), its C parameter list and the same names as an
// argument list. entry_points.cpp generates from each row the exported MPI_<Name>, its fast path
// (a tail call of the library's function) and the shim's path; a new variant of a shape (MPI-4's
// large-count `_c` functions, a nonblocking form) is a new row.
//
// X(Name, Shape, (parameters), (arguments)); every row names its communicator `comm`.
#define COLLSHIM_ENTRY_POINTS(X)                                                                                  \
  X(Allgather, AllgatherEntry,                                                                                    \
    (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,                     \
     MPI_Datatype recvtype, MPI_Comm comm),                                                                       \
    (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))                                           \
  X(Allgatherv, AllgathervEntry,                                                                                  \
    (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],             \
     const int displs[], MPI_Datatype recvtype, MPI_Comm comm),                                                   \
    (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm))                                  \
  X(Alltoallv, AlltoallvEntry,                                                                                    \
    (const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf,      \
     const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm),                          \
    (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm))                       \
  X(Alltoall, AlltoallEntry,                                                                                      \
    (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,                     \
     MPI_Datatype recvtype, MPI_Comm comm),                                                                       \
    (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))                                           \
  X(Allreduce, AllreduceEntry,                                                                                    \
    (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),             \
    (sendbuf, recvbuf, count, datatype, op, comm))                                                                \
  X(Gatherv, GathervEntry,                                                                                        \
    (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],             \
     const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm),                                         \
    (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm))                            \
  X(Scatterv, ScattervEntry,                                                                                      \
    (const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void* recvbuf,       \
     int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm),                                              \
    (sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm))
