#pragma once
// The per-job environment variables of README.md, read once at MPI_Init and validated there.
#include <array>
#include <charconv>
#include <cstdlib>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "algorithms/engine/collective.hpp"
#include "selector/mapping.hpp"
#include "selector/mpi_library.hpp"

namespace collshim {

enum class LogLevel { off, warn, info, debug, trace };

// COLLSHIM_TUNE: how keys that no forcing variable or rule decides are settled.
enum class TuneMode {
  unset,    // confirm with a platform description, otherwise off
  off,      // the model's pick alone (with a platform), otherwise native
  confirm,  // native and the model's three best run a few timed calls each; the fastest stays
  online,   // learn by trial: every candidate, or native and the model's best few with a platform
};

// Where the cost model's platform description comes from (resolve_platform).
enum class PlatformSource {
  none,          // COLLSHIM_PLATFORM unset and no site default: rules and native decide
  variable,      // COLLSHIM_PLATFORM=FILE
  switched_off,  // COLLSHIM_PLATFORM=none: no model for this job, whatever the site's default
  site_default,  // COLLSHIM_PLATFORM unset: the site default (site_platform_file), which exists
};

struct EnvironmentSettings {
  bool disabled = false;
  LogLevel log_level = LogLevel::off;
  // Raw text of each collective's forcing variable (COLLSHIM_ALLGATHER, ...), by Collective.
  std::array<std::optional<std::string>, collective_count> forced;
  std::optional<std::string> config;         // COLLSHIM_CONFIG: rule files separated by ':'
  std::optional<TopologyOverride> topology;  // COLLSHIM_TOPOLOGY
  std::optional<std::string> report;         // COLLSHIM_REPORT
  bool tune_online = false;                  // COLLSHIM_TUNE=online
  TuneMode tune = TuneMode::unset;           // COLLSHIM_TUNE
  std::optional<std::string> platform;       // COLLSHIM_PLATFORM, else the site default: the machine's description
  PlatformSource platform_source = PlatformSource::none;
  std::string site_platform;   // the site default looked for (empty: none was looked for)
  double model_margin = 0.10;  // COLLSHIM_MODEL_MARGIN: how much faster than native a model pick must be
  // COLLSHIM_TUNE_RECHECK: calls of a pick that left native before its second look against native
  // (TuningPolicy::recheck_after_calls; unset: the policy's default).
  std::optional<int> tune_recheck_calls;
  // COLLSHIM_TUNE_WIDEN: how many more of the model's ranked candidates a confirmation tries where its
  // measured times disagree with the predictions (TuningPolicy::widen_candidates; unset: its default).
  std::optional<int> tune_widen_candidates;
  // COLLSHIM_MPI_LIBRARY: the library the job runs on, as rules (`library`) and the cost model's native
  // decisions see it, overriding detection (mpi_library_from_name's forms; checked here).
  std::optional<std::string> mpi_library;
  // COLLSHIM_TUNE_EXCLUDE: candidates whose spec contains any of these (';'-separated) are never tried
  // by online tuning nor picked by the model (e.g. intra=shm under a simulator that times no copies).
  std::vector<std::string> tune_exclude;
  std::optional<std::string> tune_out;  // COLLSHIM_TUNE_OUT: where the learned rules go at MPI_Finalize
  bool allreduce_reorder = false;       // COLLSHIM_ALLREDUCE_REORDER=1: floating-point reductions may change order
  bool nonblocking_native = false;      // COLLSHIM_NONBLOCKING=native: nonblocking and persistent forms pass through
  bool progress_thread = false;         // COLLSHIM_PROGRESS_THREAD=1: a thread advances nonblocking collectives
  std::vector<std::string> errors;      // each names the variable and its value
  std::vector<std::string> warnings;

  // What settles a key no rule decides: the model with a platform, confirmed unless COLLSHIM_TUNE says.
  bool model_decides() const { return platform.has_value(); }
  bool confirms() const { return platform && (tune == TuneMode::unset || tune == TuneMode::confirm); }
};

// `lookup` returns the value of a variable or nullptr (std::getenv in production, a map in tests).
// `site_platform`: the site default platform description to use where COLLSHIM_PLATFORM is unset
// (site_platform_file() in production; empty: none).
template <typename Lookup>
EnvironmentSettings read_environment(Lookup lookup, const std::string& site_platform = {});
EnvironmentSettings read_process_environment();

// The site's default platform description: <prefix>/etc/collshim/platform.yaml, written by
// `collshim-tune calibrate --install`. <prefix> is where this code is installed: the library's or the
// tool's own directory less the install's lib/ or bin/ (so that a tree installed with `cmake --install
// --prefix DIR`, or moved, reads its own). Where that is the configured prefix, or the code does not
// run from an install (a build tree), it is CMAKE_INSTALL_FULL_SYSCONFDIR/collshim/platform.yaml
// (/usr/local/etc/..., /etc/... for the prefix /usr).
std::string site_platform_file();

// The one resolution of the platform description, for the shim and every tool: COLLSHIM_PLATFORM's
// value (`variable`, null when unset) names a file, or `none` (no cost model for this job); unset,
// the site default `site_platform` is used if that file exists. A missing site default is silently
// none; a broken one stops the job as a broken COLLSHIM_PLATFORM file does (load_model_settings).
void resolve_platform(EnvironmentSettings& settings, const char* variable, const std::string& site_platform);

// The platform a job started here would use, and nothing else of the environment: COLLSHIM_PLATFORM,
// else the site default (what the tools use where no --platform is given).
EnvironmentSettings read_process_platform();

// Which platform description a job uses and why, e.g. "/opt/c/etc/collshim/platform.yaml (the site
// default: COLLSHIM_PLATFORM is unset)" or "none (COLLSHIM_PLATFORM=none: ...)".
std::string platform_origin(const EnvironmentSettings& settings);

// Warnings for COLLSHIM_* variables among `names` that nothing reads (a typo such as
// COLLSHIM_ALLGATER would otherwise be ignored without a word), each naming the closest known
// variable. Warnings, not errors: a newer job script may set variables an older shim does not know.
std::vector<std::string> unknown_variable_warnings(const std::vector<std::string>& names);

// Parses one variable's value; exposed for tests.
std::optional<LogLevel> parse_log_level(const std::string& text);

}  // namespace collshim

#include "selector/environment_impl.hpp"
