#include "model/model_settings.hpp"

#include "model/library_decisions.hpp"

#include <mpi.h>
#ifdef COLLSHIM_SMPI
#include <xbt/config.hpp>
#endif

#include <algorithm>

namespace collshim::model {

std::string mpi_library_version_line() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  PMPI_Get_library_version(version, &length);
  // Open MPI counts the terminating NUL in `length`.
  return std::string(version, std::find_if(version, version + length, [](char c) { return c == '\n' || c == '\0'; }));
}

LibraryDecision library_decisions_for(const std::string& version_text, const std::string& smpi_selector,
                                      const std::optional<std::string>& named, std::string& name) {
  const LibraryDecisions* tables = nullptr;
  if (named) {
    tables = library_decisions(library_decisions_alias(*named));
    if (tables == nullptr) {
      name = "COLLSHIM_MPI_LIBRARY=" + *named + " names no known library decisions; expected one of " +
             alternatives_text(library_decisions_names());
      return {};
    }
  } else {
    const LibraryIdentity identity = identify_library(version_text, smpi_selector);
    tables = identity.tables.empty() ? nullptr : library_decisions(identity.tables);
    if (tables == nullptr) {
      name = identity.why_none.empty() ? version_text + ": no decisions of this library are known" : identity.why_none;
      return {};
    }
  }
  name = version_text + " (decisions " + tables->name() + ")";
  return [tables](Collective collective, const LibraryFacts& facts) { return native_decision(*tables, collective, facts); };
}

std::optional<ModelSettings> load_model_settings(const EnvironmentSettings& settings, std::vector<std::string>& errors) {
  if (!settings.platform || settings.platform->empty()) return std::nullopt;
  ModelSettings model;
  try {
    model.platform = load_platform(*settings.platform);
  } catch (const PlatformError& e) {
    errors.push_back(std::string("COLLSHIM_PLATFORM: ") + e.what());
    return std::nullopt;
  }
  model.platform_file = *settings.platform;
  model.margin = settings.model_margin;
  std::string selector;
#ifdef COLLSHIM_SMPI
  selector = simgrid::config::get_value<std::string>("smpi/coll-selector");
#endif
  model.library = library_decisions_for(mpi_library_version_line(), selector, settings.mpi_library, model.library_name);
  return model;
}

}  // namespace collshim::model
