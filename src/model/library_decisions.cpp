#include "model/library_decisions.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <climits>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "algorithms/engine/algorithm_spec.hpp"
#include "model/library_tables.hpp"
#include "selector/yaml_document.hpp"

namespace collshim::model {

namespace {

// The facts a rule may test, declared once: the parser, the evaluator and the messages follow this.
enum class Fact {
  p,
  p_power_of_two,
  p_even,
  bytes,
  total_bytes,
  max_bytes,
  elements,
  total_elements,
  elements_multiple_of_p,
  ranks_per_node,
  nodes,
  balanced,
  blocked,
  commutative,
  builtin_op,
  in_place,
};
struct FactInfo {
  Fact fact;
  std::string_view key;
  bool boolean;
};
constexpr std::array<FactInfo, 16> fact_infos{{
    {Fact::p, "p", false},
    {Fact::p_power_of_two, "p_power_of_two", true},
    {Fact::p_even, "p_even", true},
    {Fact::bytes, "bytes", false},
    {Fact::total_bytes, "total_bytes", false},
    {Fact::max_bytes, "max_bytes", false},
    {Fact::elements, "elements", false},
    {Fact::total_elements, "total_elements", false},
    {Fact::elements_multiple_of_p, "elements_multiple_of_p", true},
    {Fact::ranks_per_node, "ranks_per_node", false},
    {Fact::nodes, "nodes", false},
    {Fact::balanced, "balanced", true},
    {Fact::blocked, "blocked", true},
    {Fact::commutative, "commutative", true},
    {Fact::builtin_op, "builtin_op", true},
    {Fact::in_place, "in_place", true},
}};

const FactInfo* find_fact(std::string_view key) {
  const auto found = std::ranges::find(fact_infos, key, &FactInfo::key);
  return found != fact_infos.end() ? &*found : nullptr;
}

// One call's facts, derived once.
struct FactValues {
  long long p, pof2, bytes, total_bytes, max_bytes, elements, total_elements, ranks_per_node, nodes;
  bool p_power_of_two, p_even, elements_multiple_of_p, balanced, blocked, commutative, builtin_op, in_place;

  explicit FactValues(const LibraryFacts& facts) {
    p = std::max(1, facts.p);
    pof2 = static_cast<long long>(std::bit_floor(static_cast<unsigned long long>(p)));
    bytes = facts.bytes;
    total_bytes = facts.total_bytes.value_or(p * facts.bytes);
    max_bytes = facts.max_bytes.value_or(facts.bytes);
    const long long element = std::max(1, facts.element_bytes);
    elements = bytes / element;
    total_elements = total_bytes / element;
    ranks_per_node = std::max(1, facts.placement.ranks_per_node);
    nodes = facts.placement.nodes > 0 ? facts.placement.nodes : (p + ranks_per_node - 1) / ranks_per_node;
    p_power_of_two = p == pof2;
    p_even = p % 2 == 0;
    elements_multiple_of_p = elements % p == 0;
    balanced = nodes * ranks_per_node == p;
    blocked = facts.placement.blocked;
    commutative = facts.commutative;
    builtin_op = facts.builtin_op;
    in_place = facts.in_place;
  }
  long long integer(Fact fact) const {
    switch (fact) {
      case Fact::p: return p;
      case Fact::bytes: return bytes;
      case Fact::total_bytes: return total_bytes;
      case Fact::max_bytes: return max_bytes;
      case Fact::elements: return elements;
      case Fact::total_elements: return total_elements;
      case Fact::ranks_per_node: return ranks_per_node;
      case Fact::nodes: return nodes;
      default: return 0;
    }
  }
  bool flag(Fact fact) const {
    switch (fact) {
      case Fact::p_power_of_two: return p_power_of_two;
      case Fact::p_even: return p_even;
      case Fact::elements_multiple_of_p: return elements_multiple_of_p;
      case Fact::balanced: return balanced;
      case Fact::blocked: return blocked;
      case Fact::commutative: return commutative;
      case Fact::builtin_op: return builtin_op;
      case Fact::in_place: return in_place;
      default: return false;
    }
  }
};

// A threshold: a number, or a number times p or times the largest power of two up to p, as libraries
// compare counts with the communicator ("count < pof2", "nbytes > comm_size * max").
struct Bound {
  enum class Scale { one, p, pof2 };
  long long value = 0;
  Scale scale = Scale::one;
  long long of(const FactValues& v) const {
    return value * (scale == Scale::p ? v.p : scale == Scale::pof2 ? v.pof2 : 1);
  }
};

struct Condition {
  Fact fact;
  std::optional<bool> flag;  // boolean facts
  std::optional<Bound> below, up_to, at_least, above;
  std::optional<std::vector<long long>> in;  // `p: 2` is in: [2]
  std::vector<long long> not_in;

