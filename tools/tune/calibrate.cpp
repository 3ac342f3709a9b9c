#include "calibrate.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "calibration_output.hpp"
#include "model/platform/platform.hpp"

namespace collshim::tune {
namespace {

using bench::CalibrationLayout;

void fail(const std::string& text) { std::cerr << "collshim-tune calibrate: error: " << text << "\n"; }

// The output's ".partial" sibling: created before the launch, so that an output that cannot be
// written is found before minutes of calibration; renamed onto the output once the description is
// complete, so a job never reads half a description; removed otherwise.
class PartialFile {
 public:
  explicit PartialFile(std::string target) : target_(std::move(target)), path_(target_ + ".partial") {}
  PartialFile(const PartialFile&) = delete;
  PartialFile& operator=(const PartialFile&) = delete;
  ~PartialFile() {
    if (created_ && !committed_) std::remove(path_.c_str());
  }

  // Empty when the file could be created, else why not.
  std::string create() {
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path_.c_str(), "w"), std::fclose);
    if (!file) return std::strerror(errno);
    created_ = true;
    return "";
  }

  // Empty once `text` is the target's content, else why not.
  std::string commit(const std::string& text) {
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path_.c_str(), "w"), std::fclose);
    if (!file || std::fputs(text.c_str(), file.get()) < 0 || std::fclose(file.release()) != 0)
      return path_ + ": " + std::strerror(errno);
    if (std::rename(path_.c_str(), target_.c_str()) != 0)
      return "cannot rename " + path_ + " to " + target_ + ": " + std::strerror(errno);
    committed_ = true;
    return "";
  }

 private:
  std::string target_, path_;
  bool created_ = false, committed_ = false;
};

// What the launcher printed: collshim-bench's placement line(s) and the description between its
// markers; everything else is the launcher's or the benchmark's own and is passed on.
class BenchOutput {
 public:
  void take(const std::string& line) {
    if (!in_description_) {
      if (const auto at = line.find(bench::calibration_prefix); at != std::string::npos) {
        const std::string_view own = std::string_view(line).substr(at);
        if (own == bench::description_begins) {
          // What the launcher puts before every line of a rank (srun --label, mpirun --tag-output).
          label_ = line.substr(0, at);
          in_description_ = true;
          return;
        }
        if (const auto layout = bench::parse_layout_line(own)) {
          layouts_.push_back(*layout);
          return;
        }
      }
      std::cout << line << "\n";
      return;
    }
    if (!line.starts_with(label_)) {  // the launcher's own line amid rank 0's
      std::cout << line << "\n";
      return;
    }
    const std::string_view text = std::string_view(line).substr(label_.size());
    if (text == bench::description_ends) {
      in_description_ = false;
      complete_ = true;
      return;
    }
    description_.append(text).append("\n");
  }

  const std::vector<CalibrationLayout>& layouts() const { return layouts_; }
  bool complete() const { return complete_; }
  const std::string& description() const { return description_; }

 private:
  std::vector<CalibrationLayout> layouts_;
  std::string label_;
  bool in_description_ = false, complete_ = false;
  std::string description_;
};

std::string count_text(int count, const char* one, const char* many) {
  return std::to_string(count) + " " + (count == 1 ? one : many);
}

std::string placement_text(const CalibrationLayout& layout) {
  std::string text = count_text(layout.ranks, "rank", "ranks") + " on " + count_text(layout.nodes, "node", "nodes");
  if (layout.nodes > 1)
    text += layout.fullest == 1 ? ", one on each" : ", at most " + std::to_string(layout.fullest) + " on one";
  return text;
}

