// collshim-tune: rule tables from measurements (docs/rules-and-tuning.md).
//   collshim-tune rules RESULTS.csv... -o FILE.yaml [--tolerance 0.03] [--robust] [--platform NAME]...
//                          [--predicted PREDICTIONS.csv... [--prediction-margin 0.10]]
//                          the smallest rule table that keeps each measured cell within the
//                          tolerance of its best, cells nobody measured filled from the cost
//                          model's predictions; exit 1 on bad input (file:line: column: why)
//   collshim-tune measure [options] -o RESULTS.csv -- LAUNCHER...
//                          collshim-bench under the launcher, every collective, variant and tuning
//                          candidate; rows appended as sizes complete, resumable
//   collshim-tune plot RESULTS.csv... -o DIR
//                          winner map and speed-up over native per sweep, PNG heat maps
//   collshim-tune verify FILE.yaml [options] -- LAUNCHER...   (or --measured RESULTS.csv...)
//                          the table against native, cell by cell; exit 1 if a cell is below 0.95
//   collshim-tune calibrate -o FILE.yaml [options] -- LAUNCHER...   (or --install: the site default)
//                          collshim-bench --calibrate under the launcher: the machine's cost-model
//                          platform description; exit 1 when the calibration fails, 2 on bad arguments
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "calibrate.hpp"
#include "rule_synthesis.hpp"
#include "selector/selector.hpp"
#include "sweep.hpp"
#include "verification.hpp"
#include "winner_maps.hpp"

#include <filesystem>

namespace {

struct RulesOptions {
  std::vector<std::string> inputs;
  std::string output;
  double tolerance = 0.03;
  bool robust = false;
  std::vector<std::string> platforms;  // one for every input, or one for all
  std::vector<std::string> predicted;  // collshim-model predict --native --csv files
  double prediction_margin = 0.10;
};

// Reads collshim-bench CSV files; false (after saying why) when they cannot be used.
bool read_inputs(const std::vector<std::string>& inputs, const std::vector<std::string>& platforms,
                 collshim::tune::CsvReadResult& read) {
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::string& input = inputs[i];
    std::ifstream in(input);
    if (!in) {
      std::cerr << "collshim-tune: error: " << input << ": cannot read the file\n";
      return false;
    }
    const std::string platform = platforms.empty() ? "" : platforms.size() == 1 ? platforms[0] : platforms[i];
    collshim::tune::read_measurements(in, input, platform, read);
  }
  for (const std::string& note : read.notes) std::cerr << "collshim-tune: note: " << note << "\n";
  for (const std::string& error : read.errors) std::cerr << "collshim-tune: error: " << error << "\n";
  if (!read.errors.empty()) return false;
  if (read.measurements.empty()) {
    std::cerr << "collshim-tune: error: no measurements in the input\n";
    return false;
  }
  return true;
}

// Measurements and predictions are given apart, so that a file of one is never taken for the
// other: rules takes predictions with --predicted only (they fill unmeasured cells), and verify
// judges a table on measurements only. `plot` draws either.
// `what_it_takes` finishes the message: what the command accepts instead.
bool refuse_predictions(const collshim::tune::CsvReadResult& read, const std::string& what_it_takes) {
  for (const auto& m : read.measurements) {
    if (!m.predicted) continue;
    std::cerr << "collshim-tune: error: " << m.source << ": a prediction (collshim-model predict --csv); "
              << what_it_takes << "\n";
    return true;
  }
  return false;
}

bool refuse_measurements(const collshim::tune::CsvReadResult& read) {
  for (const auto& m : read.measurements) {
    if (m.predicted) continue;
    std::cerr << "collshim-tune: error: " << m.source
              << ": a measurement given to --predicted (which takes collshim-model predict --native --csv output); "
                 "give measurements as the positional inputs\n";
    return true;
  }
  return false;
}