  bool matches(const FactValues& v) const {
    if (flag) return v.flag(fact) == *flag;
    const long long x = v.integer(fact);
    if (below && !(x < below->of(v))) return false;
    if (up_to && !(x <= up_to->of(v))) return false;
    if (at_least && !(x >= at_least->of(v))) return false;
    if (above && !(x > above->of(v))) return false;
    if (in && std::ranges::find(*in, x) == in->end()) return false;
    return std::ranges::find(not_in, x) == not_in.end();
  }
};

}  // namespace

// A rule: conditions, then exactly one outcome. The same form serves a collective's decision and an
// algorithm's variants (where the stand-in depends on p, as recursive doubling's does).
struct LibraryRule {
  enum class Kind { run, rules, decide_as, not_modelled, stand_in };
  std::vector<Condition> when;
  std::string label;  // the library's name for what runs; empty: the algorithm's key
  Kind kind = Kind::not_modelled;
  std::string target;  // run: an algorithm; decide_as: a table; not_modelled: why; stand_in: the spec
  std::vector<LibraryRule> rules;
  std::optional<Collective> costed_as;
  bool whole_buffers = false;
  bool sends_empty_messages = false;
  int line = 0;  // 1-based, for messages

  bool matches(const FactValues& v) const {
    return std::ranges::all_of(when, [&](const Condition& c) { return c.matches(v); });
  }
};

struct LibraryDecisions::Table {
  std::string source;
  std::vector<LibraryRule> rules;
  std::map<std::string, std::vector<LibraryRule>, std::less<>> algorithms;
  int line = 0;
};

LibraryDecisions::LibraryDecisions() : tables_(collective_count) {}
LibraryDecisions::LibraryDecisions(LibraryDecisions&&) noexcept = default;
LibraryDecisions& LibraryDecisions::operator=(LibraryDecisions&&) noexcept = default;
LibraryDecisions::~LibraryDecisions() = default;

bool LibraryDecisions::covers(Collective collective) const {
  return !tables_[static_cast<std::size_t>(collective)].rules.empty();
}

std::vector<std::string> LibraryDecisions::decides_as() const {
  std::set<std::string> names;
  const std::function<void(const std::vector<LibraryRule>&)> visit = [&](const std::vector<LibraryRule>& rules) {
    for (const LibraryRule& rule : rules) {
      if (rule.kind == LibraryRule::Kind::decide_as) names.insert(rule.target);
      visit(rule.rules);
    }
  };
  for (const Table& table : tables_) {
    visit(table.rules);
    for (const auto& [name, variants] : table.algorithms) visit(variants);
  }
  return {names.begin(), names.end()};
}

// Reads one file, reporting every problem with its place in the file.
class LibraryTableReader {
 public:
  LibraryTableReader(std::string source, std::vector<Diagnostic>& problems) : doc_(std::move(source), problems) {}

  static const LibraryDecisions::Table& table(const LibraryDecisions& tables, Collective collective) {
    return tables.tables_[static_cast<std::size_t>(collective)];
  }

  LibraryDecisions read(const std::string& text) {
    LibraryDecisions tables;
    const std::optional<YAML::Node> root = doc_.load(text);
    if (!root) return tables;
    if (!root->IsMap()) {
      doc_.error(root->Mark(), "expected a map with keys 'library', 'description', 'source' and 'collectives'");
      return tables;
    }
    bool have_library = false, have_source = false, have_collectives = false;
    doc_.for_each_key(*root, "the file",
                      {{"library",
                        [&](const YAML::Node& v) {
                          have_library = true;
                          set_text(tables.name_, v, "library");
                        }},
                       {"description", [&](const YAML::Node& v) { set_text(tables.description_, v, "description"); }},
                       {"source",
                        [&](const YAML::Node& v) {
                          have_source = true;
                          set_text(tables.source_, v, "source");
                        }},
                       {"collectives", [&](const YAML::Node& v) { collectives(v, tables), have_collectives = true; }}});
    if (!have_library) doc_.error(root->Mark(), "missing 'library', the tables' name (as the file is named)");
    if (!have_source) doc_.error(root->Mark(), "missing 'source': repository, tag and files the tables come from");
    if (!have_collectives) doc_.error(root->Mark(), "missing 'collectives', the decisions per collective");
    return tables;
  }

