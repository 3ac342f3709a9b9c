#include "selector/rule_table.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <set>
#include <sstream>

namespace collshim {

std::string SourceLocation::text() const {
  if (line == 0) return file;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

std::string RuleDiagnostic::text() const { return where.text() + ": " + message; }

std::optional<long long> parse_byte_size(std::string_view text) {
  long long value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end == text.data() || value < 0) return std::nullopt;
  const std::string_view unit = text.substr(static_cast<std::size_t>(end - text.data()));
  long long scale = 0;
  if (unit.empty() || unit == "B") scale = 1;
  if (unit == "KiB") scale = 1LL << 10;
  if (unit == "MiB") scale = 1LL << 20;
  if (unit == "GiB") scale = 1LL << 30;
  if (scale == 0 || value > LLONG_MAX / scale) return std::nullopt;
  return value * scale;
}

namespace {

// Ranges over a domain that starts at `minimum` (1 for counts of processes or nodes, 0 for bytes).
struct RangeKind {
  bool sizes;  // values take B/KiB/MiB/GiB
  long long minimum;
};

Range full_range(const RangeKind& kind) { return {kind.minimum, LLONG_MAX}; }

bool covers(const std::optional<Range>& outer, const std::optional<Range>& inner, const RangeKind& kind) {
  return outer.value_or(full_range(kind)).covers(inner.value_or(full_range(kind)));
}

constexpr RangeKind count_kind{false, 1};
constexpr RangeKind size_kind{true, 0};

class FileParser {
 public:
  FileParser(std::string file, std::vector<RuleDiagnostic>& diagnostics)
      : file_(std::move(file)), diagnostics_(diagnostics) {}

  std::vector<Rule> parse(const std::string& text) {
    YAML::Node root;
    try {
      root = YAML::Load(text);
    } catch (const YAML::ParserException& e) {
      error(e.mark, "malformed YAML: " + e.msg);
      return {};
    }
    if (!root.IsMap()) {
      error(root.Mark(), "expected a map with keys 'version' and 'rules'");
      return {};
    }
    bool have_version = false;
    std::optional<YAML::Node> rules_node;
    for (const auto& [key, key_mark, value] : unique_keys(root, "the file")) {
      if (key == "version") {
        have_version = true;
        if (!value.IsScalar() || value.Scalar() != "1")
          error(value.Mark(), "unsupported version '" + describe(value) + "', expected 1");
      } else if (key == "rules") {
        rules_node.emplace(value);
      } else {
        error(key_mark, "unknown key '" + key + "', expected 'version' or 'rules'");
      }
    }
    if (!have_version) error(root.Mark(), "missing 'version: 1'");
    std::vector<Rule> rules;
    if (!rules_node) {
      error(root.Mark(), "missing 'rules', expected a list of rules");
      return rules;
    }
    if (rules_node->IsNull()) return rules;
    if (!rules_node->IsSequence()) {
      error(rules_node->Mark(), "'rules' must be a list of rules (each starting with '- collective:')");
      return rules;
    }
    for (const YAML::Node& rule_node : *rules_node) {
      if (auto rule = parse_rule(rule_node)) rules.push_back(std::move(*rule));
    }
    return rules;
  }

 private:
  SourceLocation location(const YAML::Mark& mark) const { return {file_, mark.line + 1, mark.column + 1}; }
  void error(const YAML::Mark& mark, std::string message) {
    diagnostics_.push_back({location(mark), std::move(message), true});
  }

  static std::string describe(const YAML::Node& node) {
    if (node.IsScalar()) return node.Scalar();
    if (node.IsSequence()) return "a list";
    if (node.IsMap()) return "a map";
    return "nothing";
  }

  struct Entry {
    std::string key;
    YAML::Mark key_mark;
    YAML::Node value;
  };
  // Map entries in order; reports keys given twice (yaml-cpp would keep both silently).
  std::vector<Entry> unique_keys(const YAML::Node& map, const std::string& where) {
    std::vector<Entry> entries;
    std::set<std::string> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      const std::string key = it->first.IsScalar() ? it->first.Scalar() : std::string("?");
      if (!seen.insert(key).second) {
        error(it->first.Mark(), "key '" + key + "' given twice in " + where);
        continue;
      }
      entries.push_back({key, it->first.Mark(), it->second});
    }
    return entries;
  }

