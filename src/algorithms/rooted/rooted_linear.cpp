// Linear Gatherv and Scatterv: the root posts all p-1 receives (sends) at once, one step. p-1
// start-ups at the root, no forwarding: what MPI libraries run for Gatherv, and the right choice
// for large blocks. Blocks stay in the users' types (no packing).
#include <map>
#include <utility>

#include "algorithms/engine/call_layout.hpp"
#include "algorithms/engine/comm_context.hpp"
#include "algorithms/rooted/rooted_algorithms.hpp"

namespace collshim {

Schedule linear_gatherv_schedule(int p, int rank, int root) {
  Step step;
  if (rank == root) {
    step.copies.push_back({{Buffer::send, {rank}}, {Buffer::recv, {rank}}});
    for (int k = 1; k < p; ++k) {
      const int source = (root + k) % p;
      step.recvs.push_back({source, {Buffer::recv, {source}}});
    }
  } else {
    step.sends.push_back({root, {Buffer::send, {rank}}});
  }
  Schedule schedule;
  schedule.steps.push_back(std::move(step));
  return schedule;
}

Schedule linear_scatterv_schedule(int p, int rank, int root) {
  Step step;
  if (rank == root) {
    step.copies.push_back({{Buffer::send, {rank}}, {Buffer::recv, {rank}}});
    for (int k = 1; k < p; ++k) {
      const int destination = (root + k) % p;
      step.sends.push_back({destination, {Buffer::send, {destination}}});
    }
  } else {
    step.recvs.push_back({root, {Buffer::recv, {rank}}});
  }
  Schedule schedule;
  schedule.steps.push_back(std::move(step));
  return schedule;
}

namespace {

// A schedule per (collective, root), made on the root's first call: linear schedules depend on
// nothing else.
class LinearRootedState final : public AlgorithmState {
 public:
  const Schedule& schedule_for(const CallLayout& call) override {
    const std::pair key{call.naming, call.root};
    auto found = schedules_.find(key);
    if (found == schedules_.end()) {
      Schedule schedule = call.naming == BlockNaming::gather ? linear_gatherv_schedule(call.p, call.rank, call.root)
                                                             : linear_scatterv_schedule(call.p, call.rank, call.root);
      found = schedules_.emplace(key, std::move(schedule)).first;
    }
    return found->second;
  }

 private:
  std::map<std::pair<BlockNaming, int>, Schedule> schedules_;
};

}  // namespace

int make_linear_rooted_state(const AlgorithmChoice&, CommContext&, std::unique_ptr<AlgorithmState>& state) {
  state = std::make_unique<LinearRootedState>();
  return MPI_SUCCESS;
}

}  // namespace collshim
