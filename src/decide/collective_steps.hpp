#pragma once
// The few collective steps a decision takes, injected into the decision policy (decision_policy.hpp):
// the shim and collshim-bench pass ShadowSteps (PMPI on the shadow communicator, shadow_steps.hpp),
// collshim-config explain one process standing for rank 0 of the call (SoloSteps below), and the unit
// tests p fake ranks. Every rank of a call takes the same steps in the same order, so each is
// collective wherever the policy calls it.
#include <cstddef>
#include <functional>
#include <vector>

namespace collshim {

class CollectiveSteps {
 public:
  virtual ~CollectiveSteps() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Every rank's `value` summed (the size agreement of rank-local counts).
  virtual long long sum(long long value) = 0;
  // The largest of every rank's `value` (the device-memory vote).
  virtual int max(int value) = 0;
  // `bytes` of `data` from `root` to every rank (the root's size, the model's verdict).
  virtual void broadcast(void* data, std::size_t bytes, int root) = 0;
  // Every rank's `values` (as many from each) on rank 0, rank after rank; empty elsewhere (the summary
  // of Alltoallv's pattern).
  virtual std::vector<long long> gather(const std::vector<long long>& values) = 0;
  // One call of a trial: `run` once (it returns an MPI error code, which goes to `rc`). Timed: from a
  // barrier, and the result is the slowest rank's time; untimed: this rank's own. `own_seconds`:
  // this rank's time of the call itself, barrier excluded (the report records it).
  virtual double time_trial(bool timed, const std::function<int()>& run, int& rc, double& own_seconds) = 0;
};

// One process that stands for rank 0 of a call every rank of which holds what it holds
// (collshim-config explain): nothing to exchange, the root's size is its own, a trial is not run.
class SoloSteps final : public CollectiveSteps {
 public:
  explicit SoloSteps(int size) : size_(size) {}
  int rank() const override { return 0; }
  int size() const override { return size_; }
  long long sum(long long value) override { return value * size_; }
  int max(int value) override { return value; }
  void broadcast(void*, std::size_t, int) override {}
  std::vector<long long> gather(const std::vector<long long>& values) override {
    std::vector<long long> all;
    for (int r = 0; r < size_; ++r) all.insert(all.end(), values.begin(), values.end());
    return all;
  }
  double time_trial(bool, const std::function<int()>& run, int& rc, double& own_seconds) override {
    rc = run();
    own_seconds = 0;
    return 0;
  }

 private:
  int size_;
};

}  // namespace collshim