  void throw_if_errors() const { doc_.throw_if_errors<LibraryTableError>(); }

  // A set of tables: every `decide_as` names one of them, and no chain of them comes back to a table
  // for the same collective (followed through every rule and algorithm, whatever the facts). Every
  // problem of the set is reported.
  static void check_set(const std::vector<const LibraryDecisions*>& all) {
    std::vector<Diagnostic> problems;
    const auto problem = [&](const std::string& where, std::string message) {
      problems.push_back({{where}, std::move(message)});
    };
    const auto find = [&](const std::string& name) {
      const auto found = std::ranges::find_if(all, [&](const LibraryDecisions* t) { return t->name() == name; });
      return found != all.end() ? *found : nullptr;
    };
    for (const LibraryDecisions* tables : all) {
      for (const std::string& other : tables->decides_as()) {
        if (find(other) == nullptr) problem(tables->name(), "decide_as '" + other + "' names no table");
      }
    }
    for (int c = 0; c < collective_count; ++c) {
      const auto collective = static_cast<Collective>(c);
      std::vector<std::string> path;
      std::set<std::string> in_a_cycle;  // each cycle once, from the first of its tables reached
      const std::function<void(const std::string&)> follow = [&](const std::string& name) {
        if (std::ranges::find(path, name) != path.end()) {
          if (std::ranges::none_of(path, [&](const std::string& step) { return in_a_cycle.contains(step); })) {
            std::string chain;
            for (const std::string& step : path) chain += step + " -> ", in_a_cycle.insert(step);
            problem(path.front(),
                    "decide_as for " + std::string(collective_name(collective)) + " comes back: " + chain + name);
          }
          return;
        }
        const LibraryDecisions* tables = find(name);
        if (tables == nullptr) return;  // reported above
        path.push_back(name);
        for (const std::string& next : decide_as_targets(table(*tables, collective))) follow(next);
        path.pop_back();
      };
      for (const LibraryDecisions* tables : all) follow(tables->name());
    }
    if (!problems.empty()) throw LibraryTableError(std::move(problems));
  }

 private:
  static std::set<std::string> decide_as_targets(const LibraryDecisions::Table& table) {
    std::set<std::string> targets;
    const std::function<void(const std::vector<LibraryRule>&)> visit = [&](const std::vector<LibraryRule>& rules) {
      for (const LibraryRule& rule : rules) {
        if (rule.kind == LibraryRule::Kind::decide_as) targets.insert(rule.target);
        visit(rule.rules);
      }
    };
    visit(table.rules);
    for (const auto& [name, variants] : table.algorithms) visit(variants);
    return targets;
  }

  void set_text(std::string& field, const YAML::Node& node, const std::string& what) {
    if (const std::optional<std::string> value = doc_.text(node, what)) field = *value;
  }

