#include "selector/rule_table.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <fstream>
#include <sstream>
#include <tuple>
#include <type_traits>

namespace collshim {

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

// Problems of a rule file go to its document (selector/yaml_document.hpp), every one of them.
using Problems = YamlDocument;

std::string size_text(long long bytes) {
  for (const auto& [unit, scale] : {std::pair{"GiB", 1LL << 30}, {"MiB", 1LL << 20}, {"KiB", 1LL << 10}}) {
    if (bytes >= scale && bytes % scale == 0) return std::to_string(bytes / scale) + unit;
  }
  return std::to_string(bytes);
}

// The kinds of condition. Each says how its value is parsed (reporting problems), tested against the
// call's fact, explained when it fails, written back in rule-file syntax, and compared with another
// rule's (covers: every fact the inner value accepts, the outer one accepts too).

// Inclusive ranges ("a-b", "a-", "-b", "a") over a domain that starts at `minimum`.
struct RangeCondition {
  bool sizes;         // values take B/KiB/MiB/GiB
  long long minimum;  // 1 for counts of processes or nodes, 0 for bytes

  std::optional<Range> parse(const YAML::Node& node, std::string_view key, Problems& problems) const {
    const std::string name(key);
    const std::string expected = sizes ? "expected a-b, a-, -b or a, with sizes like 512, 512B, 4KiB, 1MiB, 2GiB"
                                       : "expected a-b, a-, -b or a, with non-negative integers";
    if (!node.IsScalar()) {
      problems.error(node.Mark(), "bad range for " + name + ": got " + describe_node(node) + ", " + expected);
      return std::nullopt;
    }
    const std::string text = node.Scalar();
    const auto dash = text.find('-');
    const std::string low_text = dash == std::string::npos ? text : text.substr(0, dash);
    const std::string high_text = dash == std::string::npos ? text : text.substr(dash + 1);
    auto parse_end = [&](const std::string& end, long long fallback) -> std::optional<long long> {
      if (end.empty()) return dash == std::string::npos ? std::nullopt : std::optional<long long>(fallback);
      if (sizes) return parse_byte_size(end);
      long long value = 0;
      const auto [stop, problem] = std::from_chars(end.data(), end.data() + end.size(), value);
      if (problem != std::errc{} || stop != end.data() + end.size() || value < 0) return std::nullopt;
      return value;
    };
    const auto low = parse_end(low_text, minimum);
    const auto high = parse_end(high_text, LLONG_MAX);
    if (!low || !high || (low_text.empty() && high_text.empty())) {
      problems.error(node.Mark(), "bad range '" + text + "' for " + name + ", " + expected);
      return std::nullopt;
    }
    if (*high < minimum) {
      problems.error(node.Mark(),
                     "impossible range '" + text + "' for " + name + ": values start at " + std::to_string(minimum));
      return std::nullopt;
    }
    if (*low > *high) {
      problems.error(node.Mark(),
                     "impossible range '" + text + "' for " + name + ": the low end is above the high end");
      return std::nullopt;
    }
    return Range{*low, *high};
  }
  bool matches(const Range& range, long long fact) const { return range.contains(fact); }
  std::string mismatch(std::string_view key, const Range& range, long long fact) const {
    return std::string(key) + " " + std::to_string(fact) + " is outside " + text(range);
  }
  std::string text(const Range& range) const {
    auto end = [&](long long v) { return sizes ? size_text(v) : std::to_string(v); };
    if (range.low == range.high) return end(range.low);
    const std::string low = range.low == minimum ? "" : end(range.low);
    const std::string high = range.high == LLONG_MAX ? "" : end(range.high);
    return low + "-" + high;
  }
  bool covers(const Range& outer, const Range& inner) const { return outer.covers(inner); }
  bool covers_everything(const Range& range) const { return range.covers({minimum, LLONG_MAX}); }
};

// A mapping class or a list of them, matching any of them.
struct MappingCondition {
  static constexpr std::array every_class{MappingClass::single_node, MappingClass::sequential, MappingClass::cyclic,
                                          MappingClass::irregular};

