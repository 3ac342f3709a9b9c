#pragma once
// The collective steps of a decision (collective_steps.hpp) as a job takes them: PMPI calls on the
// shadow communicator, which the application's own messages can never match. The shim's entry
// points and collshim-bench --rules use it.
//
// A timed trial call starts from a barrier on the shadow communicator, and its time is the slowest
// rank's, which is how the benchmarks time a call (collshim-bench, bench/sim). Back to back, a call
// would start with the ranks as the previous call left them: a candidate that finishes unevenly would
// pass its imbalance to the next candidate's first timed call, and one whose ranks leave early would
// look faster than it runs from a common start. Measured both ways (docs/results.md), the trial calls
// had confirmed picks that ran up to twice native's time once each call followed a barrier.
#include <mpi.h>

#include "decide/collective_steps.hpp"

namespace collshim {

class ShadowSteps final : public CollectiveSteps {
 public:
  // `rank` and `size`: of `shadow`, which its owner knows already.
  ShadowSteps(MPI_Comm shadow, int rank, int size) : comm_(shadow), rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  long long sum(long long value) override;
  int max(int value) override;
  void broadcast(void* data, std::size_t bytes, int root) override;
  std::vector<long long> gather(const std::vector<long long>& values) override;
  double time_trial(bool timed, const std::function<int()>& run, int& rc, double& own_seconds) override;

 private:
  MPI_Comm comm_;
  int rank_, size_;
};

}  // namespace collshim
