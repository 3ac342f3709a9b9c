#pragma once
// The algorithms tuning tries for a collective: every schedule algorithm of it with the parameter
// variants that change its traffic, and native first. One list for `collshim-tune measure` and the
// online tuner, so that what is measured offline and what is tried in a job are the same.
#include <string>
#include <vector>

#include "algorithms/engine/collective.hpp"

namespace collshim {

// Canonical specs (AlgorithmChoice::text()), "native" first, in registry order. Eligibility for a
// process count is not applied: an ineligible candidate runs its fallback, which the caller may skip.
std::vector<std::string> tuning_candidates(Collective collective);

}  // namespace collshim
