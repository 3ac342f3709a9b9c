#include "sweep.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <sstream>

#include "algorithms/engine/collective.hpp"
#include "bench_case.hpp"
#include "rule_synthesis.hpp"
#include "selector/tuning_candidates.hpp"

extern char** environ;

namespace collshim::tune {
namespace {

constexpr std::string_view done_marker = "# collshim-tune measure done: ";

// "<launcher> | <collective> | <variant>": what a completed size belongs to.
std::string run_key(const SweepOptions& options, const std::string& collective, const std::string& variant) {
  return command_text(options.launcher) + " | " + collective + " | " + variant +
         (options.rules.empty() ? "" : " | " + options.rules);
}

// Largest completed size per run key, from the output's done markers.
std::map<std::string, long long> completed_sizes(const std::string& output) {
  std::map<std::string, long long> done;
  std::ifstream in(output);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with(done_marker)) continue;
    const std::string rest = line.substr(done_marker.size());
    const auto space = rest.rfind(' ');
    if (space == std::string::npos) continue;
    done[rest.substr(0, space)] = std::max(done[rest.substr(0, space)], std::stoll(rest.substr(space + 1)));
  }
  return done;
}

}  // namespace

std::string command_text(const std::vector<std::string>& argv) {
  std::string text;
  for (const std::string& word : argv) text += (text.empty() ? "" : " ") + word;
  return text;
}

long long size_value(const std::string& text) {
  // The bench's own sizes, so that a resumed run starts where the last one stopped: "4KiB" etc.
  std::size_t end = 0;
  long long value = 0;
  try {
    value = std::stoll(text, &end);
  } catch (const std::exception&) {
    end = 0;
  }
  static const std::map<std::string, long long> units = {{"", 1},           {"B", 1},           {"KiB", 1LL << 10},
                                                         {"K", 1LL << 10},  {"MiB", 1LL << 20}, {"M", 1LL << 20},
                                                         {"GiB", 1LL << 30}};
  const auto at = end == 0 ? units.end() : units.find(text.substr(end));
  // collshim-bench takes sizes from 1 to INT_MAX (an MPI count of bytes).
  if (at == units.end() || value < 1 || value > std::numeric_limits<int>::max() / at->second)
    throw std::invalid_argument("size " + text +
                                ": expected a number of bytes from 1 to below 2GiB, with B, KiB, MiB or GiB");
  return value * at->second;
}