  // "512", "512*p", "1*pof2".
  std::optional<Bound> bound(const YAML::Node& node, const std::string& what) {
    const std::string text = node.IsScalar() ? node.Scalar() : "";
    Bound b;
    std::string number = text;
    if (const auto star = text.find('*'); star != std::string::npos) {
      const std::string scale = text.substr(star + 1);
      if (scale == "p") {
        b.scale = Bound::Scale::p;
      } else if (scale == "pof2") {
        b.scale = Bound::Scale::pof2;
      } else {
        doc_.error(node.Mark(), "bad threshold '" + text + "' for '" + what + "', expected N, N*p or N*pof2");
        return std::nullopt;
      }
      number = text.substr(0, star);
    }
    const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), b.value);
    // Below 2^40: times p (at most 2^20 here) it stays a long long.
    if (number.empty() || error != std::errc{} || end != number.data() + number.size() || b.value < 0 ||
        b.value >= (1LL << 40)) {
      doc_.error(node.Mark(),
                 "bad threshold '" + text + "' for '" + what + "', expected N, N*p or N*pof2 (N from 0 to 2^40)");
      return std::nullopt;
    }
    return b;
  }

  std::optional<long long> whole_number(const YAML::Node& node, const std::string& what) {
    return doc_.integer(node, what, 0, LLONG_MAX);
  }

  std::optional<Condition> condition(const FactInfo& fact, const YAML::Node& node) {
    const std::string key(fact.key);
    const std::size_t before = doc_.errors();
    Condition c{fact.fact};
    if (fact.boolean) {
      c.flag = doc_.boolean(node, key);
      return c.flag ? std::optional(c) : std::nullopt;
    }
    if (node.IsScalar()) {
      const std::optional<long long> value = whole_number(node, key);
      if (!value) return std::nullopt;
      c.in = std::vector<long long>{*value};
      return c;
    }
    const auto list = [&](const YAML::Node& v, const std::string& what) {
      std::vector<long long> values;
      if (!v.IsSequence() || v.size() == 0) {
        doc_.error(v.Mark(), "'" + what + "' must be a non-empty list of whole numbers");
        return values;
      }
      for (const YAML::Node& item : v) {
        if (const std::optional<long long> value = whole_number(item, what)) values.push_back(*value);
      }
      return values;
    };
    doc_.for_each_key(node, "the condition on '" + key + "'",
                      {{"below", [&](const YAML::Node& v) { c.below = bound(v, key + ".below"); }},
                       {"up_to", [&](const YAML::Node& v) { c.up_to = bound(v, key + ".up_to"); }},
                       {"at_least", [&](const YAML::Node& v) { c.at_least = bound(v, key + ".at_least"); }},
                       {"above", [&](const YAML::Node& v) { c.above = bound(v, key + ".above"); }},
                       {"in", [&](const YAML::Node& v) { c.in = list(v, key + ".in"); }},
                       {"not_in", [&](const YAML::Node& v) { c.not_in = list(v, key + ".not_in"); }}});
    if (node.IsMap() && node.size() == 0) doc_.error(node.Mark(), "the condition on '" + key + "' is empty");
    return doc_.errors() == before ? std::optional(c) : std::nullopt;
  }

  std::vector<LibraryRule> rule_list(const YAML::Node& node, Collective collective, const std::string& where) {
    std::vector<LibraryRule> rules;
    if (!node.IsSequence() || node.size() == 0) {
      doc_.error(node.Mark(), where + " must be a non-empty list of rules");
      return rules;
    }
    for (const YAML::Node& item : node) rules.push_back(rule(item, collective));
    return rules;
  }

  LibraryRule rule(const YAML::Node& node, Collective collective) {
    LibraryRule r;
    r.line = node.Mark().line + 1;
    if (!node.IsMap() || node.size() == 0) {
      doc_.error(node.Mark(),
                 "a rule must be a map of conditions and one of 'run', 'rules', 'decide_as', "
                 "'not_modelled', 'stand_in'");
      return r;
    }
    const std::size_t before = doc_.errors();
    int outcomes = 0;
    std::optional<YAML::Mark> costed_as_mark, whole_buffers_mark, empty_messages_mark;
    for (const auto& [key, key_mark, value] : doc_.entries(node, "a rule")) {
      const auto outcome = [&, &key_mark = key_mark](LibraryRule::Kind kind) {
        if (++outcomes > 1)
          doc_.error(key_mark, "a rule has one outcome: 'run', 'rules', 'decide_as', 'not_modelled' or 'stand_in'");
        r.kind = kind;
      };
      const auto target = [&, &value = value, &key = key] { set_text(r.target, value, key); };
      if (const FactInfo* fact = find_fact(key)) {
        if (std::optional<Condition> c = condition(*fact, value)) r.when.push_back(std::move(*c));
      } else if (key == "run") {
        outcome(LibraryRule::Kind::run), target();
        if (!r.target.empty()) run_marks_.emplace_back(value.Mark(), r.target);
      } else if (key == "rules") {
        outcome(LibraryRule::Kind::rules), r.rules = rule_list(value, collective, "'rules'");
      } else if (key == "decide_as") {
        outcome(LibraryRule::Kind::decide_as), target();
      } else if (key == "not_modelled") {
        outcome(LibraryRule::Kind::not_modelled), target();
      } else if (key == "stand_in") {
        outcome(LibraryRule::Kind::stand_in), target();
      } else if (key == "label") {
        set_text(r.label, value, key);
      } else if (key == "costed_as") {
        costed_as_mark = value.Mark();
        if (const std::optional<std::string> name = doc_.text(value, key)) {
          r.costed_as = find_collective(*name);
          if (!r.costed_as) doc_.error(value.Mark(), "unknown collective '" + *name + "' for 'costed_as'");
        }
      } else if (key == "whole_buffers") {
        whole_buffers_mark = value.Mark();
        r.whole_buffers = doc_.boolean(value, key).value_or(false);
      } else if (key == "sends_empty_messages") {
        empty_messages_mark = value.Mark();
        r.sends_empty_messages = doc_.boolean(value, key).value_or(false);
      } else if (key == "note") {
        doc_.text(value, key);  // for the reader only
      } else {
        std::string expected;
        for (const FactInfo& fact : fact_infos) expected += std::string(fact.key) + ", ";
        doc_.error(key_mark, "unknown key '" + key + "' in a rule, expected a fact (" + expected +
                                 ") or one of run, rules, decide_as, not_modelled, stand_in, label, costed_as, "
                                 "whole_buffers, sends_empty_messages, note");
      }
    }
    // What follows judges the rule as a whole: only once its parts read cleanly.
    if (doc_.errors() != before) return r;
    if (outcomes == 0) {
      doc_.error(node.Mark(), "a rule needs one outcome: 'run', 'rules', 'decide_as', 'not_modelled' or 'stand_in'");
      return r;
    }
    if (r.kind != LibraryRule::Kind::stand_in && (costed_as_mark || whole_buffers_mark || empty_messages_mark)) {
      doc_.error(costed_as_mark       ? *costed_as_mark
                 : whole_buffers_mark ? *whole_buffers_mark
                                      : *empty_messages_mark,
                 "'costed_as', 'whole_buffers' and 'sends_empty_messages' go with 'stand_in'");
    }
    if (r.kind == LibraryRule::Kind::stand_in) {
      const Collective as = r.costed_as.value_or(collective);
      if (!is_library_schedule(r.target)) {
        const SpecParseResult parsed = parse_algorithm_spec(r.target, as);
        if (!parsed.choice)
          doc_.error(node.Mark(), "stand_in '" + r.target + "' is neither a schedule of the model's own nor a " +
                                      std::string(collective_name(as)) + " algorithm: " + parsed.error);
        else if (!parsed.choice->algorithm->make_schedule)
          doc_.error(node.Mark(),
                     "stand_in '" + r.target + "' builds its schedule from MPI state; the model cannot cost it");
      }
    }
    return r;
  }

  void collectives(const YAML::Node& node, LibraryDecisions& tables) {
    if (!node.IsMap() || node.size() == 0) {
      doc_.error(node.Mark(), "'collectives' must be a map from collective names to tables");
      return;
    }
    std::set<Collective> seen;
    for (auto it = node.begin(); it != node.end(); ++it) {
      const std::string name = it->first.IsScalar() ? it->first.Scalar() : "?";
      const std::optional<Collective> collective = find_collective(name);
      if (!collective) {
        doc_.error(it->first.Mark(), "unknown collective '" + name + "', expected " + collective_names());
        continue;
      }
      if (!seen.insert(*collective).second) {
        doc_.error(it->first.Mark(), "collective '" + name + "' given twice");
        continue;
      }
      LibraryDecisions::Table& table = tables.tables_[static_cast<std::size_t>(*collective)];
      table.line = it->first.Mark().line + 1;
      run_marks_.clear();
      algorithm_marks_.clear();
      bool have_source = false, have_rules = false;
      doc_.for_each_key(it->second, "collective '" + name + "'",
                        {{"source",
                          [&](const YAML::Node& v) {
                            have_source = true;
                            set_text(table.source, v, "source");
                          }},
                         {"rules",
                          [&](const YAML::Node& v) {
                            have_rules = true;
                            table.rules = rule_list(v, *collective, "'rules'");
                          }},
                         {"algorithms", [&](const YAML::Node& v) { algorithms(v, *collective, table); }}});
      if (!it->second.IsMap()) continue;
      if (!have_source)
        doc_.error(it->first.Mark(),
                   "collective '" + name + "' needs 'source': the library's file and function it follows");
      if (!have_rules) doc_.error(it->first.Mark(), "collective '" + name + "' needs 'rules'");
      check_runs(table);
    }
  }

  void algorithms(const YAML::Node& node, Collective collective, LibraryDecisions::Table& table) {
    if (!node.IsMap() || node.size() == 0) {
      doc_.error(node.Mark(), "'algorithms' must be a map from the library's algorithm names to lists of variants");
      return;
    }
    for (auto it = node.begin(); it != node.end(); ++it) {
      const std::string name = it->first.IsScalar() ? it->first.Scalar() : "";
      if (name.empty()) {
        doc_.error(it->first.Mark(), "an algorithm needs a name");
        continue;
      }
      if (table.algorithms.contains(name)) {
        doc_.error(it->first.Mark(), "algorithm '" + name + "' given twice");
        continue;
      }
      table.algorithms[name] = rule_list(it->second, collective, "algorithm '" + name + "'");
      algorithm_marks_.insert_or_assign(name, it->first.Mark());
    }
  }

  // Every `run` names an algorithm of the same collective, and no algorithm runs itself (each cycle
  // reported once, at the first of its algorithms).
  void check_runs(const LibraryDecisions::Table& table) {
    for (const auto& [mark, target] : run_marks_) {
      if (!table.algorithms.contains(target))
        doc_.error(mark, "run '" + target + "': no such algorithm under 'algorithms'");
    }
    std::set<std::string> in_a_cycle;
    const std::function<void(const std::string&, std::vector<std::string>&)> visit =
        [&](const std::string& name, std::vector<std::string>& path) {
          const auto variants = table.algorithms.find(name);
          if (variants == table.algorithms.end()) return;  // reported above
          if (std::ranges::find(path, name) != path.end()) {
            if (std::ranges::none_of(path, [&](const std::string& step) { return in_a_cycle.contains(step); })) {
              std::string chain;
              for (const std::string& step : path) chain += step + " -> ", in_a_cycle.insert(step);
              doc_.error(algorithm_marks_.at(path.front()),
                         "algorithm '" + path.front() + "' runs itself: " + chain + name);
            }
            return;
          }
          path.push_back(name);
          const std::function<void(const std::vector<LibraryRule>&)> runs = [&](const std::vector<LibraryRule>& rules) {
            for (const LibraryRule& rule : rules) {
              if (rule.kind == LibraryRule::Kind::run) visit(rule.target, path);
              runs(rule.rules);
            }
          };
          runs(variants->second);
          path.pop_back();
        };
    for (const auto& [name, variants] : table.algorithms) {
      std::vector<std::string> path;
      visit(name, path);
    }
  }

  YamlDocument doc_;
  // Of the collective being read: where each `run` and each algorithm is, for messages.
  std::vector<std::pair<YAML::Mark, std::string>> run_marks_;
  std::map<std::string, YAML::Mark> algorithm_marks_;
};

