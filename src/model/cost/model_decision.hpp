#pragma once
// The cost model as a decision: for one call, every eligible candidate and the MPI library's own
// choice are costed on the communicator's real node map, and the fastest candidate is picked where it
// beats the library's choice by the margin; otherwise native. Where the model cannot cost the
// library's choice (an unknown library, a collective or algorithm whose native decision is not
// modelled) it never leaves native, and says why. Free of MPI: the shim (one rank computes, all
// agree), collshim-config explain and collshim-bench call it.
//
// Candidates with an opaque phase (hierarchical's inter=native, intra=shm) are costed by the
// messages their schedule models those phases with: such a prediction is approximated, and must beat
// native by twice the margin.
#include <functional>
#include <string>
#include <vector>

#include "algorithms/engine/algorithm_spec.hpp"
#include "model/cost/call_prediction.hpp"
#include "model/library/library_decisions.hpp"
#include "model/library/native_decision.hpp"
#include "model/platform/platform.hpp"

namespace collshim::model {

// What the library the job runs on would run for a call (native_decision.hpp's tables); empty
// stand-in with why_not where it is not modelled.
using LibraryDecision = std::function<NativeDecision(Collective collective, const LibraryFacts& facts)>;

// The facts a library's decision tests (library_decisions.hpp) for a call on a node map.
LibraryFacts library_facts(const ModelCall& call, const std::vector<int>& node_of_rank, bool commutative);

struct ModelSettings {
  Platform platform;
  std::string platform_file;  // as given (COLLSHIM_PLATFORM), for logs and rule evidence
  LibraryDecision library;    // empty: the library is not known; the model then leaves native
  std::string library_name;   // "Open MPI v4.1.4 (decisions ompi-4.1)", or why it is not known
  double margin = 0.10;       // a candidate must be this much faster than native: t·(1 + margin) ≤ native
};

struct CandidateCost {
  const AlgorithmChoice* choice = nullptr;
  double us = 0;
  bool approximated = false;
  double seconds = 0;  // processor time costing it took (bench/model/decision_cost)
};

struct ModelVerdict {
  std::vector<CandidateCost> ranked;  // the costed candidates, fastest first (native not among them)
  // Candidates shown to lose without costing them whole (model_decision): `us` is a lower bound of
  // their prediction, one they cannot win or rank with.
  std::vector<CandidateCost> pruned;
  // The library's choice; 0 where not costed. Where the pick did not need it exactly (a candidate
  // beats its lower bound by twice the margin), that bound, and native_at_least.
  double native_us = 0;
  bool native_at_least = false;
  double native_seconds = 0;              // processor time costing it took
  std::string native_algorithm;           // its name in the library ("recursive_doubling")
  const AlgorithmChoice* pick = nullptr;  // the decision: a candidate, or `native`
  // Where native could not be costed (unknown library, no stand-in): why, "" where it was. The
  // candidates are ranked all the same; the pick is native.
  std::string why_native;
};

// `candidates`: the eligible tuning candidates for the call (native among them or not; it is never
// costed as a candidate); `native`: the choice that passes through. Candidates whose schedules need
// MPI state (no make_schedule) are left out.
//
// The pick is that of costing every candidate, and so are the `ranked_exactly` (at least 1) fastest
// candidates at the front of `ranked`, with their predictions; candidates a lower bound shows to be
// neither are not costed whole (branch and bound): each candidate's bound from one rank's own work
// (algorithm_lower_bound_us) orders them, one above what it must beat is skipped, and costing stops
// once a candidate's prediction is certain to exceed it (predict's give_up_above_us). They are listed
// in `pruned` with their bound. Native is costed by the same search, only as far as the pick needs.
// SIZE_MAX costs every candidate and native whole. Where native cannot be costed,
// the pick is native and the candidates are ranked with no bound from native: confirmation (plan_key)
// may still leave native, on timed calls, never on the model's word alone.
ModelVerdict model_decision(const ModelSettings& settings, const ModelCall& call, const std::vector<int>& node_of_rank,
                            const std::vector<const AlgorithmChoice*>& candidates, const AlgorithmChoice* native,
                            bool commutative = true, std::size_t ranked_exactly = 1);

// "bruck:radix=8 238.1 us, native (ring) 1283.0 us, ...": the top `count` candidates and native (and
// how many were pruned).
std::string verdict_text(const ModelVerdict& verdict, std::size_t count = 3);

}  // namespace collshim::model
