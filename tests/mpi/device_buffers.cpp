// Device buffers pass through, host buffers still run the shim's algorithms, in one job. Run with
// an algorithm forced for every collective, and either the stub CUDA driver
// (tests/device/stub_cuda_driver.cpp) preloaded next to the shim, which reports the ranges this
// program marks as device memory, or, with --cuda on a machine with a GPU, the CUDA runtime: then the
// "device" buffers are cudaMallocManaged memory (which an MPI library that is not CUDA-aware can still
// read) and the runtime is started before MPI_Init, as applications do. Per collective, calls on host
// buffers, calls where one rank's send or receive buffer is device memory (a different rank each
// time; in place too), and calls where a rank holds device memory it passes no data in (zero count:
// not asked about). Every call is compared byte for byte with the MPI library's (PMPI_*) on the same
// inputs in host memory. Rank 0 prints how many calls of each collective must show in the report as
// the forced algorithm and as `native` for "device memory"; the test's script checks the JSON report
// against those lines. With --form nonblocking the shim's calls are the nonblocking ones (MPI_I*,
// then MPI_Wait); the library's reference calls stay blocking.
#include <dlfcn.h>
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace {

// Where a rank's "device" buffer lives for one call: `place` returns the pointer the call uses for
// `data`'s bytes, `finish` brings the call's bytes back into every placed vector.
class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  virtual unsigned char* place(std::vector<unsigned char>& data, bool managed) = 0;
  virtual void finish() = 0;
};

// The stub driver: host memory marked as device (or managed) memory.
class StubDeviceMemory : public DeviceMemory {
 public:
  using Mark = void (*)(const void*, std::size_t, int);
  using Clear = void (*)();
  StubDeviceMemory(Mark mark, Clear clear) : mark_(mark), clear_(clear) {}
  unsigned char* place(std::vector<unsigned char>& data, bool managed) override {
    mark_(data.data(), data.size(), managed ? 1 : 0);
    return data.data();
  }
  void finish() override { clear_(); }

 private:
  Mark mark_;
  Clear clear_;
};

// The CUDA runtime, looked up at run time so that the program builds without CUDA.
class CudaManagedMemory : public DeviceMemory {
 public:
  static std::unique_ptr<CudaManagedMemory> open() {
    for (const char* name : {"libcudart.so", "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0"}) {
      if (void* handle = dlopen(name, RTLD_NOW | RTLD_GLOBAL)) {
        auto memory = std::make_unique<CudaManagedMemory>();
        memory->allocate_ = reinterpret_cast<AllocateManaged>(dlsym(handle, "cudaMallocManaged"));
        memory->free_ = reinterpret_cast<Free>(dlsym(handle, "cudaFree"));
        memory->synchronize_ = reinterpret_cast<Synchronize>(dlsym(handle, "cudaDeviceSynchronize"));
        if (memory->allocate_ == nullptr || memory->free_ == nullptr || memory->synchronize_ == nullptr) return nullptr;
        // cudaFree(nullptr) starts the runtime, which loads the driver: before MPI_Init, as an
        // application that picks its GPU first does, so the shim sees a GPU runtime at MPI_Init.
        if (memory->free_(nullptr) != 0) return nullptr;
        return memory;
      }
    }
    return nullptr;
  }
  unsigned char* place(std::vector<unsigned char>& data, bool) override {
    void* memory = nullptr;
    if (allocate_(&memory, data.empty() ? 1 : data.size(), 1 /* cudaMemAttachGlobal */) != 0) return nullptr;
    std::memcpy(memory, data.data(), data.size());
    placed_.push_back({&data, static_cast<unsigned char*>(memory)});
    return static_cast<unsigned char*>(memory);
  }
  void finish() override {
    synchronize_();
    for (auto& [data, memory] : placed_) {
      std::memcpy(data->data(), memory, data->size());
      free_(memory);
    }
    placed_.clear();
  }

 private:
  using AllocateManaged = int (*)(void**, std::size_t, unsigned);
  using Free = int (*)(void*);
  using Synchronize = int (*)();
  AllocateManaged allocate_ = nullptr;
  Free free_ = nullptr;
  Synchronize synchronize_ = nullptr;
  std::vector<std::pair<std::vector<unsigned char>*, unsigned char*>> placed_;
};

std::unique_ptr<DeviceMemory> device_memory;

int rank = 0, p = 1;
bool nonblocking = false;  // --form nonblocking
long passed = 0, failed = 0;

struct Counts {
  int host = 0, device = 0;
};

// Which rank holds device memory in a call, and where.
enum class Where { nowhere, send, receive, in_place_receive, zero_count_send };

