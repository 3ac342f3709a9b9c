// Known nonblocking (and, where the library has them, MPI-4 persistent) calls of the seven
// collectives: `repeats` times each (argument 1, default 3) on MPI_COMM_WORLD, 16 ints per block.
// The shim passes them on unhandled and counts them for the report; their results must equal the
// blocking PMPI_* call's, element for element. Prints one line per kind, then
// "unhandled_calls: N calls of each variant, every result equal" (or FAIL lines and exit status 1).
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace {

constexpr int n = 16;

struct Buffers {
  int p = 0, rank = 0;
  std::vector<int> mine, out, counts, displs;
  explicit Buffers(int p_, int rank_)
      : p(p_), rank(rank_), mine(n), out(static_cast<std::size_t>(n) * p_), counts(p_, n), displs(p_) {
    for (int i = 0; i < n; ++i) mine[i] = rank * 1000 + i;
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = rank * 100000 + static_cast<int>(i);
    for (int i = 0; i < p; ++i) displs[i] = i * n;
  }
};

// A call writes into `result` (the size of one full exchange); `start` issues it and returns a
// request (MPI_REQUEST_NULL for a blocking reference call).
using Call = std::function<void(const Buffers&, std::vector<int>& result, MPI_Request& request)>;

struct Variant {
  std::string name;
  Call reference;  // blocking, PMPI_*: not seen by the shim
  Call call;       // the variant under test, through MPI_*
  bool persistent = false;
};

int failures = 0;

void check(const Variant& v, const Buffers& b, int repeats) {
  std::vector<int> expected(b.out.size(), -1), got(b.out.size(), -1);
  MPI_Request none = MPI_REQUEST_NULL;
  v.reference(b, expected, none);
  for (int i = 0; i < repeats; ++i) {
    std::fill(got.begin(), got.end(), -1);
    MPI_Request request = MPI_REQUEST_NULL;
    v.call(b, got, request);
    if (v.persistent) MPI_Start(&request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    if (v.persistent) MPI_Request_free(&request);
    if (got != expected) {
      std::printf("FAIL: %s on rank %d: result differs from the blocking call's\n", v.name.c_str(), b.rank);
      ++failures;
      return;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 3;
  int p = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const Buffers b(p, rank);
  const MPI_Comm world = MPI_COMM_WORLD;
  std::vector<Variant> variants = {
      {"MPI_Iallgather",
       [&](const Buffers& x, std::vector<int>& r, MPI_Request&) {
         PMPI_Allgather(x.mine.data(), n, MPI_INT, r.data(), n, MPI_INT, world);
       },
       [&](const Buffers& x, std::vector<int>& r, MPI_Request& q) {
         MPI_Iallgather(x.mine.data(), n, MPI_INT, r.data(), n, MPI_INT, world, &q);
       }},
      {"MPI_Iallgatherv",
       [&](const Buffers& x, std::vector<int>& r, MPI_Request&) {
         PMPI_Allgatherv(x.mine.data(), n, MPI_INT, r.data(), x.counts.data(), x.displs.data(), MPI_INT, world);
       },
       [&](const Buffers& x, std::vector<int>& r, MPI_Request& q) {
         MPI_Iallgatherv(x.mine.data(), n, MPI_INT, r.data(), x.counts.data(), x.displs.data(), MPI_INT, world, &q);
       }},
      {"MPI_Ialltoallv",
       [&](const Buffers& x, std::vector<int>& r, MPI_Request&) {
         PMPI_Alltoallv(x.out.data(), x.counts.data(), x.displs.data(), MPI_INT, r.data(), x.counts.data(),
                        x.displs.data(), MPI_INT, world);
       },
       [&](const Buffers& x, std::vector<int>& r, MPI_Request& q) {
         MPI_Ialltoallv(x.out.data(), x.counts.data(), x.displs.data(), MPI_INT, r.data(), x.counts.data(),
                        x.displs.data(), MPI_INT, world, &q);
       }},
      {"MPI_Ialltoall",
       [&](const Buffers& x, std::vector<int>& r, MPI_Request&) {
         PMPI_Alltoall(x.out.data(), n, MPI_INT, r.data(), n, MPI_INT, world);
       },
       [&](const Buffers& x, std::vector<int>& r, MPI_Request& q) {
         MPI_Ialltoall(x.out.data(), n, MPI_INT, r.data(), n, MPI_INT, world, &q);
       }},
      {"MPI_Iallreduce",
       [&](const Buffers& x, std::vector<int>& r, MPI_Request&) {
         PMPI_Allreduce(x.mine.data(), r.data(), n, MPI_INT, MPI_SUM, world);
       },
       [&](const Buffers& x, std::vector<int>& r, MPI_Request& q) {
         MPI_Iallreduce(x.mine.data(), r.data(), n, MPI_INT, MPI_SUM, world, &q);
       }},
      {"MPI_Igatherv",
       [&](const Buffers& x, std::vector<int>& r, MPI_Request&) {
         PMPI_Gatherv(x.mine.data(), n, MPI_INT, r.data(), x.counts.data(), x.displs.data(), MPI_INT, 0, world);
       },
       [&](const Buffers& x, std::vector<int>& r, MPI_Request& q) {
         MPI_Igatherv(x.mine.data(), n, MPI_INT, r.data(), x.counts.data(), x.displs.data(), MPI_INT, 0, world, &q);
       }},
      {"MPI_Iscatterv",
       [&](const Buffers& x, std::vector<int>& r, MPI_Request&) {
         PMPI_Scatterv(x.out.data(), x.counts.data(), x.displs.data(), MPI_INT, r.data(), n, MPI_INT, 0, world);
       },
       [&](const Buffers& x, std::vector<int>& r, MPI_Request& q) {
         MPI_Iscatterv(x.out.data(), x.counts.data(), x.displs.data(), MPI_INT, r.data(), n, MPI_INT, 0, world, &q);
       }},
  };
#if MPI_VERSION >= 4
  const MPI_Info info = MPI_INFO_NULL;
  const std::vector<Variant> persistent = {
      {"MPI_Allgather_init", variants[0].reference,
       [&](const Buffers& x, std::vector<int>& r, MPI_Request& q) {
         MPI_Allgather_init(x.mine.data(), n, MPI_INT, r.data(), n, MPI_INT, world, info, &q);
       },
       true},
      {"MPI_Allgatherv_init", variants[1].reference,
       [&](const Buffers& x, std::vector<int>& r, MPI_Request& q) {
         MPI_Allgatherv_init(x.mine.data(), n, MPI_INT, r.data(), x.counts.data(), x.displs.data(), MPI_INT, world,
                             info, &q);
       },
       true},
      {"MPI_Alltoallv_init", variants[2].reference,
       [&](const Buffers& x, std::vector<int>& r, MPI_Request& q) {
         MPI_Alltoallv_init(x.out.data(), x.counts.data(), x.displs.data(), MPI_INT, r.data(), x.counts.data(),
                            x.displs.data(), MPI_INT, world, info, &q);
       },
       true},
      {"MPI_Alltoall_init", variants[3].reference,
       [&](const Buffers& x, std::vector<int>& r, MPI_Request& q) {
         MPI_Alltoall_init(x.out.data(), n, MPI_INT, r.data(), n, MPI_INT, world, info, &q);
       },
       true},
      {"MPI_Allreduce_init", variants[4].reference,
       [&](const Buffers& x, std::vector<int>& r, MPI_Request& q) {
         MPI_Allreduce_init(x.mine.data(), r.data(), n, MPI_INT, MPI_SUM, world, info, &q);
       },
       true},
      {"MPI_Gatherv_init", variants[5].reference,
       [&](const Buffers& x, std::vector<int>& r, MPI_Request& q) {
         MPI_Gatherv_init(x.mine.data(), n, MPI_INT, r.data(), x.counts.data(), x.displs.data(), MPI_INT, 0, world,
                          info, &q);
       },
       true},
      {"MPI_Scatterv_init", variants[6].reference,
       [&](const Buffers& x, std::vector<int>& r, MPI_Request& q) {
         MPI_Scatterv_init(x.out.data(), x.counts.data(), x.displs.data(), MPI_INT, r.data(), n, MPI_INT, 0, world,
                           info, &q);
       },
       true},
  };
  variants.insert(variants.end(), persistent.begin(), persistent.end());
#endif
  for (const Variant& v : variants) check(v, b, repeats);
  int total_failures = 0;
  MPI_Allreduce(&failures, &total_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0 && total_failures == 0)
    std::printf("unhandled_calls: %d calls of each of %zu variants, every result equal\n", repeats, variants.size());
  MPI_Finalize();
  return total_failures == 0 ? 0 : 1;
}
