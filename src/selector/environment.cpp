#include "selector/environment.hpp"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <string_view>

#include "selector/install_paths.hpp"

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
    "COLLSHIM_LIBRARY",  // collshim-run: where libcollshim.so is (the environment module sets it)
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

namespace fs = std::filesystem;

// The file this code was loaded from: libcollshim.so in a job (as LD_PRELOAD or the link named it),
// the tool itself otherwise (the main program's link map has no name).
fs::path own_object_file() {
  Dl_info info{};
  link_map* map = nullptr;
  std::error_code error;
  // Any object of this code's own file will do: the generated install paths are one.
  if (dladdr1(&install_paths::prefix, &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) != 0 && map != nullptr &&
      map->l_name != nullptr && map->l_name[0] != '\0')
    return fs::canonical(map->l_name, error);
  return fs::canonical("/proc/self/exe", error);
}

// `directory` less its trailing `tail` (the install's lib/ or bin/, relative), or empty.
fs::path strip_tail(const fs::path& directory, const fs::path& tail) {
  if (tail.empty() || tail.is_absolute()) return {};
  std::vector<fs::path> parts(tail.begin(), tail.end());
  fs::path rest = directory;
  for (auto part = parts.rbegin(); part != parts.rend(); ++part) {
    if (rest.filename() != *part) return {};
    rest = rest.parent_path();
  }
  return rest;
}

}  // namespace

std::string site_platform_file() {
  const fs::path configured = fs::path(install_paths::full_sysconfdir) / "collshim" / "platform.yaml";
  const fs::path directory = own_object_file().parent_path();
  for (const char* installed : {install_paths::libdir, install_paths::bindir}) {
    const fs::path prefix = strip_tail(directory, installed);
    if (prefix.empty()) continue;
    std::error_code error;
    // Installed where configured: GNUInstallDirs' configuration directory (/etc for /usr).
    if (fs::equivalent(prefix, install_paths::prefix, error)) break;
    const fs::path sysconfdir = install_paths::sysconfdir;
    return ((sysconfdir.is_absolute() ? sysconfdir : prefix / sysconfdir) / "collshim" / "platform.yaml").string();
  }
  return configured.string();
}

void resolve_platform(EnvironmentSettings& settings, const char* variable, const std::string& site_platform) {
  settings.site_platform = site_platform;
  if (variable != nullptr && std::string_view(variable) == "none") {
    settings.platform_source = PlatformSource::switched_off;
    return;
  }
  if (variable != nullptr) {
    settings.platform = variable;
    settings.platform_source = PlatformSource::variable;
    if (settings.platform->empty())
      settings.errors.push_back(
          "COLLSHIM_PLATFORM is empty: expected the path of a platform description (YAML, "
          "written by collshim-tune calibrate), or none (no cost model)");
    return;
  }
  std::error_code error;  // a directory that cannot be searched: no site default
  if (!site_platform.empty() && fs::exists(site_platform, error)) {
    settings.platform = site_platform;
    settings.platform_source = PlatformSource::site_default;
  }
}

EnvironmentSettings read_process_platform() {
  EnvironmentSettings settings;
  resolve_platform(settings, std::getenv("COLLSHIM_PLATFORM"), site_platform_file());
  return settings;
}

std::string platform_origin(const EnvironmentSettings& settings) {
  const std::string& site = settings.site_platform;
  switch (settings.platform_source) {
    case PlatformSource::variable: return *settings.platform + " (COLLSHIM_PLATFORM)";
    case PlatformSource::site_default: return *settings.platform + " (the site default: COLLSHIM_PLATFORM is unset)";
    case PlatformSource::switched_off: {
      std::error_code error;
      const bool site_exists = !site.empty() && fs::exists(site, error);
      return "none (COLLSHIM_PLATFORM=none: the cost model is off for this job" +
             (site_exists ? "; the site default " + site + " is not read" : std::string()) + ")";
    }
    case PlatformSource::none: break;
  }
  return site.empty() ? "none (COLLSHIM_PLATFORM is unset)"
                      : "none (COLLSHIM_PLATFORM is unset and there is no site default at " + site + ")";
}

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
  EnvironmentSettings settings =
      read_environment([](const char* name) { return std::getenv(name); }, site_platform_file());
  std::vector<std::string> names;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    names.emplace_back(text.substr(0, text.find('=')));
  }
  for (std::string& warning : unknown_variable_warnings(names)) settings.warnings.push_back(std::move(warning));
  return settings;
}

}  // namespace collshim