LibraryDecisions parse_library_decisions(const std::string& yaml_text, const std::string& source_name) {
  std::vector<Diagnostic> problems;
  LibraryTableReader reader(source_name, problems);
  LibraryDecisions tables = reader.read(yaml_text);
  reader.throw_if_errors();
  return tables;
}

void check_library_decisions(const std::vector<const LibraryDecisions*>& tables) {
  LibraryTableReader::check_set(tables);
}

namespace {

const std::map<std::string, LibraryDecisions, std::less<>>& compiled_tables() {
  static const std::map<std::string, LibraryDecisions, std::less<>> tables = [] {
    std::map<std::string, LibraryDecisions, std::less<>> all;
    for (std::size_t i = 0; i < compiled_library_table_count; ++i) {
      const std::string file = compiled_library_tables[i].file;
      LibraryDecisions parsed = parse_library_decisions(compiled_library_tables[i].text, "config/libraries/" + file);
      if (parsed.name() + ".yaml" != file)
        throw LibraryTableError(
            std::vector<Diagnostic>{{{"config/libraries/" + file},
                                     "'library' is '" + parsed.name() + "', but the file's name says '" +
                                         file.substr(0, file.rfind('.')) + "'"}});
      all.emplace(parsed.name(), std::move(parsed));
    }
    std::vector<const LibraryDecisions*> set;
    for (const auto& [name, tables] : all) set.push_back(&tables);
    check_library_decisions(set);
    return all;
  }();
  return tables;
}

constexpr std::array<std::pair<std::string_view, std::string_view>, 4> aliases{{
    {"ompi", "smpi-3.32-ompi"},
    {"mpich", "smpi-3.32-mpich"},
    {"mvapich2", "smpi-3.32-mvapich2"},
    {"impi", "smpi-3.32-impi"},
}};

}  // namespace

