#pragma once
// Nonblocking collectives with results computed in advance, for the progress and completion tests:
// each call owns its buffers and the values its receive buffer must hold once it completes (not a
// second run through the MPI library: these tests are about completion, so every value is known).
#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "library_forms.hpp"

namespace nonblocking {

enum class Kind { allgather, allgatherv, alltoall, alltoallv, allreduce, gatherv, scatterv };

inline const std::vector<Kind>& all_kinds() {
  static const std::vector<Kind> kinds = {Kind::allgather, Kind::allgatherv, Kind::alltoall, Kind::alltoallv,
                                          Kind::allreduce, Kind::gatherv,    Kind::scatterv};
  return kinds;
}

inline const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::allgather: return "MPI_Iallgather";
    case Kind::allgatherv: return "MPI_Iallgatherv";
    case Kind::alltoall: return "MPI_Ialltoall";
    case Kind::alltoallv: return "MPI_Ialltoallv";
    case Kind::allreduce: return "MPI_Iallreduce";
    case Kind::gatherv: return "MPI_Igatherv";
    default: return "MPI_Iscatterv";
  }
}

// The element `index` that rank `rank` contributes, in a call with `salt`.
inline long long value(int rank, long long index, int salt) { return rank * 1000003LL + index * 7 + salt * 131LL; }

// One started nonblocking collective: its buffers (which must not move while it runs), its request and
// the receive buffer it must leave. Elements the call must not write hold a sentinel in both.
struct Call {
  Kind kind;
  std::string what;
  std::vector<long long> send, recv, expected;
  std::vector<int> send_counts, send_displs, recv_counts, recv_displs;
  MPI_Request request = MPI_REQUEST_NULL;
  int rc = MPI_SUCCESS;  // of the starting call

  bool correct() const { return rc == MPI_SUCCESS && recv == expected; }
};

inline std::vector<int> packed(const std::vector<int>& counts) {
  std::vector<int> displs(counts.size());
  for (std::size_t i = 1; i < counts.size(); ++i) displs[i] = displs[i - 1] + counts[i - 1];
  return displs;
}

inline int total(const std::vector<int>& counts) {
  int sum = 0;
  for (int c : counts) sum += c;
  return sum;
}

// How a call is made: MPI_I<name>, or the library's persistent form (library_forms.hpp: MPI-4's
// MPI_<Name>_init, Open MPI 4.1's MPIX_<Name>_init), which leaves the request inactive until MPI_Start.
enum class Form { nonblocking, persistent };

#if LIBRARY_HAS_PERSISTENT
#define NONBLOCKING_CALL(Nonblocking, Persistent, ...)                                               \
  (form == Form::persistent ? LIBRARY_PERSISTENT(Persistent)(__VA_ARGS__, MPI_INFO_NULL, &c.request) \
                            : Nonblocking(__VA_ARGS__, &c.request))
#else
#define NONBLOCKING_CALL(Nonblocking, Persistent, ...) \
  (form == Form::persistent ? MPI_ERR_OTHER : Nonblocking(__VA_ARGS__, &c.request))
#endif

