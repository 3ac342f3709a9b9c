// What the shim costs a large job under SimGrid SMPI: MPI_Init, the heap it holds, and each key's
// first calls. The shim's entry points are linked into this program (bench/CMakeLists.txt, SMPI
// only), so every simulated rank runs its own copy of them, as a preloaded shim would per process.
// COLLSHIM_DISABLE=1 runs the same program with every call passed through: the native baseline.
//
// The probe's collectives run on a duplicate of the world. The shim makes a communicator's shadow
// (its own duplicate) eagerly inside MPI_Comm_dup, but MPI_COMM_WORLD's only inside its first call,
// just before its first message. Forced algorithms and the cost model on MPI_COMM_WORLD deadlocked
// SMPI in that first call (p = 32 and 256), on the duplicate they did not; the likely cause is SMPI
// matching a message to a communicator whose id is still being agreed (docs/simulation.md, "The impi
// selector crosses communicators"), not verified.
//
// Rank 0 prints CSV lines "probe,<phase>,<what>,<value>" at barriers after each phase: init (MPI_Init),
// own_communicator (MPI_Comm_dup of the world), collectives (each key's first calls on it),
// two_communicators (another duplicate and a split in halves, one Allgather on each):
//   init_sim_s   the slowest rank's simulated time in MPI_Init (SMPI's clock starts at 0)
//   wall_s       host seconds since rank 0 entered main, when every rank has reached the barrier
//   cpu_s        the process's processor seconds (user and system) by then, every simulated rank's
//   heap_bytes   the process's malloc heap in use (mallinfo2: every simulated rank shares one process)
//   rss_bytes    the process's resident set (/proc/self/statm)
//   first_calls_s  per key (collective, block bytes): the slowest rank's simulated time of its first
//                  --calls calls, every call after a barrier, as a job's key sees them
//
//   smpirun ... shim_probe [calls per key, default 100] [largest block, default 4096]
#include <mpi.h>

#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>  // sysconf

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace {

int probe_rank = 0;
std::chrono::steady_clock::time_point probe_start;

long long heap_in_use() {
  const struct mallinfo2 info = mallinfo2();
  return static_cast<long long>(info.uordblks + info.hblkhd);
}

long long resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  long long size = 0, resident = 0;
  statm >> size >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

// Every rank has finished the phase when rank 0 leaves the barrier (its own work included).
void sample(const char* phase) {
  PMPI_Barrier(MPI_COMM_WORLD);
  if (probe_rank != 0) return;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - probe_start).count();
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  const double cpu = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                     1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
  std::printf("probe,%s,wall_s,%.3f\nprobe,%s,cpu_s,%.3f\nprobe,%s,heap_bytes,%lld\nprobe,%s,rss_bytes,%lld\n", phase,
              wall, phase, cpu, phase, heap_in_use(), phase, resident_bytes());
  std::fflush(stdout);
}

double slowest(double mine) {
  double max = 0;
  PMPI_Reduce(&mine, &max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  return max;
}

// `calls` calls of one key, each after a barrier; the slowest rank's simulated time over them.
template <typename Call>
void first_calls(const char* collective, int bytes, int calls, Call call) {
  double inside = 0;
  for (int i = 0; i < calls; ++i) {
    PMPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    call();
    inside += MPI_Wtime() - t0;
  }
  const double max = slowest(inside);
  if (probe_rank == 0) std::printf("probe,%s:%d,first_calls_s,%.9f\n", collective, bytes, max);
}

}  // namespace

int main(int argc, char** argv) {
  probe_start = std::chrono::steady_clock::now();
  MPI_Init(&argc, &argv);
  const double init_s = MPI_Wtime();
  int p = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &probe_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const int calls = argc > 1 ? std::atoi(argv[1]) : 100;
  const int largest = argc > 2 ? std::atoi(argv[2]) : 4096;
  const double init_max = slowest(init_s);
  if (probe_rank == 0) std::printf("probe,init,init_sim_s,%.9f\nprobe,init,ranks,%d\n", init_max, p);
  sample("init");
  MPI_Comm work = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &work);
  sample("own_communicator");

  for (int bytes = 8; bytes <= largest; bytes *= 8) {
    const auto block = static_cast<std::size_t>(bytes);
    std::vector<char> send(block * p, 1), recv(block * p);
    first_calls("allgather", bytes, calls,
                [&] { MPI_Allgather(send.data(), bytes, MPI_BYTE, recv.data(), bytes, MPI_BYTE, work); });
    first_calls("alltoall", bytes, calls,
                [&] { MPI_Alltoall(send.data(), bytes, MPI_BYTE, recv.data(), bytes, MPI_BYTE, work); });
    const int count = bytes / 8;
    std::vector<long long> in(count, probe_rank), out(count);
    first_calls("allreduce", bytes, calls,
                [&] { MPI_Allreduce(in.data(), out.data(), count, MPI_LONG_LONG, MPI_SUM, work); });
  }
  sample("collectives");

  // A communicator of the application's own: each gets its shadow and node maps in the shim.
  MPI_Comm dup = MPI_COMM_NULL, half = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_split(MPI_COMM_WORLD, probe_rank % 2, probe_rank, &half);
  for (MPI_Comm comm : {dup, half}) {
    int size = 0;
    MPI_Comm_size(comm, &size);
    std::vector<char> send(8, 1), recv(8 * static_cast<std::size_t>(size));
    MPI_Allgather(send.data(), 8, MPI_BYTE, recv.data(), 8, MPI_BYTE, comm);
  }
  sample("two_communicators");
  MPI_Comm_free(&half);
  MPI_Comm_free(&dup);
  MPI_Comm_free(&work);
  MPI_Finalize();
  return 0;
}
