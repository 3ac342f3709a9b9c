#pragma once
// Rule tables (docs/rules-and-tuning.md): YAML files of rules, tried in order, first match wins.
// Parsing validates everything up front and reports every problem as a file:line:column message
// (selector/yaml_document.hpp).
#include <climits>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/engine/algorithm_spec.hpp"
#include "selector/mapping.hpp"
#include "selector/mpi_library.hpp"
#include "selector/yaml_document.hpp"

namespace collshim {

// Inclusive range; the YAML forms are "a-b", "a-", "-b" and "a".
struct Range {
  long long low = 0;
  long long high = LLONG_MAX;
  bool contains(long long value) const { return value >= low && value <= high; }
  bool covers(const Range& other) const { return other.low >= low && other.high <= high; }
};

// What a rule can test. block_bytes is the average bytes per rank block: total received / p for the
// allgathers, total exchanged / p^2 for Alltoallv.
struct CallFacts {
  Collective collective;
  int procs = 1;
  long long block_bytes = 0;
  MappingClass mapping = MappingClass::single_node;
  int nodes = 1;
  int ppn = 1;
  bool oversubscribed = false;
  // Reductions: properties of the call's operation and data (other collectives: these defaults).
  bool commutative = true;              // MPI_Op_commutative
  bool order_changes_rounding = false;  // floating-point data under an operation whose rounding depends on order
};

// What a rule can test that is fixed for the whole process. Conditions on it are resolved once, when
// the selector is built (Selector::applies), never per call.
struct JobFacts {
  MpiLibrary library;  // the MPI library the job runs on (COLLSHIM_MPI_LIBRARY's where given)
};

// A rule's conditions; each absent one matches every call. How each is parsed, tested and written is
// declared once, in rule_table.cpp's `conditions`.
struct RuleConditions {
  std::optional<std::vector<LibraryRange>> library;  // any of these
  std::optional<Range> procs, block_bytes, nodes, ppn;
  std::optional<std::vector<MappingClass>> mapping;  // any of these
  std::optional<bool> oversubscribed;

  // The conditions on the call's facts only (those on JobFacts are the selector's, once).
  bool matches(const CallFacts& facts) const;
  // The conditions on the job's facts only.
  bool matches(const JobFacts& job) const;
  // Why a call of this job does not match ("block_bytes 4096 is outside 1KiB-256KiB", "library mpich
  // 4.0.2 is not ompi"), or "" when it does. For explanations only: matches() is the allocation-free
  // version of the same tests.
  std::string mismatch(const CallFacts& facts, const JobFacts& job) const;
  std::string text() const;                        // the conditions in rule-file syntax, "{}" for none
  bool covers(const RuleConditions& other) const;  // every call `other` matches, this matches too
};

struct Rule {
  Collective collective;
  RuleConditions when;
  AlgorithmChoice use;
  SourceLocation where;  // of the rule's first key
  // `reorder: true` (Allreduce rules only): floating-point reductions in this rule's range may run an
  // algorithm that combines in another order than the MPI library, as COLLSHIM_ALLREDUCE_REORDER=1
  // allows for every call.
  bool reorder = false;
};

// A problem of a rule file or of a setting (selector/yaml_document.hpp's, shared by every YAML file).
using RuleDiagnostic = Diagnostic;

// The rules of all files, in the order they are tried.
class RuleTable {
 public:
  // Parses YAML text; `file` names it in messages. Appends problems to `diagnostics`; rules of a
  // file with errors are still added where they parsed, but the caller must not run with errors.
  void add_file_text(const std::string& text, const std::string& file, std::vector<RuleDiagnostic>& diagnostics);
  // Reads and parses a file.
  void add_file(const std::string& path, std::vector<RuleDiagnostic>& diagnostics);
  // Files added later take precedence: their rules are tried first.
  const std::vector<Rule>& rules() const { return rules_; }
  // Warns about every rule that an earlier-tried rule of the same collective always pre-empts.
  void check_shadowed(std::vector<RuleDiagnostic>& diagnostics) const;
  // True when some rule of `collective` tests block_bytes (Alltoallv then needs an agreed size).
  bool tests_block_bytes(Collective collective) const;
  bool empty() const { return rules_.empty(); }

 private:
  std::vector<Rule> rules_;
};

// One rule in rule-file syntax, as an item of the `rules:` list, each evidence line a comment above it.
// The writers of rule files (collshim-tune rules, online tuning) share it.
std::string rule_yaml(Collective collective, const RuleConditions& when, std::string_view use,
                      const std::vector<std::string>& evidence);

// Parses sizes like "4KiB", "1MiB", "512", "512B"; nullopt if malformed.
std::optional<long long> parse_byte_size(std::string_view text);

// The shipped config/default.yaml, compiled into the library.
extern const char* const default_rules_yaml;

}  // namespace collshim
