#pragma once
// Parsing of algorithm specifications: "ring", "bruck:radix=4", "grid:dims=2". The same syntax is used
// by the forcing variables and, as maps, by rule tables.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "algorithms/engine/registry.hpp"

namespace collshim {

struct AlgorithmChoice {
  const Algorithm* algorithm = nullptr;
  Params params;
  int id = -1;  // index in the selector's choice table; caches are keyed on it

  std::string text() const;  // canonical form: name, then non-default parameters
};

struct SpecParseResult {
  std::optional<AlgorithmChoice> choice;
  std::string error;  // set when choice is empty
};

// Validates a name and its parameters for a collective. Errors name what was wrong and what was
// expected; the caller adds where the text came from.
SpecParseResult make_choice(std::string_view name, const std::vector<std::pair<std::string, std::string>>& params,
                            Collective collective);
SpecParseResult parse_algorithm_spec(std::string_view text, Collective collective);

}  // namespace collshim