  std::optional<std::vector<MappingClass>> parse(const YAML::Node& node, std::string_view, Problems& problems) const {
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
        problems.error(item.Mark(), "unknown mapping '" + describe_node(item) + "', " + expected);
        return std::nullopt;
      }
      classes.push_back(*parsed);
    }
    if (classes.empty()) {
      problems.error(node.Mark(), "empty mapping list, " + expected);
      return std::nullopt;
    }
    return classes;
  }
  bool matches(const std::vector<MappingClass>& any_of, MappingClass fact) const {
    return std::find(any_of.begin(), any_of.end(), fact) != any_of.end();
  }
  std::string mismatch(std::string_view key, const std::vector<MappingClass>& any_of, MappingClass fact) const {
    return std::string(key) + " " + std::string(mapping_name(fact)) + " is not " + text(any_of);
  }
  std::string text(const std::vector<MappingClass>& any_of) const {
    if (any_of.size() == 1) return std::string(mapping_name(any_of[0]));
    std::string text = "[";
    for (std::size_t i = 0; i < any_of.size(); ++i) text += (i ? ", " : "") + std::string(mapping_name(any_of[i]));
    return text + "]";
  }
  bool covers(const std::vector<MappingClass>& outer, const std::vector<MappingClass>& inner) const {
    return std::all_of(inner.begin(), inner.end(), [&](MappingClass m) { return matches(outer, m); });
  }
  bool covers_everything(const std::vector<MappingClass>& any_of) const {
    return covers(any_of, {every_class.begin(), every_class.end()});
  }
};

// true or false, as every collshim YAML file writes them (parse_yaml_bool).
struct FlagCondition {
  std::optional<bool> parse(const YAML::Node& node, std::string_view key, Problems& problems) const {
    return problems.boolean(node, std::string(key));
  }
  bool matches(bool value, bool fact) const { return value == fact; }
  std::string mismatch(std::string_view key, bool, bool fact) const { return std::string(key) + " is " + text(fact); }
  std::string text(bool value) const { return value ? "true" : "false"; }
  bool covers(bool outer, bool inner) const { return outer == inner; }
  bool covers_everything(bool) const { return false; }
};

// The MPI library the job runs on: a name with an optional version range ("ompi", "ompi 4.1-5.0"), or
// a list of them, matching any of them.
struct LibraryCondition {
  std::optional<std::vector<LibraryRange>> parse(const YAML::Node& node, std::string_view, Problems& problems) const {
    std::vector<YAML::Node> items;
    if (node.IsSequence()) {
      for (const YAML::Node& item : node) items.push_back(item);
    } else {
      items.push_back(node);
    }
    std::vector<LibraryRange> any_of;
    for (const YAML::Node& item : items) {
      std::string error = "bad library " + describe_node(item) +
                          ", expected a name with an optional version range, e.g. "
                          "\"ompi 4.1-5.0\" (or a list of them)";
      const auto range = item.IsScalar() ? parse_library_range(item.Scalar(), error) : std::nullopt;
      if (!range) {
        problems.error(item.Mark(), error);
        return std::nullopt;
      }
      any_of.push_back(*range);
    }
    if (any_of.empty()) {
      problems.error(node.Mark(), "empty library list, expected " + library_names_text() + " (or a list of them)");
      return std::nullopt;
    }
    return any_of;
  }
  bool matches(const std::vector<LibraryRange>& any_of, const MpiLibrary& fact) const {
    return std::any_of(any_of.begin(), any_of.end(), [&](const LibraryRange& range) { return range.contains(fact); });
  }
  std::string mismatch(std::string_view key, const std::vector<LibraryRange>& any_of, const MpiLibrary& fact) const {
    return std::string(key) + " " + fact.text() + " is not " + text(any_of);
  }
  std::string text(const std::vector<LibraryRange>& any_of) const {
    // Quoted where a version follows the name, as a rule file writes it.
    auto item = [](const LibraryRange& range) { return range.versioned() ? "\"" + range.text() + "\"" : range.text(); };
    if (any_of.size() == 1) return item(any_of[0]);
    std::string text = "[";
    for (std::size_t i = 0; i < any_of.size(); ++i) text += (i ? ", " : "") + item(any_of[i]);
    return text + "]";
  }
  // Each of inner's alternatives inside one of outer's: enough for the shadowing check, which must
  // never warn wrongly (several outer alternatives that cover an inner one only together go unseen).
  bool covers(const std::vector<LibraryRange>& outer, const std::vector<LibraryRange>& inner) const {
    return std::all_of(inner.begin(), inner.end(), [&](const LibraryRange& in) {
      return std::any_of(outer.begin(), outer.end(), [&](const LibraryRange& out) { return out.covers(in); });
    });
  }
  bool covers_everything(const std::vector<LibraryRange>&) const { return false; }  // unidentified libraries
};

