// collshim-config: offline companion of the rule tables.
//   collshim-config check FILE...      validate files; exit 1 on any error (warnings exit 0)
//   collshim-config explain --collective allgather --procs 96 --block-bytes 4KiB --mapping sequential
//                   --nodes 12 [FILE...]
//                                      show, rule by rule, which one a call matches and why
// FILE "default" (or no FILE for explain) is the shipped rule table.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "selector/rule_table.hpp"

using namespace collshim;

namespace {

RuleTable load(const std::vector<std::string>& files, std::vector<RuleDiagnostic>& diagnostics) {
  RuleTable table;
  for (const std::string& file : files) {
    if (file == "default") {
      table.add_file_text(default_rules_yaml, "default.yaml (shipped)", diagnostics);
    } else {
      table.add_file(file, diagnostics);
    }
  }
  table.check_shadowed(diagnostics);
  return table;
}

bool print_diagnostics(const std::vector<RuleDiagnostic>& diagnostics) {
  bool errors = false;
  for (const RuleDiagnostic& d : diagnostics) {
    std::cerr << d.where.text() << ": " << (d.error ? "error: " : "warning: ") << d.message << "\n";
    errors = errors || d.error;
  }
  return errors;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Validate and explain collshim rule tables"};
  app.require_subcommand(1);

  std::vector<std::string> check_files;
  CLI::App* check = app.add_subcommand("check", "validate rule files (exit 1 on errors)");
  check->add_option("files", check_files, "rule files; 'default' is the shipped table")->required();

  std::vector<std::string> explain_files;
  std::string collective_text, block_bytes_text = "0", mapping_text = "single_node";
  int procs = 1, nodes = 1, ppn = 0;
  bool oversubscribed = false;
  std::vector<std::string> collective_choices;
  for (const CollectiveInfo& info : collectives) collective_choices.emplace_back(info.name);
  CLI::App* explain = app.add_subcommand("explain", "show which rule a call matches, and why");
  explain->add_option("--collective", collective_text, collective_names())
      ->required()
      ->check(CLI::IsMember(collective_choices));
  explain->add_option("--procs", procs, "communicator size")->check(CLI::PositiveNumber);
  explain->add_option("--block-bytes", block_bytes_text, "average bytes per block, e.g. 4KiB");
  explain->add_option("--mapping", mapping_text, "single_node, sequential, cyclic or irregular")
      ->check(CLI::IsMember({"single_node", "sequential", "cyclic", "irregular"}));
  explain->add_option("--nodes", nodes, "number of nodes")->check(CLI::PositiveNumber);
  explain->add_option("--ppn", ppn, "most ranks on a node (default: procs/nodes rounded up)");
  explain->add_flag("--oversubscribed", oversubscribed, "more ranks than cores on some node");
  explain->add_option("files", explain_files, "rule files, later ones tried first (default: the shipped table)");

  CLI11_PARSE(app, argc, argv);

  if (check->parsed()) {
    std::vector<RuleDiagnostic> diagnostics;
    const RuleTable table = load(check_files, diagnostics);
    const bool errors = print_diagnostics(diagnostics);
    std::cout << (errors ? "invalid: " : "ok: ") << table.rules().size() << " rules in " << check_files.size()
              << " file(s)\n";
    return errors ? 1 : 0;
  }

  const auto block_bytes = parse_byte_size(block_bytes_text);
  if (!block_bytes) {
    std::cerr << "--block-bytes: bad size '" << block_bytes_text << "', expected e.g. 512, 4KiB, 1MiB\n";
    return 2;
  }
  const CallFacts facts{*find_collective(collective_text), procs, *block_bytes, *parse_mapping(mapping_text), nodes,
                        ppn > 0 ? ppn : (procs + nodes - 1) / nodes, oversubscribed};
  if (explain_files.empty()) explain_files.push_back("default");
  std::vector<RuleDiagnostic> diagnostics;
  const RuleTable table = load(explain_files, diagnostics);
  if (print_diagnostics(diagnostics)) return 1;

  std::cout << "call: " << collective_text << ", procs " << facts.procs << ", block_bytes " << facts.block_bytes
            << ", mapping " << mapping_text << ", nodes " << facts.nodes << ", ppn " << facts.ppn
            << (facts.oversubscribed ? ", oversubscribed" : "") << "\n";
  for (const Rule& rule : table.rules()) {
    if (rule.collective != facts.collective) continue;
    const std::string why_not = rule.when.mismatch(facts);
    std::cout << "  " << rule.where.text() << "  when " << rule.when.text() << "  use " << rule.use.text() << ": "
              << (why_not.empty() ? "MATCHES" : "skipped, " + why_not) << "\n";
    if (!why_not.empty()) continue;
    std::cout << "=> " << rule.use.text();
    const Algorithm& algorithm = *rule.use.algorithm;
    if (algorithm.eligible && !algorithm.eligible(facts.procs, rule.use.params))
      std::cout << ", which needs " << algorithm.eligibility << ", so " << algorithm.fallback << " runs instead";
    std::cout << " (first matching rule)\n";
    return 0;
  }
  std::cout << "=> native (no rule matches; the call passes through to the MPI library)\n";
  return 0;
}