void complete(MPI_Request request) { MPI_Wait(&request, MPI_STATUS_IGNORE); }

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
  unsigned char* send_at = send.data();
  unsigned char* recv_at = recv.data();
  if (mine && (where == Where::send || where == Where::zero_count_send)) send_at = device_memory->place(send, false);
  if (mine && (where == Where::receive || where == Where::in_place_receive))
    recv_at = device_memory->place(recv, holder % 2 == 1);  // managed memory on odd holders
  if (send_at == nullptr || recv_at == nullptr) {
    ++failed;
    std::printf("FAIL rank %d: no device memory for %s\n", rank, c.name.c_str());
    device_memory->finish();
    return;
  }
  c.run(send_at, recv_at, in_place, zero_send, false);
  device_memory->finish();
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
  bool cuda = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--cuda") == 0) cuda = true;
    if (std::strcmp(argv[i], "--form") == 0 && i + 1 < argc) nonblocking = std::strcmp(argv[++i], "nonblocking") == 0;
  }
  if (cuda) {
    device_memory = CudaManagedMemory::open();
  } else {
    auto mark = reinterpret_cast<StubDeviceMemory::Mark>(dlsym(RTLD_DEFAULT, "collshim_stub_cuda_mark"));
    auto clear = reinterpret_cast<StubDeviceMemory::Clear>(dlsym(RTLD_DEFAULT, "collshim_stub_cuda_clear"));
    if (mark != nullptr && clear != nullptr) device_memory = std::make_unique<StubDeviceMemory>(mark, clear);
  }
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  if (!device_memory) {
    if (rank == 0)
      std::printf("device_buffers: %s\n",
                  cuda ? "no CUDA runtime (libcudart) with a usable GPU" : "the stub CUDA driver is not preloaded");
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
         else if (nonblocking) {
           MPI_Request request;
           MPI_Iallgather(from, n, MPI_INT, r, n, MPI_INT, comm, &request);
           complete(request);
         } else
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
         else if (nonblocking) {
           MPI_Request request;
           MPI_Iallgatherv(from, mine, MPI_INT, r, agreed.data(), displs.data(), MPI_INT, comm, &request);
           complete(request);
         } else
           MPI_Allgatherv(from, mine, MPI_INT, r, agreed.data(), displs.data(), MPI_INT, comm);
       }},
      {"MPI_Alltoall", all, all, true,
       [&](unsigned char* s, unsigned char* r, bool in_place, bool, bool library) {
         if (in_place) std::memcpy(r, s, all);
         const void* from = in_place ? MPI_IN_PLACE : s;
         if (library)
           PMPI_Alltoall(from, n, MPI_INT, r, n, MPI_INT, comm);
         else if (nonblocking) {
           MPI_Request request;
           MPI_Ialltoall(from, n, MPI_INT, r, n, MPI_INT, comm, &request);
           complete(request);
         } else
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
         else if (nonblocking) {
           MPI_Request request;
           MPI_Ialltoallv(s, send_counts.data(), displs.data(), MPI_INT, r, recv_counts.data(), displs.data(), MPI_INT,
                          comm, &request);
           complete(request);
         } else
           MPI_Alltoallv(s, send_counts.data(), displs.data(), MPI_INT, r, recv_counts.data(), displs.data(), MPI_INT,
                         comm);
       }},
      {"MPI_Allreduce", static_cast<std::size_t>(block), static_cast<std::size_t>(block), true,
       [&](unsigned char* s, unsigned char* r, bool in_place, bool, bool library) {
         if (in_place) std::memcpy(r, s, block);
         const void* from = in_place ? MPI_IN_PLACE : s;
         if (library)
           PMPI_Allreduce(from, r, n, MPI_INT, MPI_SUM, comm);
         else if (nonblocking) {
           MPI_Request request;
           MPI_Iallreduce(from, r, n, MPI_INT, MPI_SUM, comm, &request);
           complete(request);
         } else
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
         else if (nonblocking) {
           MPI_Request request;
           MPI_Igatherv(s, mine, MPI_INT, r, rc.data(), displs.data(), MPI_INT, root, comm, &request);
           complete(request);
         } else
           MPI_Gatherv(s, mine, MPI_INT, r, rc.data(), displs.data(), MPI_INT, root, comm);
       },
       -1, p - 1},
      {"MPI_Scatterv", all, static_cast<std::size_t>(block), false,
       [&](unsigned char* s, unsigned char* r, bool, bool, bool library) {
         const int root = 0;
         if (library)
           PMPI_Scatterv(s, counts.data(), displs.data(), MPI_INT, r, n, MPI_INT, root, comm);
         else if (nonblocking) {
           MPI_Request request;
           MPI_Iscatterv(s, counts.data(), displs.data(), MPI_INT, r, n, MPI_INT, root, comm, &request);
           complete(request);
         } else
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
