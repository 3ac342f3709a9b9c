#pragma once
// `collshim-tune measure` and `verify`: collshim-bench runs under the launcher the user gives
// (mpirun ..., srun ..., smpirun ...), one run per collective and variant, its CSV rows appended to
// one file as each size completes. A run that stops midway resumes at the first size it lacks: the
// file records each completed size in a comment line naming the launcher, collective and variant.
#include <functional>
#include <string>
#include <vector>

namespace collshim::tune {

struct SweepOptions {
  std::vector<std::string> launcher;     // argv before the benchmark, e.g. {"mpirun", "-np", "16"}
  std::string bench;                     // collshim-bench's path
  std::vector<std::string> collectives;  // empty: every collective collshim-bench times
  std::vector<std::string> variants;     // empty: every variant of each collective
  std::string min_bytes = "1", max_bytes = "4MiB";
  int iterations = 20, warmup = 3;
  std::string platform;
  std::vector<std::string> algorithms;       // empty: tuning_candidates() of each collective
  std::vector<std::string> exclude;          // candidates whose spec contains one of these are left out
  std::string rules;                         // verify: the rule table ("collshim" row), with only native beside it
  std::vector<std::string> bench_arguments;  // passed through (e.g. --verify-limit under SMPI)
  std::string output;                        // CSV appended to
  bool progress_on_stderr = false;           // verify --json: standard output is the JSON alone
};

// Runs argv (found on PATH), handing each line of its standard output to `on_line`. Returns its exit
// status, or -1 when it cannot be started: why goes to `cannot_start` if given, else to stderr.
int run_command(const std::vector<std::string>& argv, const std::function<void(const std::string&)>& on_line,
                std::string* cannot_start = nullptr);

// The launcher running collshim-bench: options.launcher, options.bench, `arguments`, then the
// user's --bench-arg ones. measure, verify and calibrate all start the benchmark so.
std::vector<std::string> bench_command(const SweepOptions& options, const std::vector<std::string>& arguments);

// A command line as the user would type it, for messages.
std::string command_text(const std::vector<std::string>& argv);

// Bytes from a size as collshim-bench takes it ("64", "4KiB", "1MiB"); throws std::invalid_argument.
long long size_value(const std::string& text);

// A CLI11 check of such a size.
std::string size_error(const std::string& text);

// Runs the sweep. Returns 0, or 1 after a failed run (its message on stderr). `log` gets progress.
int run_sweep(const SweepOptions& options);

}  // namespace collshim::tune