// Why the run did not give a description, or nullopt when it did.
std::optional<std::string> run_problem(const BenchOutput& output, int status, const std::string& command,
                                       const std::string& bench) {
  const auto& layouts = output.layouts();
  if (layouts.size() > 1)
    return "the launcher started " + std::to_string(layouts.size()) +
           " separate one-rank jobs, not one job: collshim-bench (" + bench +
           ") is built for another MPI than the launcher's; use that MPI's launcher or --bench a build for this one "
           "(build-smpi/collshim-bench for smpirun)";
  if (layouts.size() == 1 && !layouts.front().enough())
    return "the launcher started " + placement_text(layouts.front()) +
           "; calibration needs two nodes, one of them with at least two ranks: e.g. mpirun -np 18 --map-by "
           "ppr:16:node on two nodes, srun -N 2 -n 18, or a host file naming two hosts "
           "(COLLSHIM_TOPOLOGY=nodes=2,mapping=sequential fakes two nodes for a test or a simulator)";
  if (layouts.empty() && status != 0)
    return "the launcher exited with status " + std::to_string(status) +
           " before collshim-bench started (its messages are above): " + command;
  if (layouts.empty())
    return "the launcher exited with status 0 but collshim-bench reported nothing: does `" +
           command.substr(0, command.find(' ')) + "` start MPI programs, and is --bench (" + bench +
           ") built for its MPI? Command: " + command;
  if (status != 0)
    return "collshim-bench stopped with status " + std::to_string(status) +
           " during the calibration (its messages are above); nothing written. Command: " + command;
  if (!output.complete())
    return "collshim-bench ended without printing the whole description; nothing written. Command: " + command;
  return std::nullopt;
}

}  // namespace

int run_calibration(const SweepOptions& options, bool install) {
  namespace fs = std::filesystem;
  std::error_code error;
  const std::string given = (install ? "--install " : "-o ") + options.output;
  if (fs::is_directory(options.output, error)) {
    fail(given + " is a directory; give the description's file name, e.g. " +
         (fs::path(options.output) / "platform.yaml").string());
    return 2;
  }
  // The site default's directory (<prefix>/etc/collshim) is made here: `cmake --install` leaves it out.
  const std::string instead =
      "; run this as a user who may write there, or calibrate with -o FILE and copy the file "
      "to " +
      options.output;
  if (install && (fs::create_directories(fs::path(options.output).parent_path(), error), error)) {
    fail(given + ": cannot create the directory " + fs::path(options.output).parent_path().string() + " (" +
         error.message() + ")" + instead);
    return 2;
  }
  PartialFile partial(options.output);
  if (const std::string why = partial.create(); !why.empty()) {
    fail(given + ": cannot create a file there (" + why + ")" +
         (install ? instead : "; give a path in a directory you can write, and copy the file into place afterwards"));
    return 2;
  }
  const std::string name = options.platform.empty() ? fs::path(options.output).stem().string() : options.platform;
  const std::vector<std::string> argv = bench_command(
      options, {"--calibrate", "-", "--platform", name, "--min-bytes", std::to_string(size_value(options.min_bytes)),
                "--max-bytes", std::to_string(size_value(options.max_bytes)), "--iterations",
                std::to_string(options.iterations), "--warmup", std::to_string(options.warmup)});
  const std::string command = command_text(argv);
  std::cout << "collshim-tune calibrate: " << command << "\n" << std::flush;

  BenchOutput output;
  std::string cannot_start;
  const int status = run_command(
      argv, [&output](const std::string& line) { output.take(line); }, &cannot_start);
  if (status == -1) {
    fail("cannot start the launcher `" + options.launcher.front() + "` (" + cannot_start + "). Command: " + command);
    return 1;
  }
  if (const auto problem = run_problem(output, status, command, options.bench)) {
    fail(*problem);
    return 1;
  }
  try {
    model::parse_platform(output.description(), options.output);
  } catch (const model::PlatformError& e) {
    for (const Diagnostic& problem : e.problems())  // a line each, as every YAML reader's problems
      fail("the description collshim-bench printed does not read back, nothing written: " + problem.text());
    return 1;
  }
  if (const std::string why = partial.commit(output.description()); !why.empty()) {
    fail("cannot write the description: " + why);
    return 1;
  }
  const std::string path = fs::absolute(options.output, error).lexically_normal().string();
  std::cout << "collshim-tune calibrate: platform description '" << name << "' (measured on "
            << placement_text(output.layouts().front()) << ") written to " << path << "\n";
  if (install)
    std::cout << "collshim-tune calibrate: " << path
              << " is this installation's site default: every job reads it where COLLSHIM_PLATFORM is unset "
                 "(COLLSHIM_PLATFORM=none runs a job without the cost model)\n";
  else
    std::cout << "export COLLSHIM_PLATFORM=" << path << "   # the jobs' environment; or collshim-run --platform "
              << path << " -- LAUNCHER...\n";
  return 0;
}

}  // namespace collshim::tune