int run_rules(const RulesOptions& options) {
  if (options.platforms.size() > 1 && options.platforms.size() != options.inputs.size()) {
    std::cerr << "collshim-tune: error: --platform given " << options.platforms.size() << " times for "
              << options.inputs.size() << " input files; give it once (for all) or once per file, in order\n";
    return 2;
  }
  if (options.inputs.empty() && options.predicted.empty()) {
    std::cerr << "collshim-tune: error: rules needs measurements (collshim-bench --csv files) or predictions "
                 "(--predicted FILE), or both\n";
    return 2;
  }
  collshim::tune::CsvReadResult read;
  // Predictions alone make a table where nothing could be measured; its evidence says so.
  if (!options.inputs.empty() &&
      (!read_inputs(options.inputs, options.platforms, read) ||
       refuse_predictions(read, "rules takes predictions with --predicted only, to fill cells nobody measured")))
    return 1;
  if (!options.predicted.empty()) {
    collshim::tune::CsvReadResult predicted;
    if (!read_inputs(options.predicted, {}, predicted) || refuse_measurements(predicted)) return 1;
    read.measurements.insert(read.measurements.end(), predicted.measurements.begin(), predicted.measurements.end());
  }

  collshim::tune::SynthesisOptions synthesis;
  synthesis.tolerance = options.tolerance;
  synthesis.prediction_margin = options.prediction_margin;
  synthesis.robust = options.robust;
  synthesis.inputs = options.inputs;
  synthesis.predicted_inputs = options.predicted;
  const auto result = collshim::tune::synthesize_rules(read.measurements, synthesis);
  for (const std::string& note : result.notes) std::cerr << "collshim-tune: note: " << note << "\n";
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
  std::string libraries;
  for (const std::string& library : result.libraries) libraries += (libraries.empty() ? "" : ", ") + library;
  // Cells count once per library judged in them: each library has its own rule set.
  std::cout << "collshim-tune: " << result.rules << " rule(s) for " << (libraries.empty() ? "no library" : libraries)
            << " covering " << result.cells_with_rule << " of " << result.cells << " measured cells";
  if (!options.predicted.empty()) {
    std::cout << " and " << result.predicted_cells_with_rule << " of " << result.predicted_cells << " predicted ones ("
              << result.predictions_overridden << " predicted rows left out: their cells were measured)";
  }
  std::cout << " (the others run native), written to " << options.output << "\n";
  return 0;
}

// collshim-bench next to this program (the build tree, or the install's bin/).
std::string bench_next_to_me() {
  char path[4096];
  const ssize_t length = readlink("/proc/self/exe", path, sizeof path - 1);
  if (length <= 0) return "collshim-bench";
  std::string self(path, static_cast<std::size_t>(length));
  return self.substr(0, self.rfind('/') + 1) + "collshim-bench";
}

// The options of every subcommand that runs collshim-bench under a launcher (measure, verify,
// calibrate): sizes, repetitions, the machine's name and the benchmark. `what` says what they time.
void add_bench_options(CLI::App& command, collshim::tune::SweepOptions& sweep, const std::string& iterations_what,
                       const std::string& warmup_what, const std::string& platform_what) {
  const CLI::Validator size(collshim::tune::size_error, "SIZE");
  command.add_option("--min-bytes", sweep.min_bytes, "smallest size, e.g. 1, 4KiB")->check(size)->capture_default_str();
  command.add_option("--max-bytes", sweep.max_bytes, "largest size (sizes double)")->check(size)->capture_default_str();
  command.add_option("--iterations", sweep.iterations, iterations_what)
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  command.add_option("--warmup", sweep.warmup, warmup_what)->check(CLI::Range(0, 1000000))->capture_default_str();
  command.add_option("--platform", sweep.platform, platform_what);
  command.add_option("--bench", sweep.bench, "collshim-bench to run (an SMPI build's for smpirun)")
      ->capture_default_str();
  command.add_option("--bench-arg", sweep.bench_arguments,
                     "an argument passed to collshim-bench, e.g. --bench-arg=--verify-limit=1GiB");
}