std::string size_error(const std::string& text) {
  try {
    size_value(text);
    return "";
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
}

std::vector<std::string> bench_command(const SweepOptions& options, const std::vector<std::string>& arguments) {
  std::vector<std::string> argv = options.launcher;
  argv.push_back(options.bench);
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  argv.insert(argv.end(), options.bench_arguments.begin(), options.bench_arguments.end());
  return argv;
}

int run_command(const std::vector<std::string>& argv, const std::function<void(const std::string&)>& on_line,
                std::string* cannot_start) {
  int pipe_ends[2];
  if (pipe(pipe_ends) != 0) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_ends[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_ends[0]);
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t child = 0;
  const int spawned = posix_spawnp(&child, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_ends[1]);
  if (spawned != 0) {
    close(pipe_ends[0]);
    if (cannot_start != nullptr)
      *cannot_start = std::strerror(spawned);
    else
      std::cerr << "collshim-tune: error: cannot run " << argv[0] << ": " << std::strerror(spawned) << "\n";
    return -1;
  }
  std::unique_ptr<FILE, int (*)(FILE*)> out(fdopen(pipe_ends[0], "r"), fclose);
  std::string line;
  for (int ch = 0; (ch = std::fgetc(out.get())) != EOF;) {
    if (ch != '\n') {
      line += static_cast<char>(ch);
      continue;
    }
    on_line(line);
    line.clear();
  }
  if (!line.empty()) on_line(line);
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int run_sweep(const SweepOptions& options) {
  std::vector<const bench::CaseInfo*> cases;
  if (options.collectives.empty()) {
    for (const bench::CaseInfo& info : bench::bench_cases()) cases.push_back(&info);
  } else {
    for (const std::string& name : options.collectives) {
      const auto collective = find_collective(name);
      const bench::CaseInfo* info = collective ? bench::find_bench_case(*collective) : nullptr;
      if (info == nullptr) {
        std::cerr << "collshim-tune: error: --collective " << name << ": collshim-bench times ";
        std::vector<std::string> names;
        for (const auto& c : bench::bench_cases()) names.emplace_back(collective_name(c.collective));
        std::cerr << alternatives_text(names) << "\n";
        return 2;
      }
      cases.push_back(info);
    }
  }
  const long long min_bytes = size_value(options.min_bytes), max_bytes = size_value(options.max_bytes);
  std::map<std::string, long long> done = completed_sizes(options.output);
  bool header_written = false;
  {
    std::ifstream existing(options.output);
    header_written = existing && existing.peek() != std::ifstream::traits_type::eof();
  }
  std::ofstream out(options.output, std::ios::app);
  if (!out) {
    std::cerr << "collshim-tune: error: " << options.output << ": cannot write the file\n";
    return 1;
  }

  for (const bench::CaseInfo* info : cases) {
    const std::string collective(collective_name(info->collective));
    std::vector<std::string> variants = info->variants.empty() ? std::vector<std::string>{""} : info->variants;
    if (!options.variants.empty() && !info->variants.empty()) {
      std::vector<std::string> chosen;
      for (const std::string& v : options.variants) {
        if (std::find(info->variants.begin(), info->variants.end(), v) != info->variants.end()) chosen.push_back(v);
      }
      variants = chosen;
    }
    for (const std::string& variant : variants) {
      const std::string key = run_key(options, collective, variant);
      long long from = min_bytes;
      if (const auto at = done.find(key); at != done.end()) from = at->second * 2;
      while (from < min_bytes) from *= 2;
      std::ostream& progress = options.progress_on_stderr ? std::cerr : std::cout;
      progress << "collshim-tune: " << collective << (variant.empty() ? "" : " (" + variant + ")");
      if (from > max_bytes) {
        progress << ": already measured up to " << done[key] << " bytes in " << options.output << "\n";
        continue;
      }
      progress << ": " << from << " to " << max_bytes << " bytes\n" << std::flush;

      std::vector<std::string> argv = {"--csv",
                                       "--collective",
                                       collective,
                                       "--min-bytes",
                                       std::to_string(from),
                                       "--max-bytes",
                                       std::to_string(max_bytes),
                                       "--iterations",
                                       std::to_string(options.iterations),
                                       "--warmup",
                                       std::to_string(options.warmup)};
      if (!variant.empty()) argv.insert(argv.end(), {info->variant_option, variant});
      if (!options.platform.empty()) argv.insert(argv.end(), {"--platform", options.platform});
      argv.emplace_back("--algorithms");
      if (!options.rules.empty()) {
        argv.emplace_back("native");  // the table's row next to native only
        argv.insert(argv.end(), {"--rules", options.rules});
      } else {
        std::vector<std::string> algorithms =
            options.algorithms.empty() ? tuning_candidates(info->collective) : options.algorithms;
        std::erase_if(algorithms, [&](const std::string& spec) {
          return std::any_of(options.exclude.begin(), options.exclude.end(),
                             [&](const std::string& text) { return spec.find(text) != std::string::npos; });
        });
        argv.insert(argv.end(), algorithms.begin(), algorithms.end());
      }
      argv = bench_command(options, argv);

      // Rows of one size are written together, with its done marker, once the next size (or the end)
      // shows the size complete.
      std::vector<std::string> pending;
      long long pending_bytes = -1;
      int bytes_column = -1;
      int columns = 0;
      auto flush = [&] {
        if (pending.empty()) return;
        for (const std::string& row : pending) out << row << "\n";
        out << done_marker << key << " " << pending_bytes << "\n" << std::flush;
        pending.clear();
      };
      const int status = run_command(argv, [&](const std::string& line) {
        if (line.starts_with("#")) return;
        if (line.starts_with("collective,")) {
          std::stringstream header(line);
          std::string column;
          for (columns = 0; std::getline(header, column, ','); ++columns) {
            if (column == "bytes") bytes_column = columns;
          }
          if (!header_written) {
            out << line << "\n";
            header_written = true;
          }
          return;
        }
        // A row cut short by a crashing launcher, or joined with the launcher's own output, must not
        // reach the file: every later `rules` run would refuse it.
        const auto fields = split_csv_line(line);
        const long long count = fields ? static_cast<long long>(fields->size()) : -1;
        const long long bytes =
            count == columns && bytes_column >= 0 ? std::strtoll((*fields)[bytes_column].c_str(), nullptr, 10) : -1;
        if (bytes < 0) {
          std::cerr << "collshim-tune: warning: not a result row (" << count << " fields, the header names " << columns
                    << "), left out: " << line.substr(0, 160) << "\n";
          return;
        }
        if (bytes != pending_bytes) flush();
        pending_bytes = bytes;
        pending.push_back(line);
      });
      if (status != 0) {
        std::cerr << "collshim-tune: error: `" << command_text(argv) << "` exited with status " << status
                  << "; the sizes it completed are kept in " << options.output << ", rerun to resume\n";
        return 1;
      }
      flush();
      // A launcher can end a run early and still exit 0 (SimGrid's smpirun on a deadlock it detects):
      // the sizes must have reached the last one asked for.
      long long last = from;
      while (last <= max_bytes / 2) last *= 2;
      if (pending_bytes < last) {
        std::cerr << "collshim-tune: error: `" << command_text(argv) << "` exited with status 0 but its last "
                  << "result is for " << pending_bytes << " bytes, not " << last << "; the sizes it completed are "
                  << "kept in " << options.output << " (look for the launcher's own message above)\n";
        return 1;
      }
    }
  }
  return 0;
}

}  // namespace collshim::tune
