#pragma once
// The per-job environment variables of DESIGN.md, read once at MPI_Init and validated there.
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/collective.hpp"
#include "selector/mapping.hpp"

namespace collshim {

enum class LogLevel { off, warn, info, debug, trace };

struct EnvironmentSettings {
  bool disabled = false;
  LogLevel log_level = LogLevel::off;
  // Raw text of each collective's forcing variable (COLLSHIM_ALLGATHER, ...), by Collective.
  std::array<std::optional<std::string>, collective_count> forced;
  std::optional<std::string> config;             // COLLSHIM_CONFIG: rule files separated by ':'
  std::optional<TopologyOverride> topology;      // COLLSHIM_TOPOLOGY
  std::optional<std::string> report;             // COLLSHIM_REPORT
  bool tune_online = false;                  // COLLSHIM_TUNE=online
  std::optional<std::string> tune_out;       // COLLSHIM_TUNE_OUT: where the learned rules go at MPI_Finalize
  bool allreduce_reorder = false;  // COLLSHIM_ALLREDUCE_REORDER=1: floating-point reductions may change order
  std::vector<std::string> errors;  // each names the variable and its value
};

// `lookup` returns the value of a variable or nullptr (std::getenv in production, a map in tests).
template <typename Lookup>
EnvironmentSettings read_environment(Lookup lookup);
EnvironmentSettings read_process_environment();

// Parses one variable's value; exposed for tests.
std::optional<LogLevel> parse_log_level(const std::string& text);

}  // namespace collshim

#include "selector/environment_impl.hpp"