const LibraryDecisions* library_decisions(std::string_view name) {
  const auto& all = compiled_tables();
  const auto found = all.find(name);
  return found != all.end() ? &found->second : nullptr;
}

std::vector<std::string_view> library_decisions_names() {
  std::vector<std::string_view> names;
  for (const auto& [name, tables] : compiled_tables()) names.push_back(name);
  return names;
}

std::string_view library_decisions_alias(std::string_view name) {
  const auto found = std::ranges::find(aliases, name, &std::pair<std::string_view, std::string_view>::first);
  return found != aliases.end() ? found->second : name;
}

std::vector<std::string_view> library_decisions_aliases() {
  std::vector<std::string_view> names;
  for (const auto& [alias, table] : aliases) names.push_back(alias);
  return names;
}

namespace {

// What a walk through the rules has seen: the innermost explicit label, else the innermost algorithm
// run (a list of rules shared by several places is an algorithm that runs others).
struct Walk {
  std::string label;
  std::string algorithm;
  std::string name() const { return label.empty() ? algorithm : label; }
};

struct Evaluation {
  const LibraryDecisions& tables;
  const LibraryDecisions::Table& table;
  Collective collective;
  const LibraryFacts& facts;
  FactValues values;
  int depth;

  std::string facts_text() const {
    std::ostringstream text;
    text << "p = " << values.p << ", " << values.bytes << " B, " << values.ranks_per_node << " ranks per node";
    return text.str();
  }