// The options measure and verify share: what to sweep and how.
void add_sweep_options(CLI::App& command, collshim::tune::SweepOptions& sweep) {
  command.add_option("--collective", sweep.collectives, "collectives to sweep (default: all collshim-bench times)");
  command.add_option("--variant", sweep.variants,
                     "Allgatherv distributions / Alltoallv patterns to sweep (default: all)");
  add_bench_options(command, sweep, "timed calls per size and implementation", "untimed calls first",
                    "name of the machine, written to every row");
}

// tools/tune/plot_heatmaps.py: installed in ../share/collshim next to bin/, else the source tree's.
std::string plot_script() {
  const std::string installed = bench_next_to_me();  // .../bin/collshim-bench
  const std::filesystem::path share =
      std::filesystem::path(installed).parent_path().parent_path() / "share/collshim/plot_heatmaps.py";
  if (std::filesystem::exists(share)) return share.string();
  return COLLSHIM_PLOT_SCRIPT;
}

int run_plot(const std::vector<std::string>& inputs, const std::vector<std::string>& platforms,
             const std::string& directory) {
  collshim::tune::CsvReadResult read;
  if (!read_inputs(inputs, platforms, read)) return 1;
  const auto maps = collshim::tune::winner_maps(read.measurements);
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  const std::string grids = directory + "/winners.json";
  {
    std::ofstream out(grids, std::ios::trunc);
    out << collshim::tune::winner_maps_json(maps);
    if (!out.flush()) {
      std::cerr << "collshim-tune: error: " << grids << ": cannot write the file\n";
      return 1;
    }
  }
  const int status = collshim::tune::run_command({plot_script(), grids, directory},  // its #! names Debian's python3
                                                 [](const std::string& path) { std::cout << path << "\n"; });
  return status == 0 ? 0 : 1;
}

