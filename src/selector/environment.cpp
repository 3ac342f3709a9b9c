#include "selector/environment.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <string_view>

extern char** environ;

namespace collshim {

std::optional<LogLevel> parse_log_level(const std::string& text) {
  if (text == "off" || text.empty()) return LogLevel::off;
  if (text == "warn") return LogLevel::warn;
  if (text == "info") return LogLevel::info;
  if (text == "debug") return LogLevel::debug;
  if (text == "trace") return LogLevel::trace;
  return std::nullopt;
}

namespace {

// Every COLLSHIM_* variable something reads: the shim's own (below, and each collective's forcing
// variable), collshim-run's, and those of the project's build and test scripts, which the ranks of
// a test inherit.
constexpr std::array known_variables{
    "COLLSHIM_CONFIG",          "COLLSHIM_REPORT",           "COLLSHIM_LOG",
    "COLLSHIM_TOPOLOGY",        "COLLSHIM_DISABLE",          "COLLSHIM_ALLREDUCE_REORDER",
    "COLLSHIM_NONBLOCKING",     "COLLSHIM_PROGRESS_THREAD",  "COLLSHIM_TUNE",
    "COLLSHIM_TUNE_OUT",        "COLLSHIM_TUNE_EXCLUDE",     "COLLSHIM_PLATFORM",
    "COLLSHIM_MODEL_MARGIN",    "COLLSHIM_TUNE_RECHECK",     "COLLSHIM_MPI_LIBRARY",
    "COLLSHIM_TUNE_WIDEN",
    "COLLSHIM_LIBRARY",  // collshim-run: where libcollshim.so is
    "COLLSHIM_SKIP_DEPS",       "COLLSHIM_BUILD_DIR",        "COLLSHIM_BUILD_TARGET",
    "COLLSHIM_SMPI_BUILD_DIR",  "COLLSHIM_MPIEXEC",          "COLLSHIM_MPIEXEC_PREFLAGS",
    "COLLSHIM_MPIEXEC_ENVFLAG", "COLLSHIM_SANITIZER_PRELOAD"};

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::vector<std::string> unknown_variable_warnings(const std::vector<std::string>& names) {
  std::vector<std::string_view> known(known_variables.begin(), known_variables.end());
  for (const CollectiveInfo& info : collectives) known.emplace_back(info.forcing_variable);
  std::vector<std::string> warnings;
  for (const std::string& name : names) {
    if (!name.starts_with("COLLSHIM_") || std::find(known.begin(), known.end(), name) != known.end()) continue;
    const auto closest = std::min_element(known.begin(), known.end(), [&](std::string_view a, std::string_view b) {
      return edit_distance(name, a) < edit_distance(name, b);
    });
    warnings.push_back(name + " is not a variable collshim reads; it is ignored (did you mean " +
                       std::string(*closest) + "?)");
  }
  return warnings;
}

EnvironmentSettings read_process_environment() {
  EnvironmentSettings settings = read_environment([](const char* name) { return std::getenv(name); });
  std::vector<std::string> names;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    names.emplace_back(text.substr(0, text.find('=')));
  }
  for (std::string& warning : unknown_variable_warnings(names)) settings.warnings.push_back(std::move(warning));
  return settings;
}

}  // namespace collshim
