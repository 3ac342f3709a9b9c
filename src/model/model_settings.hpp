#pragma once
// The cost model's settings of a job: COLLSHIM_PLATFORM's description, the margin, and the decisions
// of the MPI library the job runs on, identified from MPI_Get_library_version (under SimGrid SMPI,
// from its smpi/coll-selector) unless COLLSHIM_MPI_LIBRARY names them.
#include <optional>
#include <string>
#include <vector>

#include "model/model_decision.hpp"
#include "selector/environment.hpp"

namespace collshim::model {

// Null without COLLSHIM_PLATFORM. A description that cannot be used adds an error naming its file,
// line and column; an unknown library is no error (the model then leaves native and says why).
// Needs MPI only for MPI_Get_library_version, which MPI allows before MPI_Init.
std::optional<ModelSettings> load_model_settings(const EnvironmentSettings& settings, std::vector<std::string>& errors);

// The library decisions for a version text (and SMPI's selector), or none with why in `name`.
LibraryDecision library_decisions_for(const std::string& version_text, const std::string& smpi_selector,
                                      const std::optional<std::string>& named, std::string& name);

// The first line of MPI_Get_library_version.
std::string mpi_library_version_line();

}  // namespace collshim::model