  std::optional<Range> parse_range(const YAML::Node& node, const std::string& name, const RangeKind& kind) {
    const std::string expected = kind.sizes ? "expected a-b, a-, -b or a, with sizes like 512, 512B, 4KiB, 1MiB, 2GiB"
                                            : "expected a-b, a-, -b or a, with non-negative integers";
    if (!node.IsScalar()) {
      error(node.Mark(), "bad range for " + name + ": got " + describe(node) + ", " + expected);
      return std::nullopt;
    }
    const std::string text = node.Scalar();
    const auto dash = text.find('-');
    const std::string low_text = dash == std::string::npos ? text : text.substr(0, dash);
    const std::string high_text = dash == std::string::npos ? text : text.substr(dash + 1);
    auto parse_end = [&](const std::string& end, long long fallback) -> std::optional<long long> {
      if (end.empty()) return dash == std::string::npos ? std::nullopt : std::optional<long long>(fallback);
      if (kind.sizes) return parse_byte_size(end);
      long long value = 0;
      const auto [stop, problem] = std::from_chars(end.data(), end.data() + end.size(), value);
      if (problem != std::errc{} || stop != end.data() + end.size() || value < 0) return std::nullopt;
      return value;
    };
    const auto low = parse_end(low_text, kind.minimum);
    const auto high = parse_end(high_text, LLONG_MAX);
    if (!low || !high || (low_text.empty() && high_text.empty())) {
      error(node.Mark(), "bad range '" + text + "' for " + name + ", " + expected);
      return std::nullopt;
    }
    if (*high < kind.minimum) {
      error(node.Mark(), "impossible range '" + text + "' for " + name + ": values start at " +
                             std::to_string(kind.minimum));
      return std::nullopt;
    }
    if (*low > *high) {
      error(node.Mark(), "impossible range '" + text + "' for " + name + ": the low end is above the high end");
      return std::nullopt;
    }
    return Range{*low, *high};
  }

  std::optional<std::vector<MappingClass>> parse_mapping_condition(const YAML::Node& node) {
    const std::string expected = "expected single_node, sequential, cyclic or irregular (or a list of them)";
    std::vector<YAML::Node> items;
    if (node.IsSequence()) {
      for (const YAML::Node& item : node) items.push_back(item);
    } else {
      items.push_back(node);
    }
    std::vector<MappingClass> classes;
    for (const YAML::Node& item : items) {
      const auto parsed = item.IsScalar() ? parse_mapping(item.Scalar()) : std::nullopt;
      if (!parsed) {
        error(item.Mark(), "unknown mapping '" + describe(item) + "', " + expected);
        return std::nullopt;
      }
      classes.push_back(*parsed);
    }
    if (classes.empty()) {
      error(node.Mark(), "empty mapping list, " + expected);
      return std::nullopt;
    }
    return classes;
  }

  bool parse_when(const YAML::Node& node, RuleConditions& when) {
    if (!node.IsMap()) {
      error(node.Mark(), "'when' must be a map of conditions, got " + describe(node));
      return false;
    }
    const std::size_t before = diagnostics_.size();
    for (const auto& [key, key_mark, value] : unique_keys(node, "'when'")) {
      if (key == "procs") when.procs = parse_range(value, key, count_kind);
      else if (key == "nodes") when.nodes = parse_range(value, key, count_kind);
      else if (key == "ppn") when.ppn = parse_range(value, key, count_kind);
      else if (key == "block_bytes") when.block_bytes = parse_range(value, key, size_kind);
      else if (key == "mapping") when.mapping = parse_mapping_condition(value);
      else if (key == "oversubscribed") {
        const std::string text = value.IsScalar() ? value.Scalar() : "";
        if (text == "true" || text == "yes") when.oversubscribed = true;
        else if (text == "false" || text == "no") when.oversubscribed = false;
        else error(value.Mark(), "bad value '" + describe(value) + "' for oversubscribed, expected true or false");
      } else {
        error(key_mark, "unknown condition '" + key +
                                 "', expected procs, block_bytes, mapping, nodes, ppn or oversubscribed");
      }
    }
    return diagnostics_.size() == before;
  }

