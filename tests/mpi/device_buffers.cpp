// Device buffers pass through, host buffers still run the shim's algorithms, in one job. Run with
// the stub CUDA driver (tests/device/stub_cuda_driver.cpp) preloaded next to the shim and an
// algorithm forced for every collective: the stub reports the ranges this program marks as device
// memory. Per collective, calls on host buffers, calls where one rank's send or receive buffer is
// "device" memory (a different rank each time; in place too), and calls where a rank marks a buffer
// it passes no data in (zero count: not asked about). Every call is compared byte for byte with the
// MPI library's (PMPI_*) on the same inputs. Rank 0 prints how many calls of each collective must
// show in the report as the forced algorithm and as `native` for "device memory"; the test's script
// checks the JSON report against those lines.
#include <dlfcn.h>
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

using Mark = void (*)(const void*, std::size_t, int);
using Clear = void (*)();
Mark mark_device = nullptr;
Clear clear_marks = nullptr;

int rank = 0, p = 1;
long passed = 0, failed = 0;

struct Counts {
  int host = 0, device = 0;
};

// Which rank holds device memory in a call, and where.
enum class Where { nowhere, send, receive, in_place_receive, zero_count_send };

std::vector<unsigned char> pattern(std::size_t bytes, int salt) {
  std::vector<unsigned char> data(bytes);
  for (std::size_t i = 0; i < bytes; ++i) data[i] = static_cast<unsigned char>(rank * 31 + salt * 7 + i * 13);
  return data;
}

void compare(const std::vector<unsigned char>& expected, const std::vector<unsigned char>& actual,
             const std::string& what) {
  if (expected == actual) {
    ++passed;
    return;
  }
  ++failed;
  std::printf("FAIL rank %d: %s differs from the MPI library's result\n", rank, what.c_str());
}

// One collective call, on buffers the shim sees (MPI_*) and again through PMPI_*: `run(send, recv,
// in_place, through_library)` makes the call; `device` marks this rank's buffers first.
struct Case {
  std::string name;
  std::size_t send_bytes, recv_bytes;
  bool can_be_in_place;
  std::function<void(unsigned char* send, unsigned char* recv, bool in_place, bool zero_send, bool library)> run;
  int only_root_sends = -1;     // Scatterv: the send buffer means something at this root only
  int only_root_receives = -1;  // Gatherv: the receive buffer means something at this root only
};