// One condition a rule can test: its YAML key, where a rule keeps its value, the fact it tests (of
// the call, CallFacts, or of the job, JobFacts), and its kind. Absent from a rule, a condition matches
// every call.
template <typename Kind, typename Value, typename Facts, typename Fact>
struct Condition {
  using FactsType = Facts;
  std::string_view key;
  std::optional<Value> RuleConditions::*value;
  Fact Facts::*fact;
  Kind kind;

  void parse(const YAML::Node& node, RuleConditions& when, Problems& problems) const {
    when.*value = kind.parse(node, key, problems);
  }
  bool matches(const RuleConditions& when, const Facts& facts) const {
    return !(when.*value) || kind.matches(*(when.*value), facts.*fact);
  }
  std::string mismatch(const RuleConditions& when, const Facts& facts) const {
    return matches(when, facts) ? std::string() : kind.mismatch(key, *(when.*value), facts.*fact);
  }
  void append_text(const RuleConditions& when, std::vector<std::string>& parts) const {
    if (when.*value) parts.push_back(std::string(key) + ": " + kind.text(*(when.*value)));
  }
  bool covers(const RuleConditions& outer, const RuleConditions& inner) const {
    const std::optional<Value>& o = outer.*value;
    const std::optional<Value>& i = inner.*value;
    if (!o) return true;
    return i ? kind.covers(*o, *i) : kind.covers_everything(*o);
  }
};

constexpr RangeCondition count_ranges{false, 1};  // processes, nodes
constexpr RangeCondition size_ranges{true, 0};    // bytes

// Every condition, in the order messages and RuleConditions::text() list them. A new condition is its
// fact in CallFacts (or JobFacts, for what is fixed for the process), its value in RuleConditions and
// one line here.
// `library` first: it is what a rule was measured against, and the first reason explain gives.
constexpr std::tuple conditions{
    Condition{"library", &RuleConditions::library, &JobFacts::library, LibraryCondition{}},
    Condition{"procs", &RuleConditions::procs, &CallFacts::procs, count_ranges},
    Condition{"block_bytes", &RuleConditions::block_bytes, &CallFacts::block_bytes, size_ranges},
    Condition{"mapping", &RuleConditions::mapping, &CallFacts::mapping, MappingCondition{}},
    Condition{"nodes", &RuleConditions::nodes, &CallFacts::nodes, count_ranges},
    Condition{"ppn", &RuleConditions::ppn, &CallFacts::ppn, count_ranges},
    Condition{"oversubscribed", &RuleConditions::oversubscribed, &CallFacts::oversubscribed, FlagCondition{}},
};

// Calls `visit` with each condition, in order; stops at the first for which it returns false.
template <typename Visit>
bool all_conditions(Visit visit) {
  return std::apply([&](const auto&... condition) { return (visit(condition) && ...); }, conditions);
}

std::string condition_keys() {
  std::vector<std::string_view> keys;
  all_conditions([&](const auto& condition) {
    keys.push_back(condition.key);
    return true;
  });
  return alternatives_text(keys);
}

class FileParser {
 public:
  FileParser(std::string file, std::vector<RuleDiagnostic>& diagnostics) : problems_(std::move(file), diagnostics) {}