  std::optional<AlgorithmChoice> parse_use(const YAML::Node& node, Collective collective) {
    SpecParseResult parsed;
    if (node.IsScalar()) {
      parsed = parse_algorithm_spec(node.Scalar(), collective);
    } else if (node.IsMap()) {
      std::string name;
      std::vector<std::pair<std::string, std::string>> params;
      for (const auto& [key, key_mark, value] : unique_keys(node, "'use'")) {
        if (!value.IsScalar()) {
          error(value.Mark(), "parameter '" + key + "' must be a single value, got " + describe(value));
          return std::nullopt;
        }
        if (key == "algorithm") name = value.Scalar();
        else params.emplace_back(key, value.Scalar());
      }
      if (name.empty()) {
        error(node.Mark(), "'use' map has no 'algorithm', expected e.g. { algorithm: bruck, radix: 4 }");
        return std::nullopt;
      }
      parsed = make_choice(name, params, collective);
    } else {
      error(node.Mark(), "'use' must be an algorithm name or a map with 'algorithm' and parameters");
      return std::nullopt;
    }
    if (!parsed.choice) {
      error(node.Mark(), parsed.error);
      return std::nullopt;
    }
    return parsed.choice;
  }

  std::optional<Rule> parse_rule(const YAML::Node& node) {
    if (!node.IsMap()) {
      error(node.Mark(), "a rule must be a map with 'collective', optional 'when' and 'use', got " + describe(node));
      return std::nullopt;
    }
    const std::size_t before = diagnostics_.size();
    std::optional<Collective> collective;
    // std::optional, not default-constructed nodes: assigning to those aliases yaml-cpp's nodes.
    std::optional<YAML::Node> when_node, use_node;
    for (const auto& [key, key_mark, value] : unique_keys(node, "a rule")) {
      if (key == "collective") {
        if (value.IsScalar()) collective = find_collective(value.Scalar());
        if (!collective)
          error(value.Mark(), "unknown collective '" + describe(value) + "', expected " + collective_names());
      } else if (key == "when") {
        when_node.emplace(value);
      } else if (key == "use") {
        use_node.emplace(value);
      } else {
        error(key_mark, "unknown key '" + key + "' in rule, expected collective, when or use");
      }
    }
    if (!collective && diagnostics_.size() == before)
      error(node.Mark(), "rule has no 'collective', expected " + collective_names());
    if (!use_node) error(node.Mark(), "rule has no 'use', expected an algorithm name or map");
    if (!collective || !use_node) return std::nullopt;
    Rule rule{*collective, {}, {}, location(node.Mark())};
    if (when_node && !parse_when(*when_node, rule.when)) return std::nullopt;
    auto choice = parse_use(*use_node, *collective);
    if (!choice || diagnostics_.size() != before) return std::nullopt;
    rule.use = std::move(*choice);
    return rule;
  }

  std::string file_;
  std::vector<RuleDiagnostic>& diagnostics_;
};

}  // namespace

bool RuleConditions::matches(const CallFacts& facts) const {
  if (procs && !procs->contains(facts.procs)) return false;
  if (block_bytes && !block_bytes->contains(facts.block_bytes)) return false;
  if (nodes && !nodes->contains(facts.nodes)) return false;
  if (ppn && !ppn->contains(facts.ppn)) return false;
  if (oversubscribed && *oversubscribed != facts.oversubscribed) return false;
  if (mapping && std::find(mapping->begin(), mapping->end(), facts.mapping) == mapping->end()) return false;
  return true;
}

namespace {

std::string size_text(long long bytes) {
  for (const auto& [unit, scale] : {std::pair{"GiB", 1LL << 30}, {"MiB", 1LL << 20}, {"KiB", 1LL << 10}}) {
    if (bytes >= scale && bytes % scale == 0) return std::to_string(bytes / scale) + unit;
  }
  return std::to_string(bytes);
}

std::string range_text(const Range& range, const RangeKind& kind) {
  auto end = [&](long long v) { return kind.sizes ? size_text(v) : std::to_string(v); };
  if (range.low == range.high) return end(range.low);
  const std::string low = range.low == kind.minimum ? "" : end(range.low);
  const std::string high = range.high == LLONG_MAX ? "" : end(range.high);
  return low + "-" + high;
}

std::string mapping_list_text(const std::vector<MappingClass>& mapping) {
  if (mapping.size() == 1) return std::string(mapping_name(mapping[0]));
  std::string text = "[";
  for (std::size_t i = 0; i < mapping.size(); ++i) text += (i ? ", " : "") + std::string(mapping_name(mapping[i]));
  return text + "]";
}

}  // namespace

