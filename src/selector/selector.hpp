#pragma once
// Decides which algorithm runs a call. Today: a forcing variable, else `native`; the rule table of
// DESIGN.md plugs in here. Every input of a decision is known identically on all ranks of the call.
#include <array>
#include <deque>
#include <string>
#include <vector>

#include "algorithms/algorithm_spec.hpp"
#include "selector/environment.hpp"

namespace collshim {

struct Decision {
  const AlgorithmChoice* choice;     // what runs
  const AlgorithmChoice* requested;  // what the configuration asked for; differs after a fallback
  const char* reason;                // why `requested` was chosen, for the debug log
};

class Selector {
 public:
  // Validates the forcing variables; problems are appended to `errors`, each naming its variable.
  Selector(const EnvironmentSettings& settings, std::vector<std::string>& errors);

  Decision decide(Collective collective, int comm_size) const;

  // All choices the selector can return, indexed by AlgorithmChoice::id.
  const std::deque<AlgorithmChoice>& choices() const { return choices_; }

 private:
  const AlgorithmChoice* intern(AlgorithmChoice choice);

  std::deque<AlgorithmChoice> choices_;  // deque: pointers stay valid as it grows
  std::vector<const AlgorithmChoice*> fallback_;  // by choice id; null when the algorithm has none
  std::array<const AlgorithmChoice*, collective_count> forced_{};
  std::array<std::string, collective_count> forced_reason_;  // "forced by COLLSHIM_ALLGATHER"
  const AlgorithmChoice* native_ = nullptr;
};

}  // namespace collshim