int run_verify(const std::string& table, const std::vector<std::string>& measured, collshim::tune::SweepOptions& sweep,
               const std::string& output, double threshold, bool json) {
  collshim::tune::CsvReadResult read;
  std::vector<std::string> inputs = measured;
  if (measured.empty()) {
    sweep.rules = table;
    sweep.output = output;
    sweep.progress_on_stderr = json;
    if (const int status = collshim::tune::run_sweep(sweep); status != 0) return status;
    inputs = {output};
  }
  if (!read_inputs(inputs, {}, read) ||
      refuse_predictions(read, "verify takes measurements only (collshim-bench --csv)"))
    return 1;

  // Measured elsewhere: the table decides each cell as the shim would (no forcing variables), under
  // the library whose native the cell is judged against: one selector per library, as in its jobs.
  collshim::EnvironmentSettings settings;
  settings.config = table;
  std::map<std::string, std::unique_ptr<collshim::Selector>> selectors;
  const auto selector_for = [&](const collshim::MpiLibrary& library) -> const collshim::Selector& {
    std::unique_ptr<collshim::Selector>& selector = selectors[library.text()];
    if (!selector) {
      std::vector<collshim::RuleDiagnostic> diagnostics;  // the same for every library: checked once, below
      selector = std::make_unique<collshim::Selector>(settings, diagnostics, collshim::JobFacts{library});
    }
    return *selector;
  };
  collshim::tune::DecideCell decide;
  if (!measured.empty()) {
    std::vector<collshim::RuleDiagnostic> diagnostics;
    const collshim::Selector checked(settings, diagnostics);
    bool fatal = false;
    for (const auto& d : diagnostics) {
      fatal |= d.error;
      std::cerr << "collshim-tune: " << (d.error ? "error: " : "warning: ") << d.text() << "\n";
    }
    if (fatal) return 1;
    decide = [&selector_for](const collshim::CallFacts& facts, const collshim::MpiLibrary& library) {
      const collshim::Decision decision = selector_for(library).decide(facts);
      return decision.choice->algorithm->passes_through ? std::string("native") : decision.choice->text();
    };
  }
  const auto result = collshim::tune::verify_table(read.measurements, decide, threshold);
  for (const std::string& error : result.errors) std::cerr << "collshim-tune: error: " << error << "\n";
  std::cout << (json ? collshim::tune::verify_json(result, threshold)
                     : collshim::tune::verify_report(result, threshold));
  if (!result.errors.empty() || result.cells.empty()) return 1;
  return result.below > 0 ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Writes collshim rule tables from measurements, and cost-model platform descriptions.", "collshim-tune"};
  app.require_subcommand(1);
  RulesOptions rules;
  CLI::App* rules_command = app.add_subcommand(
      "rules", "the smallest rule table that keeps every measured cell within the tolerance of its best");
  rules_command->add_option("results", rules.inputs, "CSV files written by collshim-bench --csv (measurements)")
      ->check(CLI::ExistingFile);
  rules_command->add_option("-o,--output", rules.output, "rule file to write")->required();
  rules_command->add_option("--tolerance", rules.tolerance, "how much slower than a cell's best its algorithm may be")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  rules_command->add_flag("--robust", rules.robust,
                          "results from several platforms: the algorithm with the best worst-case ratio to native, "
                          "none below 1.05");
  rules_command
      ->add_option("--predicted", rules.predicted,
                   "collshim-model predict --native ... --csv files: fill the cells nobody measured (never "
                   "one that was), against the libraries' decisions as the model costs them")
      ->check(CLI::ExistingFile);
  rules_command
      ->add_option("--prediction-margin", rules.prediction_margin,
                   "a predicted algorithm must beat predicted native by more than this fraction")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  rules_command->add_option("--platform", rules.platforms,
                            "platform of rows without a platform column value: once for all files, or once per file "
                            "in order");

  collshim::tune::SweepOptions measure;
  measure.bench = bench_next_to_me();
  CLI::App* measure_command =
      app.add_subcommand("measure", "run collshim-bench under a launcher: every collective, variant and candidate");
  add_sweep_options(*measure_command, measure);
  measure_command->add_option("--algorithms", measure.algorithms, "algorithm specs (default: the tuning candidates)");
  measure_command->add_option("--exclude", measure.exclude,
                              "leave out candidates whose spec contains this text (e.g. intra=shm under SMPI, where "
                              "shared-memory copies cost no simulated time)");
  measure_command->add_option("-o,--output", measure.output, "CSV file to append to (resumes where it stopped)")
      ->required();

  collshim::tune::SweepOptions verify;
  verify.bench = bench_next_to_me();
  std::string table, verify_output = "verify.csv";
  std::vector<std::string> measured;
  double threshold = 0.95;
  CLI::App* verify_command = app.add_subcommand(
      "verify", "the rule table against native on the sweep, cell by cell; exit 1 below --threshold");
  verify_command->add_option("table", table, "rule files (COLLSHIM_CONFIG syntax: default:FILE.yaml)")->required();
  add_sweep_options(*verify_command, verify);
  verify_command
      ->add_option("--measured", measured,
                   "judge the table on these collshim-bench --csv files instead of running (its decisions "
                   "must have been measured)")
      ->check(CLI::ExistingFile);
  verify_command->add_option("-o,--output", verify_output, "CSV of the verification run")->capture_default_str();
  verify_command->add_option("--threshold", threshold, "fail when a cell's speedup over native is below this")
      ->capture_default_str();
  bool verify_as_json = false;
  verify_command->add_flag("--json", verify_as_json,
                           "write the cells and the summary as one JSON object (collshim-tune-verify, version 1) "
                           "instead of the table");

  // collshim-bench --calibrate's own defaults: sizes to 1 MiB, 100 timed steps (fewer for large sizes).
  collshim::tune::SweepOptions calibrate;
  calibrate.bench = bench_next_to_me();
  calibrate.max_bytes = "1MiB";
  calibrate.iterations = 100;
  calibrate.warmup = 10;
  CLI::App* calibrate_command = app.add_subcommand(
      "calibrate",
      "run collshim-bench --calibrate under a launcher on two nodes (one with at least two ranks) and write the "
      "machine's cost-model platform description (COLLSHIM_PLATFORM, collshim-model predict --platform)");
  add_bench_options(*calibrate_command, calibrate, "timed steps per measurement (fewer for large sizes)",
                    "untimed steps first",
                    "the description's name (default: the output file's name without its extension)");
  CLI::Option* calibrate_output =
      calibrate_command->add_option("-o,--output", calibrate.output, "description to write (whole, or not at all)");
  bool install_site_default = false;
  calibrate_command
      ->add_flag("--install", install_site_default,
                 "write it as this installation's site default, " + collshim::site_platform_file() +
                     ", which every job reads where COLLSHIM_PLATFORM is unset (the directory is created)")
      ->excludes(calibrate_output);
  calibrate_command->footer(
      "Usage: collshim-tune calibrate -o FILE.yaml [OPTIONS] -- LAUNCHER...\n"
      "   or: collshim-tune calibrate --install [OPTIONS] -- LAUNCHER... (the site default)\n"
      "Everything after -- is the launcher: e.g. -- mpirun -np 18 --map-by ppr:16:node (two nodes), -- srun -N 2 "
      "-n 18, or --bench build-smpi/collshim-bench -- smpirun -np 32 -platform P.xml -hostfile H.\n"
      "Exit status: 0 written, 1 the calibration failed, 2 bad arguments or an output that cannot be written.");

  std::vector<std::string> plot_inputs, plot_platforms;
  std::string plot_directory;
  CLI::App* plot_command = app.add_subcommand(
      "plot", "PNG heat maps: the fastest implementation per process count and size, and its speed-up over native");
  plot_command->add_option("results", plot_inputs, "CSV files written by collshim-bench --csv")
      ->required()
      ->check(CLI::ExistingFile);
  plot_command->add_option("-o,--output", plot_directory, "directory for the PNG files")->required();
  plot_command->add_option("--platform", plot_platforms, "as for rules");

  // Everything after the first "--" is the launcher, options and all (CLI11 would parse them).
  std::vector<std::string> launcher;
  int own_arguments = argc;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--") {
      launcher.assign(argv + i + 1, argv + argc);
      own_arguments = i;
      break;
    }
  }
  measure.launcher = verify.launcher = calibrate.launcher = launcher;
  // Bad arguments exit 2, as every collshim tool's do (CLI11's own codes are 100 and above).
  app.failure_message([](const CLI::App* failed, const CLI::Error& e) {
    std::string command = "collshim-tune";
    for (const CLI::App* sub : failed->get_subcommands()) command += " " + sub->get_name();
    return command + ": error: " + e.what() + " (" + command + " --help lists the options)\n";
  });
  try {
    app.parse(own_arguments, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (measure_command->parsed() && launcher.empty()) {
    std::cerr << "collshim-tune: error: measure needs the launcher after --, e.g. -- mpirun -np 64\n";
    return 2;
  }
  if (calibrate_command->parsed()) {
    if (install_site_default) calibrate.output = collshim::site_platform_file();
    if (calibrate.output.empty()) {
      std::cerr << "collshim-tune calibrate: error: --output is required, or --install to write the site default ("
                << collshim::site_platform_file() << ")\n";
      return 2;
    }
    if (launcher.empty()) {
      std::cerr << "collshim-tune calibrate: error: no launcher: give it after --, e.g. -- mpirun -np 18 --map-by "
                   "ppr:16:node (two nodes, one with at least two ranks)\n";
      return 2;
    }
    if (collshim::tune::size_value(calibrate.min_bytes) > collshim::tune::size_value(calibrate.max_bytes)) {
      std::cerr << "collshim-tune calibrate: error: --min-bytes " << calibrate.min_bytes << " exceeds --max-bytes "
                << calibrate.max_bytes << "\n";
      return 2;
    }
    return collshim::tune::run_calibration(calibrate, install_site_default);
  }
  if (rules_command->parsed()) return run_rules(rules);
  if (plot_command->parsed()) return run_plot(plot_inputs, plot_platforms, plot_directory);
  if (measure_command->parsed()) return collshim::tune::run_sweep(measure);
  if (verify_command->parsed()) {
    if (measured.empty() == verify.launcher.empty()) {
      std::cerr << "collshim-tune: error: verify needs either -- LAUNCHER... or --measured FILE.csv\n";
      return 2;
    }
    return run_verify(table, measured, verify, verify_output, threshold, verify_as_json);
  }
  return 2;
}
