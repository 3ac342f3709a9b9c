#pragma once
// The algorithm registry: every algorithm the shim can run, with its parameters and eligibility.
// Names and parameters are part of the user interface (COLLSHIM_ALLGATHER=bruck:radix=4, rule tables).
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms/collective.hpp"
#include "algorithms/schedule.hpp"

namespace collshim {

// Parameter values stay text after validation; every declared parameter is present (defaults filled in).
using Params = std::map<std::string, std::string, std::less<>>;
int param_int(const Params& params, std::string_view name);

struct ParamSpec {
  std::string name;
  std::string expected;  // what a valid value looks like, for error messages
  std::string default_value;
  std::function<bool(std::string_view)> accepts;
};
ParamSpec integer_param(std::string name, int min_value, int max_value, int default_value);

struct AllgathervCall;
struct AlltoallvCall;
struct AlgorithmChoice;
class CommContext;
using ScheduleGenerator = std::function<Schedule(int p, int rank, const Params& params)>;
// Node-aware schedules also see where ranks run: node_of_rank[r] identifies rank r's node (p entries).
using NodeAwareScheduleGenerator =
    std::function<Schedule(const std::vector<int>& node_of_rank, int rank, const Params& params)>;
// For algorithms that run more than their schedule (a phase in the MPI library, say).
using AllgathervRunner = int (*)(const AllgathervCall& call, const AlgorithmChoice& choice, CommContext& context);
// Gets the whole choice: its parameters, and its id to key per-communicator state on.
using AlltoallvRunner = int (*)(const AlltoallvCall& call, const AlgorithmChoice& choice, CommContext& context);

struct Algorithm {
  std::string_view name;
  std::string_view summary;  // one line, shown by `collshim-config list`
  std::vector<Collective> collectives;
  std::vector<ParamSpec> params;
  // Empty means eligible for every p. An ineligible choice runs `fallback` (with its default
  // parameters) instead; the entry point logs the substitution (COLLSHIM_LOG=debug).
  std::function<bool(int p, const Params& params)> eligible;
  std::string_view eligibility;  // human-readable condition, e.g. "p a power of two"
  std::string_view fallback;
  ScheduleGenerator make_schedule;  // allgather family: one of these two
  NodeAwareScheduleGenerator make_node_aware_schedule;
  AllgathervRunner run_allgatherv = nullptr;  // null: the executor runs the schedule
  AlltoallvRunner run_alltoallv = nullptr;
  bool passes_through = false;  // `native`: hand the call to the MPI library unchanged

  bool supports(Collective collective) const;
  bool has_schedule() const { return make_schedule || make_node_aware_schedule; }
};

const std::vector<Algorithm>& algorithms();
// `choice`'s schedule for `rank` of a communicator whose ranks run on node_of_rank (p entries).
Schedule generate_schedule(const AlgorithmChoice& choice, const std::vector<int>& node_of_rank, int rank);
const Algorithm* find_algorithm(std::string_view name);
// Comma-separated names of the algorithms available for a collective, for error messages.
std::string algorithm_names(Collective collective);

}  // namespace collshim
