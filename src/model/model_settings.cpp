#include "model/model_settings.hpp"

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
  const std::string wanted = named ? *named : version_text.starts_with("SMPI") ? smpi_selector : "";
  const std::optional<NativeLibrary> library = parse_native_library(wanted);
  if (!library) {
    name = named ? "COLLSHIM_MPI_LIBRARY=" + *named + " names no known library decisions"
                 : version_text + ": no decisions of this library are known";
    return {};
  }
  name = version_text + " (decisions " + std::string(native_library_name(*library)) + ")";
  return [library = *library](Collective collective, int p, long long bytes, const LibraryPlacement& placement,
                              bool commutative) {
    if (!commutative && collective == Collective::allreduce)
      return NativeDecision{"", collective, "", "the library's decision for a non-commutative operation is not modelled"};
    return native_decision(library, collective, p, bytes, placement);
  };
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