  std::vector<Rule> parse(const std::string& text) {
    const std::optional<YAML::Node> loaded = problems_.load(text);
    if (!loaded) return {};
    const YAML::Node& root = *loaded;
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
          error(value.Mark(), "unsupported version '" + describe_node(value) + "', expected 1");
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
  void error(const YAML::Mark& mark, std::string message) { problems_.error(mark, std::move(message)); }

  // Map entries in order; keys given twice are reported (yaml-cpp would keep both silently).
  std::vector<YamlDocument::Entry> unique_keys(const YAML::Node& map, const std::string& where) {
    return problems_.entries(map, where);
  }

  bool parse_when(const YAML::Node& node, RuleConditions& when) {
    if (!node.IsMap()) {
      error(node.Mark(), "'when' must be a map of conditions, got " + describe_node(node));
      return false;
    }
    const std::size_t before = problems_.errors();
    for (const auto& [key, key_mark, value] : unique_keys(node, "'when'")) {
      const bool unknown = all_conditions([&](const auto& condition) {
        if (condition.key != key) return true;
        condition.parse(value, when, problems_);
        return false;
      });
      if (unknown) error(key_mark, "unknown condition '" + key + "', expected " + condition_keys());
    }
    return problems_.errors() == before;
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
          error(value.Mark(), "parameter '" + key + "' must be a single value, got " + describe_node(value));
          return std::nullopt;
        }
        if (key == "algorithm")
          name = value.Scalar();
        else
          params.emplace_back(key, value.Scalar());
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
      error(node.Mark(),
            "a rule must be a map with 'collective', optional 'when' and 'use', got " + describe_node(node));
      return std::nullopt;
    }
    const std::size_t before = problems_.errors();
    std::optional<Collective> collective;
    // std::optional, not default-constructed nodes: assigning to those aliases yaml-cpp's nodes.
    std::optional<YAML::Node> when_node, use_node;
    std::optional<std::pair<YAML::Mark, bool>> reorder;
    for (const auto& [key, key_mark, value] : unique_keys(node, "a rule")) {
      if (key == "collective") {
        if (value.IsScalar()) collective = find_collective(value.Scalar());
        if (!collective)
          error(value.Mark(), "unknown collective '" + describe_node(value) + "', expected " + collective_names());
      } else if (key == "when") {
        when_node.emplace(value);
      } else if (key == "use") {
        use_node.emplace(value);
      } else if (key == "reorder") {
        if (const std::optional<bool> allowed = problems_.boolean(value, "reorder"))
          reorder.emplace(key_mark, *allowed);
      } else {
        error(key_mark, "unknown key '" + key + "' in rule, expected collective, when, use or reorder");
      }
    }
    if (reorder && collective && *collective != Collective::allreduce)
      error(reorder->first,
            "'reorder' applies to allreduce rules only (it allows a floating-point reduction to "
            "combine in another order)");
    if (!collective && problems_.errors() == before)
      error(node.Mark(), "rule has no 'collective', expected " + collective_names());
    if (!use_node) error(node.Mark(), "rule has no 'use', expected an algorithm name or map");
    if (!collective || !use_node) return std::nullopt;
    Rule rule{*collective, {}, {}, problems_.location(node.Mark())};
    if (when_node && !parse_when(*when_node, rule.when)) return std::nullopt;
    auto choice = parse_use(*use_node, *collective);
    if (!choice || problems_.errors() != before) return std::nullopt;
    rule.use = std::move(*choice);
    rule.reorder = reorder && reorder->second;
    return rule;
  }

  Problems problems_;
};

}  // namespace

// True when the condition of type C tests a fact of `Facts` (CallFacts or JobFacts).
template <typename C, typename Facts>
constexpr bool tests = std::is_same_v<typename std::decay_t<C>::FactsType, Facts>;

bool RuleConditions::matches(const CallFacts& facts) const {
  return all_conditions([&](const auto& condition) {
    if constexpr (tests<decltype(condition), CallFacts>) return condition.matches(*this, facts);
    return true;
  });
}

bool RuleConditions::matches(const JobFacts& job) const {
  return all_conditions([&](const auto& condition) {
    if constexpr (tests<decltype(condition), JobFacts>) return condition.matches(*this, job);
    return true;
  });
}

std::string RuleConditions::mismatch(const CallFacts& facts, const JobFacts& job) const {
  std::string why_not;
  all_conditions([&](const auto& condition) {
    if constexpr (tests<decltype(condition), JobFacts>)
      why_not = condition.mismatch(*this, job);
    else
      why_not = condition.mismatch(*this, facts);
    return why_not.empty();
  });
  return why_not;
}

std::string rule_yaml(Collective collective, const RuleConditions& when, std::string_view use,
                      const std::vector<std::string>& evidence) {
  std::string text;
  for (const std::string& line : evidence) text += "  # " + line + "\n";
  return text + "  - collective: " + std::string(collective_name(collective)) + "\n    when: " + when.text() +
         "\n    use: \"" + std::string(use) + "\"\n";
}

std::string RuleConditions::text() const {
  std::vector<std::string> parts;
  all_conditions([&](const auto& condition) {
    condition.append_text(*this, parts);
    return true;
  });
  std::string text = "{";
  for (std::size_t i = 0; i < parts.size(); ++i) text += (i ? ", " : " ") + parts[i];
  return text + (parts.empty() ? "}" : " }");
}

bool RuleConditions::covers(const RuleConditions& other) const {
  return all_conditions([&](const auto& condition) { return condition.covers(*this, other); });
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
        diagnostics.push_back(
            {rules_[j].where,
             "rule can never match: every call it matches is taken first by the rule at " + rules_[i].where.text(),
             false});
        break;
      }
    }
  }
}

bool RuleTable::tests_block_bytes(Collective collective) const {
  return std::any_of(rules_.begin(), rules_.end(),
                     [&](const Rule& r) { return r.collective == collective && r.when.block_bytes; });
}

}  // namespace collshim
