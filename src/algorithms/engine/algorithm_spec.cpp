#include "algorithms/engine/algorithm_spec.hpp"

#include <algorithm>
#include <charconv>

namespace collshim {
namespace {

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t");
  return text.substr(first, last - first + 1);
}

std::string param_names(const Algorithm& algorithm) {
  if (algorithm.params.empty()) return "none";
  std::string names;
  for (const ParamSpec& spec : algorithm.params) {
    if (!names.empty()) names += ", ";
    names += spec.name;
  }
  return names;
}

}  // namespace

std::string AlgorithmChoice::text() const {
  std::string out(algorithm->name);
  char separator = ':';
  for (const ParamSpec& spec : algorithm->params) {
    const std::string& value = params.at(spec.name);
    if (value == spec.default_value) continue;
    out += separator;
    out += spec.name + "=" + value;
    separator = ',';
  }
  return out;
}

SpecParseResult make_choice(std::string_view name, const std::vector<std::pair<std::string, std::string>>& params,
                            Collective collective) {
  const Algorithm* algorithm = find_algorithm(name, collective);
  if (algorithm == nullptr || !algorithm->supports(collective)) {
    return {std::nullopt, "unknown algorithm '" + std::string(name) + "' for " +
                              std::string(collective_name(collective)) +
                              "; expected one of: " + algorithm_names(collective)};
  }
  AlgorithmChoice choice{algorithm, {}, -1};
  for (const auto& [key, value] : params) {
    const auto spec = std::find_if(algorithm->params.begin(), algorithm->params.end(),
                                   [&](const ParamSpec& s) { return s.name == key; });
    if (spec == algorithm->params.end()) {
      return {std::nullopt,
              "unknown parameter '" + key + "' for " + std::string(name) + "; expected: " + param_names(*algorithm)};
    }
    if (choice.params.contains(key)) {
      return {std::nullopt, "parameter '" + key + "' given twice"};
    }
    if (!spec->accepts(value)) {
      return {std::nullopt, "bad value '" + value + "' for " + std::string(name) + " parameter '" + key +
                                "'; expected " + spec->expected};
    }
    choice.params.emplace(key, value);
  }
  for (const ParamSpec& spec : algorithm->params) choice.params.try_emplace(spec.name, spec.default_value);
  return {std::move(choice), {}};
}

SpecParseResult parse_algorithm_spec(std::string_view text, Collective collective) {
  text = trim(text);
  const auto colon = text.find(':');
  const std::string_view name = trim(text.substr(0, colon));
  if (name.empty()) return {std::nullopt, "empty algorithm name; expected one of: " + algorithm_names(collective)};
  std::vector<std::pair<std::string, std::string>> params;
  if (colon != std::string_view::npos) {
    std::string_view rest = text.substr(colon + 1);
    while (true) {
      const auto comma = rest.find(',');
      const std::string_view item = trim(rest.substr(0, comma));
      const auto equals = item.find('=');
      if (equals == std::string_view::npos || trim(item.substr(0, equals)).empty()) {
        return {std::nullopt, "malformed parameter '" + std::string(item) + "'; expected key=value"};
      }
      params.emplace_back(std::string(trim(item.substr(0, equals))), std::string(trim(item.substr(equals + 1))));
      if (comma == std::string_view::npos) break;
      rest = rest.substr(comma + 1);
    }
  }
  return make_choice(name, params, collective);
}

ParamSpec integer_param(std::string name, int min_value, int max_value, int default_value) {
  return ParamSpec{std::move(name), "an integer from " + std::to_string(min_value) + " to " + std::to_string(max_value),
                   std::to_string(default_value), [min_value, max_value](std::string_view value) {
                     int parsed = 0;
                     const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
                     return error == std::errc{} && end == value.data() + value.size() && parsed >= min_value &&
                            parsed <= max_value;
                   }};
}

int param_int(const Params& params, std::string_view name) {
  const std::string& value = params.find(name)->second;
  int parsed = 0;
  std::from_chars(value.data(), value.data() + value.size(), parsed);
  return parsed;
}

}  // namespace collshim
