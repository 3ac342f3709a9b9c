#include "model/platform/model_settings.hpp"

#include "model/library/library_decisions.hpp"

namespace collshim::model {

LibraryDecision library_decisions_for(const ProcessLibrary& process, const std::optional<std::string>& named,
                                      std::string& name) {
  const LibraryDecisions* tables = nullptr;
  if (named) {
    // A decisions table (or its short name) is taken as it is; a library as rules name it
    // ("ompi 4.1.6") gets the tables identification gives it (process.library is that library).
    tables = library_decisions(library_decisions_alias(*named));
    if (tables == nullptr) {
      const LibraryIdentity identity = library_tables(process.library, "");
      tables = identity.tables.empty() ? nullptr : library_decisions(identity.tables);
      if (tables == nullptr) {
        name = "COLLSHIM_MPI_LIBRARY=" + *named + " names no known library decisions (" + identity.why_none +
               "); expected one of " + alternatives_text(library_decisions_names());
        return {};
      }
    }
  } else {
    const LibraryIdentity identity = library_tables(process.library, process.version_text);
    tables = identity.tables.empty() ? nullptr : library_decisions(identity.tables);
    if (tables == nullptr) {
      name = identity.why_none.empty() ? process.first_line() + ": no decisions of this library are known"
                                       : identity.why_none;
      return {};
    }
  }
  name = process.first_line() + " (decisions " + tables->name() + ")";
  return [tables](Collective collective, const LibraryFacts& facts) {
    return native_decision(*tables, collective, facts);
  };
}

std::optional<ModelSettings> load_model_settings(const EnvironmentSettings& settings, const ProcessLibrary& library,
                                                 std::vector<std::string>& errors) {
  if (!settings.platform || settings.platform->empty()) return std::nullopt;
  ModelSettings model;
  try {
    model.platform = load_platform(*settings.platform);
  } catch (const PlatformError& e) {
    // Each problem names the file, line and column; a site default says what it is and how to run without it.
    const std::string origin = settings.platform_source == PlatformSource::site_default
                                   ? "the site default platform description (COLLSHIM_PLATFORM is unset; "
                                     "COLLSHIM_PLATFORM=none runs without it): "
                                   : "COLLSHIM_PLATFORM: ";
    for (const Diagnostic& problem : e.problems()) errors.push_back(origin + problem.text());
    return std::nullopt;
  }
  model.platform_file = *settings.platform;
  model.margin = settings.model_margin;
  model.library = library_decisions_for(library, settings.mpi_library, model.library_name);
  return model;
}

}  // namespace collshim::model