  NativeDecision rules(const std::vector<LibraryRule>& list, Walk walk, int line) const {
    for (const LibraryRule& rule : list) {
      if (rule.matches(values)) return apply(rule, walk);
    }
    return {walk.name(), collective, "",
            tables.name() + ": no rule for " + std::string(collective_name(collective)) + " matches " + facts_text() +
                " (the list at line " + std::to_string(line) + ")"};
  }

  NativeDecision apply(const LibraryRule& rule, Walk walk) const {
    if (!rule.label.empty()) walk.label = rule.label;
    switch (rule.kind) {
      case LibraryRule::Kind::stand_in: {
        NativeDecision decision{walk.name(), rule.costed_as.value_or(collective), rule.target, ""};
        decision.whole_buffers = rule.whole_buffers;
        decision.sends_empty_messages = rule.sends_empty_messages;
        return decision;
      }
      case LibraryRule::Kind::not_modelled: return {walk.name(), collective, "", rule.target};
      case LibraryRule::Kind::rules: return rules(rule.rules, walk, rule.line);
      case LibraryRule::Kind::run:
        walk.algorithm = rule.target;
        return rules(table.algorithms.find(rule.target)->second, walk, rule.line);
      case LibraryRule::Kind::decide_as: {
        const LibraryDecisions* other = library_decisions(rule.target);
        if (other == nullptr || depth > 8)
          return {walk.name(), collective, "",
                  tables.name() + " decides as '" + rule.target + "', which is no table here"};
        NativeDecision decision = evaluate(*other, collective, facts, depth + 1);
        if (decision.library_algorithm.empty()) decision.library_algorithm = walk.name();
        return decision;
      }
    }
    return {};
  }

  static NativeDecision evaluate(const LibraryDecisions& tables, Collective collective, const LibraryFacts& facts,
                                 int depth);
};

}  // namespace

NativeDecision native_decision(const LibraryDecisions& tables, Collective collective, const LibraryFacts& facts) {
  return Evaluation::evaluate(tables, collective, facts, 0);
}

