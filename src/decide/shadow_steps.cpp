#include "decide/shadow_steps.hpp"

namespace collshim {

long long ShadowSteps::sum(long long value) {
  PMPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_LONG_LONG, MPI_SUM, comm_);
  return value;
}

int ShadowSteps::max(int value) {
  PMPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT, MPI_MAX, comm_);
  return value;
}

void ShadowSteps::broadcast(void* data, std::size_t bytes, int root) {
  PMPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, root, comm_);
}

std::vector<long long> ShadowSteps::gather(const std::vector<long long>& values) {
  std::vector<long long> all(rank_ == 0 ? static_cast<std::size_t>(size_) * values.size() : 0);
  PMPI_Gather(values.data(), static_cast<int>(values.size()), MPI_LONG_LONG, all.data(),
              static_cast<int>(values.size()), MPI_LONG_LONG, 0, comm_);
  return all;
}

// Every rank's session is in the same state (the same trial sequence, the same agreed times), so
// every rank takes the barrier and the reduction of the same calls.
double ShadowSteps::time_trial(bool timed, const std::function<int()>& run, int& rc, double& own_seconds) {
  if (timed) PMPI_Barrier(comm_);
  const double start = PMPI_Wtime();
  rc = run();
  own_seconds = PMPI_Wtime() - start;
  double agreed = own_seconds;
  if (timed) PMPI_Allreduce(MPI_IN_PLACE, &agreed, 1, MPI_DOUBLE, MPI_MAX, comm_);
  return agreed;
}

}  // namespace collshim
