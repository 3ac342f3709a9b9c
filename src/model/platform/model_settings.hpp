#pragma once
// The cost model's settings of a job: COLLSHIM_PLATFORM's description, the margin, and the decisions
// of the MPI library the job runs on, identified from MPI_Get_library_version (under SimGrid SMPI,
// from its smpi/coll-selector) unless COLLSHIM_MPI_LIBRARY names them (ProcessLibrary, read once).
#include <optional>
#include <string>
#include <vector>

#include "model/cost/model_decision.hpp"
#include "selector/environment.hpp"
#include "selector/mpi_library.hpp"

namespace collshim::model {

// Null without a platform (COLLSHIM_PLATFORM unset or none, and no site default: resolve_platform).
// A description that cannot be used adds an error naming its file, line and column (and a site
// default as such); an unknown library is no error (the model then leaves native and says why).
std::optional<ModelSettings> load_model_settings(const EnvironmentSettings& settings, const ProcessLibrary& library,
                                                 std::vector<std::string>& errors);

// The library decisions of the process's library (or of `named`, COLLSHIM_MPI_LIBRARY: a decisions
// table or a library as rules name it), or none with why in `name`.
LibraryDecision library_decisions_for(const ProcessLibrary& process, const std::optional<std::string>& named,
                                      std::string& name);

}  // namespace collshim::model