std::string RuleConditions::mismatch(const CallFacts& facts) const {
  auto outside = [](const char* name, long long value, const Range& range, const RangeKind& kind) {
    return std::string(name) + " " + std::to_string(value) + " is outside " + range_text(range, kind);
  };
  if (procs && !procs->contains(facts.procs)) return outside("procs", facts.procs, *procs, count_kind);
  if (block_bytes && !block_bytes->contains(facts.block_bytes))
    return outside("block_bytes", facts.block_bytes, *block_bytes, size_kind);
  if (nodes && !nodes->contains(facts.nodes)) return outside("nodes", facts.nodes, *nodes, count_kind);
  if (ppn && !ppn->contains(facts.ppn)) return outside("ppn", facts.ppn, *ppn, count_kind);
  if (oversubscribed && *oversubscribed != facts.oversubscribed)
    return std::string("oversubscribed is ") + (facts.oversubscribed ? "true" : "false");
  if (mapping && std::find(mapping->begin(), mapping->end(), facts.mapping) == mapping->end())
    return "mapping " + std::string(mapping_name(facts.mapping)) + " is not " + mapping_list_text(*mapping);
  return {};
}

std::string RuleConditions::text() const {
  std::vector<std::string> parts;
  if (procs) parts.push_back("procs: " + range_text(*procs, count_kind));
  if (block_bytes) parts.push_back("block_bytes: " + range_text(*block_bytes, size_kind));
  if (mapping) parts.push_back("mapping: " + mapping_list_text(*mapping));
  if (nodes) parts.push_back("nodes: " + range_text(*nodes, count_kind));
  if (ppn) parts.push_back("ppn: " + range_text(*ppn, count_kind));
  if (oversubscribed) parts.push_back(std::string("oversubscribed: ") + (*oversubscribed ? "true" : "false"));
  std::string text = "{";
  for (std::size_t i = 0; i < parts.size(); ++i) text += (i ? ", " : " ") + parts[i];
  return text + (parts.empty() ? "}" : " }");
}

bool RuleConditions::covers(const RuleConditions& other) const {
  if (!collshim::covers(procs, other.procs, count_kind) || !collshim::covers(nodes, other.nodes, count_kind) ||
      !collshim::covers(ppn, other.ppn, count_kind) || !collshim::covers(block_bytes, other.block_bytes, size_kind))
    return false;
  if (oversubscribed && (!other.oversubscribed || *other.oversubscribed != *oversubscribed)) return false;
  if (mapping) {
    if (!other.mapping) return mapping->size() == 4;
    for (MappingClass m : *other.mapping) {
      if (std::find(mapping->begin(), mapping->end(), m) == mapping->end()) return false;
    }
  }
  return true;
}

void RuleTable::add_file_text(const std::string& text, const std::string& file,
                              std::vector<RuleDiagnostic>& diagnostics) {
  std::vector<Rule> rules = FileParser(file, diagnostics).parse(text);
  rules_.insert(rules_.begin(), std::make_move_iterator(rules.begin()), std::make_move_iterator(rules.end()));
}

void RuleTable::add_file(const std::string& path, std::vector<RuleDiagnostic>& diagnostics) {
  std::ifstream in(path);
  if (!in) {
    diagnostics.push_back({{path, 1, 1}, "cannot read the rule file", true});
    return;
  }
  std::ostringstream text;
  text << in.rdbuf();
  add_file_text(text.str(), path, diagnostics);
}

void RuleTable::check_shadowed(std::vector<RuleDiagnostic>& diagnostics) const {
  for (std::size_t j = 0; j < rules_.size(); ++j) {
    for (std::size_t i = 0; i < j; ++i) {
      if (rules_[i].collective == rules_[j].collective && rules_[i].when.covers(rules_[j].when)) {
        diagnostics.push_back({rules_[j].where,
                               "rule can never match: every call it matches is taken first by the rule at " +
                                   rules_[i].where.text(),
                               false});
        break;
      }
    }
  }
}

const Rule* RuleTable::match(const CallFacts& facts) const {
  for (const Rule& rule : rules_) {
    if (rule.collective == facts.collective && rule.when.matches(facts)) return &rule;
  }
  return nullptr;
}

bool RuleTable::tests_block_bytes(Collective collective) const {
  return std::any_of(rules_.begin(), rules_.end(),
                     [&](const Rule& r) { return r.collective == collective && r.when.block_bytes; });
}

}  // namespace collshim
