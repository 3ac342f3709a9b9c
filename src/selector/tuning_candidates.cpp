#include "selector/tuning_candidates.hpp"

#include <algorithm>
#include <map>

#include "algorithms/engine/algorithm_spec.hpp"
#include "algorithms/engine/registry.hpp"

namespace collshim {
namespace {

// The values swept per parameter name (Bruck radix 2/4/8, recursive multiplying k 2/4/8,
// Sparbit coalesce 0/1, grid dims 2/3/hypercube plus node_grid's 1 (direct between nodes, which
// grid rejects), hierarchical intra p2p/shm; Traff's own_block free/charged). Other parameters keep
// their defaults; `inter` takes every algorithm its parameter accepts (below).
const std::map<std::string, std::vector<std::string>, std::less<>>& swept_values() {
  static const std::map<std::string, std::vector<std::string>, std::less<>> values = {
      {"radix", {"2", "4", "8"}}, {"k", {"2", "4", "8"}},
      {"coalesce", {"0", "1"}},   {"dims", {"1", "2", "3", "hypercube"}},
      {"intra", {"p2p", "shm"}},  {"own_block", {"free", "charged"}},
  };
  return values;
}

std::vector<std::string> values_of(const ParamSpec& param, Collective collective) {
  if (param.name == "inter") {
    std::vector<std::string> names;
    for (const Algorithm& algorithm : algorithms()) {
      if (algorithm.supports(collective) && param.accepts(algorithm.name)) names.emplace_back(algorithm.name);
    }
    return names;
  }
  const auto swept = swept_values().find(param.name);
  if (swept == swept_values().end()) return {param.default_value};
  std::vector<std::string> accepted;
  for (const std::string& value : swept->second) {
    if (param.accepts(value)) accepted.push_back(value);
  }
  return accepted.empty() ? std::vector<std::string>{param.default_value} : accepted;
}

}  // namespace

std::vector<std::string> tuning_candidates(Collective collective) {
  std::vector<std::string> specs = {"native"};
  for (const Algorithm& algorithm : algorithms()) {
    if (!algorithm.supports(collective) || algorithm.passes_through || !algorithm.runs_schedules()) continue;
    // Every combination of the swept values, as "name:a=x,b=y".
    std::vector<std::string> combinations = {""};
    for (const ParamSpec& param : algorithm.params) {
      std::vector<std::string> extended;
      for (const std::string& prefix : combinations) {
        for (const std::string& value : values_of(param, collective))
          extended.push_back(prefix + (prefix.empty() ? "" : ",") + param.name + "=" + value);
      }
      combinations = std::move(extended);
    }
    for (const std::string& combination : combinations) {
      const std::string text = std::string(algorithm.name) + (combination.empty() ? "" : ":" + combination);
      const SpecParseResult parsed = parse_algorithm_spec(text, collective);
      if (!parsed.choice) continue;  // a combination the algorithm rejects as a whole
      std::string canonical = parsed.choice->text();
      if (std::find(specs.begin(), specs.end(), canonical) == specs.end()) specs.push_back(std::move(canonical));
    }
  }
  return specs;
}

}  // namespace collshim
