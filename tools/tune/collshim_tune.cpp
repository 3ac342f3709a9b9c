// collshim-tune: rule tables from measurements (issue 18; README "Tuning").
//   collshim-tune rules RESULTS.csv... -o FILE.yaml [--tolerance 0.03] [--robust] [--platform NAME]...
//                          the smallest rule table that keeps each measured cell within the
//                          tolerance of its best; exit 1 on bad input (file:line: column: why)
// The other subcommands of the issue (measure, verify, plot) are not written yet.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "rule_synthesis.hpp"

namespace {

struct RulesOptions {
  std::vector<std::string> inputs;
  std::string output;
  double tolerance = 0.03;
  bool robust = false;
  std::vector<std::string> platforms;  // one for every input, or one for all
};

int run_rules(const RulesOptions& options) {
  if (options.platforms.size() > 1 && options.platforms.size() != options.inputs.size()) {
    std::cerr << "collshim-tune: error: --platform given " << options.platforms.size() << " times for "
              << options.inputs.size() << " input files; give it once (for all) or once per file, in order\n";
    return 2;
  }
  collshim::tune::CsvReadResult read;
  for (std::size_t i = 0; i < options.inputs.size(); ++i) {
    const std::string& input = options.inputs[i];
    std::ifstream in(input);
    if (!in) {
      std::cerr << "collshim-tune: error: " << input << ": cannot read the file\n";
      return 1;
    }
    const std::string platform =
        options.platforms.empty() ? "" : options.platforms.size() == 1 ? options.platforms[0] : options.platforms[i];
    collshim::tune::read_measurements(in, input, platform, read);
  }
  for (const std::string& note : read.notes) std::cerr << "collshim-tune: note: " << note << "\n";
  for (const std::string& error : read.errors) std::cerr << "collshim-tune: error: " << error << "\n";
  if (!read.errors.empty()) return 1;
  if (read.measurements.empty()) {
    std::cerr << "collshim-tune: error: no measurements in the input\n";
    return 1;
  }

  collshim::tune::SynthesisOptions synthesis;
  synthesis.tolerance = options.tolerance;
  synthesis.robust = options.robust;
  synthesis.inputs = options.inputs;
  const auto result = collshim::tune::synthesize_rules(read.measurements, synthesis);
  for (const std::string& error : result.errors) std::cerr << "collshim-tune: error: " << error << "\n";
  if (!result.errors.empty()) return 1;

  // Written whole or not at all: a half-written rule table would stop the next job at MPI_Init.
  const std::string partial = options.output + ".partial";
  {
    std::ofstream out(partial, std::ios::trunc);
    out << result.yaml;
    if (!out.flush()) {
      std::cerr << "collshim-tune: error: " << partial << ": cannot write the file\n";
      return 1;
    }
  }
  if (std::rename(partial.c_str(), options.output.c_str()) != 0) {
    std::cerr << "collshim-tune: error: cannot rename " << partial << " to " << options.output << "\n";
    return 1;
  }
  std::cout << "collshim-tune: " << result.rules << " rule(s) covering " << result.cells_with_rule << " of "
            << result.cells << " measured cells (the others run native), written to " << options.output << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Writes collshim rule tables from measurements.", "collshim-tune"};
  app.require_subcommand(1);
  RulesOptions rules;
  CLI::App* rules_command = app.add_subcommand(
      "rules", "the smallest rule table that keeps every measured cell within the tolerance of its best");
  rules_command->add_option("results", rules.inputs, "CSV files written by collshim-bench --csv")
      ->required()
      ->check(CLI::ExistingFile);
  rules_command->add_option("-o,--output", rules.output, "rule file to write")->required();
  rules_command->add_option("--tolerance", rules.tolerance, "how much slower than a cell's best its algorithm may be")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  rules_command->add_flag("--robust", rules.robust,
                          "results from several platforms: the algorithm with the best worst-case ratio to native, "
                          "none below 1.05");
  rules_command->add_option("--platform", rules.platforms,
                            "platform of rows without a platform column value: once for all files, or once per file "
                            "in order");
  CLI11_PARSE(app, argc, argv);
  if (rules_command->parsed()) return run_rules(rules);
  return 2;
}
