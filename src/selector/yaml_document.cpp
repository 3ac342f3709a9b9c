#include "selector/yaml_document.hpp"

#include <charconv>
#include <climits>
#include <cmath>
#include <set>

namespace collshim {

std::string SourceLocation::text() const {
  if (line == 0) return file;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

std::string Diagnostic::text() const { return where.text() + ": " + message; }

namespace {

std::string problems_text(const std::vector<Diagnostic>& problems) {
  std::string text;
  for (const Diagnostic& problem : problems) text += (text.empty() ? "" : "\n") + problem.text();
  return text;
}

}  // namespace

YamlFileError::YamlFileError(std::vector<Diagnostic> problems)
    : std::runtime_error(problems_text(problems)), problems_(std::move(problems)) {}

std::optional<bool> parse_yaml_bool(std::string_view text) {
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  return std::nullopt;
}

std::string describe_node(const YAML::Node& node) {
  if (node.IsScalar()) return node.Scalar();
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a map";
  return "nothing";
}

YamlDocument::YamlDocument(std::string file, std::vector<Diagnostic>& diagnostics)
    : file_(std::move(file)), diagnostics_(diagnostics), first_(diagnostics.size()) {}

std::optional<YAML::Node> YamlDocument::load(const std::string& text) {
  try {
    return YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    error(e.mark, "malformed YAML: " + e.msg);
    return std::nullopt;
  }
}

SourceLocation YamlDocument::location(const YAML::Mark& mark) const { return {file_, mark.line + 1, mark.column + 1}; }

void YamlDocument::error(const YAML::Mark& mark, std::string message) {
  diagnostics_.push_back({location(mark), std::move(message), true});
  ++errors_;
}

std::vector<Diagnostic> YamlDocument::own_problems() const {
  return {diagnostics_.begin() + static_cast<std::ptrdiff_t>(first_), diagnostics_.end()};
}

std::vector<YamlDocument::Entry> YamlDocument::entries(const YAML::Node& map, const std::string& where) {
  std::vector<Entry> result;
  if (!map.IsMap()) {
    error(map.Mark(), where + " must be a map");
    return result;
  }
  std::set<std::string> seen;
  for (auto it = map.begin(); it != map.end(); ++it) {
    const std::string key = it->first.IsScalar() ? it->first.Scalar() : std::string("?");
    if (!seen.insert(key).second) {
      error(it->first.Mark(), "key '" + key + "' given twice in " + where);
      continue;
    }
    result.push_back({key, it->first.Mark(), it->second});
  }
  return result;
}

void YamlDocument::for_each_key(const YAML::Node& map, const std::string& where,
                                const std::map<std::string, Handler>& handlers) {
  for (const auto& [key, key_mark, value] : entries(map, where)) {
    const auto handler = handlers.find(key);
    if (handler == handlers.end()) {
      std::string expected;
      for (const auto& [name, unused] : handlers) expected += (expected.empty() ? "'" : ", '") + name + "'";
      error(key_mark, "unknown key '" + key + "' in " + where + ", expected one of " + expected);
      continue;
    }
    handler->second(value);
  }
}

std::optional<std::string> YamlDocument::scalar(const YAML::Node& node, const std::string& what) {
  if (node.IsScalar()) return node.Scalar();
  error(node.Mark(), "'" + what + "' must be a single value, got " + describe_node(node));
  return std::nullopt;
}

std::optional<std::string> YamlDocument::text(const YAML::Node& node, const std::string& what) {
  if (node.IsScalar() && !node.Scalar().empty()) return node.Scalar();
  error(node.Mark(), "'" + what + "' must be a non-empty text");
  return std::nullopt;
}

std::optional<bool> YamlDocument::boolean(const YAML::Node& node, const std::string& what) {
  const std::optional<bool> value = node.IsScalar() ? parse_yaml_bool(node.Scalar()) : std::nullopt;
  if (!value) error(node.Mark(), "bad value '" + describe_node(node) + "' for '" + what + "', expected true or false");
  return value;
}

std::optional<double> YamlDocument::number(const YAML::Node& node, const std::string& what) {
  const std::string text = describe_node(node);
  double value = 0;
  std::size_t used = 0;
  try {
    if (node.IsScalar()) value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (!node.IsScalar() || used != text.size() || !std::isfinite(value) || value < 0) {
    error(node.Mark(), "bad value '" + text + "' for '" + what + "', expected a number, 0 or more");
    return std::nullopt;
  }
  return value;
}

std::optional<long long> YamlDocument::integer(const YAML::Node& node, const std::string& what, long long minimum,
                                               long long maximum) {
  const std::string text = describe_node(node);
  long long value = 0;
  const auto [end, problem] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (!node.IsScalar() || text.empty() || problem != std::errc{} || end != text.data() + text.size() ||
      value < minimum || value > maximum) {
    const std::string expected =
        maximum == LLONG_MAX ? "a whole number, " + std::to_string(minimum) + " or more"
                             : "a whole number from " + std::to_string(minimum) + " to " + std::to_string(maximum);
    error(node.Mark(), "bad value '" + text + "' for '" + what + "', expected " + expected);
    return std::nullopt;
  }
  return value;
}

}  // namespace collshim