void run_case(const Case& c, Where where, int holder, Counts& counts) {
  const bool mine = rank == holder;
  const bool in_place = where == Where::in_place_receive;
  const bool zero_send = where == Where::zero_count_send && mine;
  std::vector<unsigned char> send = pattern(c.send_bytes, 1), recv = pattern(c.recv_bytes, 2);
  std::vector<unsigned char> library_send = send, library_recv = recv;
  clear_marks();
  if (mine && (where == Where::send || where == Where::zero_count_send)) mark_device(send.data(), send.size(), 0);
  if (mine && (where == Where::receive || where == Where::in_place_receive))
    mark_device(recv.data(), recv.size(), holder % 2);  // managed memory on odd holders
  c.run(send.data(), recv.data(), in_place, zero_send, false);
  clear_marks();
  c.run(library_send.data(), library_recv.data(), in_place, zero_send, true);
  const char* names[] = {"host", "device send", "device receive", "device receive, in place", "zero-count device send"};
  compare(library_recv, recv,
          c.name + " (" + names[static_cast<int>(where)] + " on rank " + std::to_string(holder) + ")");
  const bool send_counts = c.only_root_sends < 0 || holder == c.only_root_sends;
  const bool receive_counts = c.only_root_receives < 0 || holder == c.only_root_receives;
  const bool device = (where == Where::send && send_counts) ||
                      ((where == Where::receive || where == Where::in_place_receive) && receive_counts);
  ++(device ? counts.device : counts.host);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  mark_device = reinterpret_cast<Mark>(dlsym(RTLD_DEFAULT, "collshim_stub_cuda_mark"));
  clear_marks = reinterpret_cast<Clear>(dlsym(RTLD_DEFAULT, "collshim_stub_cuda_clear"));
  if (mark_device == nullptr || clear_marks == nullptr) {
    if (rank == 0) std::printf("device_buffers: the stub CUDA driver is not preloaded\n");
    MPI_Finalize();
    return 1;
  }
  const int n = 6;  // ints per block
  const int block = n * static_cast<int>(sizeof(int));
  std::vector<int> counts(p, n), displs(p);
  for (int i = 0; i < p; ++i) displs[i] = i * n;
  const MPI_Comm comm = MPI_COMM_WORLD;
  const std::size_t all = static_cast<std::size_t>(block) * p;
  std::vector<Case> cases = {
      {"MPI_Allgather", static_cast<std::size_t>(block), all, true,
       [&](unsigned char* s, unsigned char* r, bool in_place, bool, bool library) {
         if (in_place) std::memcpy(r + static_cast<std::size_t>(rank) * block, s, block);
         const void* from = in_place ? MPI_IN_PLACE : s;
         if (library)
           PMPI_Allgather(from, n, MPI_INT, r, n, MPI_INT, comm);
         else
           MPI_Allgather(from, n, MPI_INT, r, n, MPI_INT, comm);
       }},
      {"MPI_Allgatherv", static_cast<std::size_t>(block), all, true,
       [&](unsigned char* s, unsigned char* r, bool in_place, bool zero, bool library) {
         // Zero-count calls: the holder contributes nothing, everybody knows it.
         std::vector<int> agreed(p);
         int mine = zero ? 0 : n;
         PMPI_Allgather(&mine, 1, MPI_INT, agreed.data(), 1, MPI_INT, comm);
         if (in_place) std::memcpy(r + static_cast<std::size_t>(rank) * block, s, block);
         const void* from = in_place ? MPI_IN_PLACE : s;
         if (library)
           PMPI_Allgatherv(from, mine, MPI_INT, r, agreed.data(), displs.data(), MPI_INT, comm);
         else
           MPI_Allgatherv(from, mine, MPI_INT, r, agreed.data(), displs.data(), MPI_INT, comm);
       }},
      {"MPI_Alltoall", all, all, true,
       [&](unsigned char* s, unsigned char* r, bool in_place, bool, bool library) {
         if (in_place) std::memcpy(r, s, all);
         const void* from = in_place ? MPI_IN_PLACE : s;
         if (library)
           PMPI_Alltoall(from, n, MPI_INT, r, n, MPI_INT, comm);
         else
           MPI_Alltoall(from, n, MPI_INT, r, n, MPI_INT, comm);
       }},
      {"MPI_Alltoallv", all, all, false,
       [&](unsigned char* s, unsigned char* r, bool, bool zero, bool library) {
         // Zero-count calls: the holder sends nothing; every rank learns its receive counts.
         std::vector<int> send_counts(p, zero ? 0 : n), recv_counts(p);
         PMPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, comm);
         if (library)
           PMPI_Alltoallv(s, send_counts.data(), displs.data(), MPI_INT, r, recv_counts.data(), displs.data(), MPI_INT,
                          comm);
         else
           MPI_Alltoallv(s, send_counts.data(), displs.data(), MPI_INT, r, recv_counts.data(), displs.data(), MPI_INT,
                         comm);
       }},
      {"MPI_Allreduce", static_cast<std::size_t>(block), static_cast<std::size_t>(block), true,
       [&](unsigned char* s, unsigned char* r, bool in_place, bool, bool library) {
         if (in_place) std::memcpy(r, s, block);
         const void* from = in_place ? MPI_IN_PLACE : s;
         if (library)
           PMPI_Allreduce(from, r, n, MPI_INT, MPI_SUM, comm);
         else
           MPI_Allreduce(from, r, n, MPI_INT, MPI_SUM, comm);
       }},
      {"MPI_Gatherv", static_cast<std::size_t>(block), all, false,
       [&](unsigned char* s, unsigned char* r, bool, bool zero, bool library) {
         const int root = p - 1;
         std::vector<int> rc(p);
         int mine = zero ? 0 : n;
         PMPI_Allgather(&mine, 1, MPI_INT, rc.data(), 1, MPI_INT, comm);
         if (library)
           PMPI_Gatherv(s, mine, MPI_INT, r, rc.data(), displs.data(), MPI_INT, root, comm);
         else
           MPI_Gatherv(s, mine, MPI_INT, r, rc.data(), displs.data(), MPI_INT, root, comm);
       },
       -1, p - 1},
      {"MPI_Scatterv", all, static_cast<std::size_t>(block), false,
       [&](unsigned char* s, unsigned char* r, bool, bool, bool library) {
         const int root = 0;
         if (library)
           PMPI_Scatterv(s, counts.data(), displs.data(), MPI_INT, r, n, MPI_INT, root, comm);
         else
           MPI_Scatterv(s, counts.data(), displs.data(), MPI_INT, r, n, MPI_INT, root, comm);
       },
       0, -1},
  };
  for (const Case& c : cases) {
    Counts tally;
    for (int call = 0; call < 2; ++call) run_case(c, Where::nowhere, 0, tally);
    for (int holder = 0; holder < p; ++holder) {
      run_case(c, holder % 2 == 0 ? Where::send : Where::receive, holder, tally);
      if (c.can_be_in_place) run_case(c, Where::in_place_receive, (holder + 1) % p, tally);
    }
    // A marked buffer that carries no data is not asked about: the shim's algorithm runs.
    if (c.name == "MPI_Allgatherv" || c.name == "MPI_Alltoallv" || c.name == "MPI_Gatherv")
      run_case(c, Where::zero_count_send, p - 1, tally);
    run_case(c, Where::nowhere, 0, tally);
    if (rank == 0)
      std::printf("device_buffers: expect %s host=%d device=%d\n", c.name.c_str(), tally.host, tally.device);
  }
  long totals[2] = {passed, failed};
  PMPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_LONG, MPI_SUM, comm);
  if (rank == 0) std::printf("device_buffers: %ld checks passed, %ld failed\n", totals[0], totals[1]);
  std::fflush(stdout);
  MPI_Finalize();
  return totals[1] == 0 && totals[0] > 0 ? 0 : 1;
}
