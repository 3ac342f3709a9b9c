#pragma once
#include <mpi.h>  // MPI_VERSION: which rows the library has

// Every intercepted MPI function, declared once: its name, the call shape that reads its arguments
// (entry_points.cpp's *Entry structs, one per shape), its C parameter list and the same names as an
// argument list. entry_points.cpp generates from each row the exported MPI_<Name>, its fast path
// (a tail call of the library's function) and the shim's path; a new variant of a shape (MPI-4's
// large-count `_c` functions, a nonblocking form) is a new row.
//
// X(Name, Shape, (parameters), (arguments)); every row names its communicator `comm`.
// The rows are laid out by hand, row against row.
// clang-format off
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

// MPI-4's large-count forms, where the library declares them (MPICH 4; not Open MPI 4.1): the same
// decision and engine, through shapes that read MPI_Count and MPI_Aint (entry_points.cpp).
#if MPI_VERSION >= 4
#define COLLSHIM_LARGE_COUNT_ENTRY_POINTS(X)                                                                      \
  X(Allgather_c, AllgatherLargeEntry,                                                                             \
    (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,         \
     MPI_Datatype recvtype, MPI_Comm comm),                                                                       \
    (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))                                           \
  X(Allgatherv_c, AllgathervLargeEntry,                                                                           \
    (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[], \
     const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm),                                              \
    (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm))                                  \
  X(Alltoallv_c, AlltoallvLargeEntry,                                                                             \
    (const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype,          \
     void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm), \
    (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm))                       \
  X(Alltoall_c, AlltoallLargeEntry,                                                                               \
    (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,         \
     MPI_Datatype recvtype, MPI_Comm comm),                                                                       \
    (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))                                           \
  X(Allreduce_c, AllreduceLargeEntry,                                                                             \
    (const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),       \
    (sendbuf, recvbuf, count, datatype, op, comm))                                                                \
  X(Gatherv_c, GathervLargeEntry,                                                                                 \
    (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[], \
     const MPI_Aint displs[], MPI_Datatype recvtype, int root, MPI_Comm comm),                                    \
    (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm))                            \
  X(Scatterv_c, ScattervLargeEntry,                                                                               \
    (const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[], MPI_Datatype sendtype,           \
     void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm),                         \
    (sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm))
#else
#define COLLSHIM_LARGE_COUNT_ENTRY_POINTS(X)
#endif

// Every function the shim may run its algorithms for.
#define COLLSHIM_DECIDED_ENTRY_POINTS(X) COLLSHIM_ENTRY_POINTS(X) COLLSHIM_LARGE_COUNT_ENTRY_POINTS(X)

// The nonblocking and persistent variants, intercepted only to be passed on to the library as they
// are and counted for the report ("passed through, not handled"): running a multi-step schedule
// nonblocking would need progress inside every blocking call the application makes. Each row names
// the blocking shape whose arguments it shares (to count its bytes as the report counts the blocking
// call's), the parameters, the shape's arguments, and every argument.
//
// X(Name, Shape, (parameters), (shape arguments), (arguments))
#define COLLSHIM_NONBLOCKING_ENTRY_POINTS(X)                                                                      \
  X(Iallgather, AllgatherEntry,                                                                                   \
    (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,                     \
     MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request),                                                 \
    (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),                                           \
    (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request))                                  \
  X(Iallgatherv, AllgathervEntry,                                                                                 \
    (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],             \
     const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request),                             \
    (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm),                                  \
    (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request))                         \
  X(Ialltoallv, AlltoallvEntry,                                                                                   \
    (const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf,      \
     const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request),    \
    (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm),                       \
    (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, request))              \
  X(Ialltoall, AlltoallEntry,                                                                                     \
    (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,                     \
     MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request),                                                 \
    (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),                                           \
    (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request))                                  \
  X(Iallreduce, AllreduceEntry,                                                                                   \
    (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,              \
     MPI_Request* request),                                                                                       \
    (sendbuf, recvbuf, count, datatype, op, comm), (sendbuf, recvbuf, count, datatype, op, comm, request))        \
  X(Igatherv, GathervEntry,                                                                                       \
    (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],             \
     const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request),                   \
    (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm),                            \
    (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, request))                   \
  X(Iscatterv, ScattervEntry,                                                                                     \
    (const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void* recvbuf,       \
     int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request),                        \
    (sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm),                            \
    (sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, request))

// MPI-4's persistent collectives, where the library declares them (MPICH 4; not Open MPI 4.1).
#if MPI_VERSION >= 4
#define COLLSHIM_PERSISTENT_ENTRY_POINTS(X)                                                                       \
  X(Allgather_init, AllgatherEntry,                                                                               \
    (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,                     \
     MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request* request),                                  \
    (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),                                           \
    (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request))                            \
  X(Allgatherv_init, AllgathervEntry,                                                                             \
    (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],             \
     const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request* request),              \
    (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm),                                  \
    (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, info, request))                   \
  X(Alltoallv_init, AlltoallvEntry,                                                                               \
    (const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf,      \
     const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,            \
     MPI_Request* request),                                                                                       \
    (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm),                       \
    (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, info, request))        \
  X(Alltoall_init, AlltoallEntry,                                                                                 \
    (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,                     \
     MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request* request),                                  \
    (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),                                           \
    (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request))                            \
  X(Allreduce_init, AllreduceEntry,                                                                               \
    (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,              \
     MPI_Info info, MPI_Request* request),                                                                        \
    (sendbuf, recvbuf, count, datatype, op, comm), (sendbuf, recvbuf, count, datatype, op, comm, info, request))  \
  X(Gatherv_init, GathervEntry,                                                                                   \
    (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],             \
     const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request* request),    \
    (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm),                            \
    (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, info, request))             \
  X(Scatterv_init, ScattervEntry,                                                                                 \
    (const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void* recvbuf,       \
     int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request* request),         \
    (sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm),                            \
    (sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, info, request))
#else
#define COLLSHIM_PERSISTENT_ENTRY_POINTS(X)
#endif
// clang-format on

// Every variant the shim passes on unhandled.
#define COLLSHIM_UNHANDLED_ENTRY_POINTS(X) COLLSHIM_NONBLOCKING_ENTRY_POINTS(X) COLLSHIM_PERSISTENT_ENTRY_POINTS(X)

namespace collshim {

// The unhandled variants by index: the report's counters (Profile::count_unhandled) and their names.
enum class UnhandledFunction {
#define COLLSHIM_UNHANDLED_INDEX(Name, ...) Name,
  COLLSHIM_UNHANDLED_ENTRY_POINTS(COLLSHIM_UNHANDLED_INDEX)
#undef COLLSHIM_UNHANDLED_INDEX
      count
};

inline constexpr const char* unhandled_function_names[] = {
#define COLLSHIM_UNHANDLED_NAME(Name, ...) "MPI_" #Name,
    COLLSHIM_UNHANDLED_ENTRY_POINTS(COLLSHIM_UNHANDLED_NAME)
#undef COLLSHIM_UNHANDLED_NAME
};

}  // namespace collshim