NativeDecision Evaluation::evaluate(const LibraryDecisions& tables, Collective collective, const LibraryFacts& facts,
                                    int depth) {
  const LibraryDecisions::Table& table = LibraryTableReader::table(tables, collective);
  if (table.rules.empty())
    return {"", collective, "", tables.name() + " has no decision for " + std::string(collective_name(collective))};
  const Evaluation evaluation{tables, table, collective, facts, FactValues(facts), depth};
  return evaluation.rules(table.rules, {}, table.line);
}

namespace {

LibraryIdentity none(std::string description, std::string why) { return {"", std::move(description), std::move(why)}; }

// "4.1" of 4.1.6: what the tables are keyed on.
std::string major_minor(const MpiLibrary& library) {
  std::string text = library.version.empty() ? "?" : std::to_string(library.version[0]);
  if (library.version.size() > 1) text += "." + std::to_string(library.version[1]);
  return text;
}

LibraryIdentity identify_open_mpi(const MpiLibrary& library) {
  const std::string release = major_minor(library);
  // coll_tuned_decision_fixed.c is the same file from v4.1.0 to v5.0.10; 4.0 had the older rules.
  if (release == "4.1") return {"ompi-4.1", library.description, ""};
  if (release == "5.0") return {"ompi-5.0", library.description, ""};
  return none(library.description, "no tables for Open MPI " + release + " (ompi-4.1 and ompi-5.0 exist)");
}

// `text`: the whole version text, whose other lines say the device and how MPICH was configured.
LibraryIdentity identify_mpich(const MpiLibrary& library, std::string_view text) {
  const std::string release = major_minor(library);
  if (release != "4.0" && release != "4.1")
    return none(library.description,
                "no tables for MPICH " + release +
                    " (mpich-4 follows MPICH 4.0 and 4.1; later versions are not checked against it)");
  if (const std::optional<std::string> configure = version_text_field(text, "MPICH configure:");
      configure && configure->find("--with-hcoll") != std::string::npos)
    return none(library.description,
                "MPICH built with HCOLL, which may run its own collectives before MPICH's selection");
  const std::optional<std::string> device = version_text_field(text, "MPICH Device:");
  if (!device)
    return none(library.description,
                "no 'MPICH Device:' line: the device (ch4 or ch3) decides how Allreduce is selected");
  if (device->starts_with("ch4")) return {"mpich-4", library.description, ""};
  if (device->starts_with("ch3")) return {"mpich-4-ch3", library.description, ""};
  return none(library.description, "MPICH device '" + *device + "' has no tables (ch4 and ch3 do)");
}

LibraryIdentity identify_smpi(const MpiLibrary& library) {
  // A selector named without a version (COLLSHIM_MPI_LIBRARY=smpi-ompi) has the only tables there are.
  const std::string release = library.version.empty() ? "3.32" : major_minor(library);
  // The selectors and the algorithms they run are the same files from 3.31 to 3.36 (3.33 was never
  // released); 3.30's Open MPI selector is the older one.
  constexpr std::array<std::string_view, 5> same_as_332{"3.31", "3.32", "3.34", "3.35", "3.36"};
  if (std::ranges::find(same_as_332, release) == same_as_332.end())
    return none(library.description,
                "no tables for SimGrid " + release + " (smpi-3.32-* stand for SimGrid 3.31 to 3.36)");
  if (library.name == "smpi")
    return none(library.description, "SMPI's smpi/coll-selector is not known: it picks the tables");
  const std::string selector = library.name.substr(5);  // after "smpi-"
  const std::string tables = "smpi-3.32-" + selector;
  if (library_decisions(tables) == nullptr)
    return none(library.description, "no tables for smpi/coll-selector:" + selector +
                                         " (ompi, mpich, mvapich2, impi and default have them)");
  return {tables, library.description, ""};
}

}  // namespace

LibraryIdentity library_tables(const MpiLibrary& library, std::string_view version_text) {
  if (library.name == "ompi") return identify_open_mpi(library);
  if (library.name == "mpich") return identify_mpich(library, version_text);
  if (library.is_smpi()) return identify_smpi(library);
  return none(library.description,
              "unknown MPI library: '" + library.description + "' (Open MPI, MPICH and SimGrid's SMPI have tables)");
}

LibraryIdentity identify_library(std::string_view version_text, std::string_view smpi_selector) {
  return library_tables(identify_mpi_library(version_text, smpi_selector), version_text);
}

}  // namespace collshim::model