// Starts `kind` on `comm` with blocks of about `n` elements; `salt` varies the data, the irregular
// counts and the root. Every rank of `comm` must start the same calls in the same order. `element`:
// the datatype of the elements (long long or a type of that layout) but for Allreduce, whose
// predefined operation needs MPI_LONG_LONG.
inline std::unique_ptr<Call> start(Kind kind, MPI_Comm comm, int n, int salt, Form form = Form::nonblocking,
                                   MPI_Datatype element = MPI_LONG_LONG) {
  int p, rank;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &rank);
  auto call = std::make_unique<Call>();
  call->kind = kind;
  call->what = std::string(kind_name(kind)) + " n=" + std::to_string(n) + " salt=" + std::to_string(salt);
  const long long sentinel = -77;
  const int root = salt % p;
  // Irregular counts, the same on every rank: some zero for small n.
  const auto irregular = [&](int r) { return (r + salt) % 3 == 0 ? n / 3 : n + r % 4; };
  Call& c = *call;
  switch (kind) {
    case Kind::allgather:
      for (int i = 0; i < n; ++i) c.send.push_back(value(rank, i, salt));
      for (int r = 0; r < p; ++r)
        for (int i = 0; i < n; ++i) c.expected.push_back(value(r, i, salt));
      c.recv.assign(c.expected.size(), sentinel);
      c.rc = NONBLOCKING_CALL(MPI_Iallgather, Allgather, c.send.data(), n, element, c.recv.data(), n, element, comm);
      break;
    case Kind::allgatherv:
      for (int r = 0; r < p; ++r) c.recv_counts.push_back(irregular(r));
      c.recv_displs = packed(c.recv_counts);
      for (int i = 0; i < c.recv_counts[rank]; ++i) c.send.push_back(value(rank, i, salt));
      for (int r = 0; r < p; ++r)
        for (int i = 0; i < c.recv_counts[r]; ++i) c.expected.push_back(value(r, i, salt));
      c.recv.assign(c.expected.size(), sentinel);
      c.rc = NONBLOCKING_CALL(MPI_Iallgatherv, Allgatherv, c.send.data(), c.recv_counts[rank], element, c.recv.data(),
                              c.recv_counts.data(), c.recv_displs.data(), element, comm);
      break;
    case Kind::alltoall:
      for (int to = 0; to < p; ++to)
        for (int i = 0; i < n; ++i) c.send.push_back(value(rank, to * 100000LL + i, salt));
      for (int from = 0; from < p; ++from)
        for (int i = 0; i < n; ++i) c.expected.push_back(value(from, rank * 100000LL + i, salt));
      c.recv.assign(c.expected.size(), sentinel);
      c.rc = NONBLOCKING_CALL(MPI_Ialltoall, Alltoall, c.send.data(), n, element, c.recv.data(), n, element, comm);
      break;
    case Kind::alltoallv: {
      const auto count = [&](int from, int to) { return (from + 2 * to + salt) % 3 == 0 ? 0 : n + (from + to) % 3; };
      for (int peer = 0; peer < p; ++peer) {
        c.send_counts.push_back(count(rank, peer));
        c.recv_counts.push_back(count(peer, rank));
      }
      c.send_displs = packed(c.send_counts);
      c.recv_displs = packed(c.recv_counts);
      for (int to = 0; to < p; ++to)
        for (int i = 0; i < c.send_counts[to]; ++i) c.send.push_back(value(rank, to * 100000LL + i, salt));
      for (int from = 0; from < p; ++from)
        for (int i = 0; i < c.recv_counts[from]; ++i) c.expected.push_back(value(from, rank * 100000LL + i, salt));
      c.recv.assign(c.expected.size(), sentinel);
      c.rc = NONBLOCKING_CALL(MPI_Ialltoallv, Alltoallv, c.send.data(), c.send_counts.data(), c.send_displs.data(),
                              element, c.recv.data(), c.recv_counts.data(), c.recv_displs.data(), element, comm);
      break;
    }
    case Kind::allreduce:
      for (int i = 0; i < n; ++i) {
        c.send.push_back(value(rank, i, salt));
        long long sum = 0;
        for (int r = 0; r < p; ++r) sum += value(r, i, salt);
        c.expected.push_back(sum);
      }
      c.recv.assign(c.expected.size(), sentinel);
      c.rc = NONBLOCKING_CALL(MPI_Iallreduce, Allreduce, c.send.data(), c.recv.data(), n, MPI_LONG_LONG, MPI_SUM, comm);
      break;
    case Kind::gatherv:
      for (int r = 0; r < p; ++r) c.recv_counts.push_back(irregular(r));
      c.recv_displs = packed(c.recv_counts);
      for (int i = 0; i < c.recv_counts[rank]; ++i) c.send.push_back(value(rank, i, salt));
      if (rank == root) {
        for (int r = 0; r < p; ++r)
          for (int i = 0; i < c.recv_counts[r]; ++i) c.expected.push_back(value(r, i, salt));
      }
      c.recv.assign(c.expected.size(), sentinel);
      c.rc = NONBLOCKING_CALL(MPI_Igatherv, Gatherv, c.send.data(), c.recv_counts[rank], element, c.recv.data(),
                              c.recv_counts.data(), c.recv_displs.data(), element, root, comm);
      break;
    case Kind::scatterv:
      for (int r = 0; r < p; ++r) c.send_counts.push_back(irregular(r));
      c.send_displs = packed(c.send_counts);
      if (rank == root) {
        for (int r = 0; r < p; ++r)
          for (int i = 0; i < c.send_counts[r]; ++i) c.send.push_back(value(r, i, salt));
      }
      for (int i = 0; i < c.send_counts[rank]; ++i) c.expected.push_back(value(rank, i, salt));
      c.recv.assign(c.expected.size(), sentinel);
      c.rc = NONBLOCKING_CALL(MPI_Iscatterv, Scatterv, c.send.data(), c.send_counts.data(), c.send_displs.data(),
                              element, c.recv.data(), c.send_counts[rank], element, root, comm);
      break;
  }
  return call;
}
#undef NONBLOCKING_CALL

}  // namespace nonblocking
