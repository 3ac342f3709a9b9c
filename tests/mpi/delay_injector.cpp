// A test-only library preloaded behind libcollshim.so (tests/mpi/online_tuning_test.sh): it wraps
// Allgather and Alltoallv, the MPI library's own collectives that `native` runs, with a random delay of 20-60 ms that
// differs by rank and by call. The shim's other candidates run on point-to-point calls and are not delayed, so online
// tuning must never pick native, and since each rank sees other times, only the agreement on the slowest rank's time
// keeps the ranks in step. Both names are wrapped: the shim passes a call through to the next MPI_* in load order (this
// library), and a schedule's native phase calls PMPI_* directly.
#include <dlfcn.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <random>

namespace {

// DELAY_INJECTOR_US=LOW-HIGH (microseconds) changes the range: a test that needs native only far off
// the model's predictions, not slower than the other candidates by a factor of thousands, runs faster.
std::uniform_int_distribution<unsigned> delay_range() {
  unsigned low = 20000, high = 60000;
  if (const char* text = std::getenv("DELAY_INJECTOR_US")) {
    if (std::sscanf(text, "%u-%u", &low, &high) != 2 || low > high) {
      std::fprintf(stderr, "delay_injector: DELAY_INJECTOR_US=%s is not LOW-HIGH microseconds\n", text);
      std::abort();
    }
  }
  return std::uniform_int_distribution<unsigned>(low, high);
}

void delay() {
  static thread_local std::mt19937 random(static_cast<unsigned>(getpid()));
  static thread_local std::uniform_int_distribution<unsigned> range = delay_range();
  usleep(range(random));
}

// The next definition of `name` in load order, called after the delay: one body for every wrapper.
template <auto Own, typename... Args>
int delayed(const char* name, Args... args) {
  static const auto real = reinterpret_cast<decltype(Own)>(dlsym(RTLD_NEXT, name));
  delay();
  return real(args...);
}

}  // namespace

extern "C" int PMPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                              MPI_Datatype recvtype, MPI_Comm comm) {
  return delayed<&PMPI_Allgather>("PMPI_Allgather", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

extern "C" int PMPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                              void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                              MPI_Comm comm) {
  return delayed<&PMPI_Alltoallv>("PMPI_Alltoallv", sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                  rdispls, recvtype, comm);
}

extern "C" int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                             MPI_Datatype recvtype, MPI_Comm comm) {
  return delayed<&MPI_Allgather>("MPI_Allgather", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

extern "C" int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                             void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                             MPI_Comm comm) {
  return delayed<&MPI_Alltoallv>("MPI_Alltoallv", sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                                 recvtype, comm);
}
