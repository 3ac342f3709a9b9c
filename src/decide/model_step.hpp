#pragma once
// The cost model's step of a decision (decision_policy.hpp): the data the ranks hold together (an
// Alltoallv's pattern), the verdict agreed by all ranks, and what the key's session then tries.
//
// The model's decision made once per communicator and key: one rank costs the candidates and one
// broadcast on the shadow communicator gives every rank the same verdict, so that all run the same
// algorithm (the ranks' own predictions could differ only if their inputs did, but p ranks costing
// the same call would also take p times the CPU). A failure of the model on the costing rank becomes
// a verdict of native with the reason, never an exception on one rank and a hang on the others.
#include <deque>
#include <functional>

#include "decide/collective_steps.hpp"
#include "decide/online_tuning.hpp"
#include "model/cost/alltoall_summary.hpp"
#include "model/cost/model_decision.hpp"
#include "selector/selector.hpp"

namespace collshim::model {

// Collective over `steps`: rank 0 calls `compute`; every rank returns its verdict, with the choices
// mapped to the entries of `choices` (the same table on every rank, as the selector interns it) and
// the ranked list cut to its first few.
ModelVerdict agree_on_verdict(CollectiveSteps& steps, const std::function<ModelVerdict()>& compute,
                              const std::deque<AlgorithmChoice>& choices, const AlgorithmChoice* native);

// An Alltoallv's pattern, on rank 0 of `steps` (collective): every rank's summary of its counts
// (alltoall_summary.hpp: summary_fields values, 64 bytes) gathered in one MPI_Gather, and the pattern
// the model costs rebuilt from them on rank 0. Elsewhere uniform (every pair holding
// `average_bytes`). `sent_bytes`, `received_bytes`: this rank's bytes to each destination and from
// each source (p each). Beyond max_summarized_procs ranks nothing is gathered: the pattern stays
// uniform (alltoall_summary.hpp says why).
AlltoallBlocks gather_alltoall_pattern(CollectiveSteps& steps, const std::vector<long long>& sent_bytes,
                                       const std::vector<long long>& received_bytes,
                                       const std::vector<int>& node_of_rank, long long average_bytes);

// What a key's session tries once the model has spoken, by COLLSHIM_TUNE:
//   off      its pick alone;
//   confirm  native and its three best (confirm_model_candidates; its pick first where it leaves
//            native), also where it keeps native;
//   online   native and its best few (online_model_candidates), in predicted order.
// Where the model could not cost native (unknown library, no stand-in) but ranked the candidates,
// confirm and online try the same: leaving native then rests on timed calls, never on the model's
// word (off keeps native). With nothing ranked: native, or with online tuning every candidate.
//
// Why more than the pick, and why also where it keeps native: the model ranks well, but its error
// between close candidates is often larger than their difference (an opaque phase is approximated,
// small messages are latency-bound), and a library's choice it predicts fast can be several times
// slower than measured. A few trial calls of three candidates cost little beside online tuning's every
// candidate, and a hopeless one is dropped after its first timed call. Three, not two: replayed on the
// simulated evidence, the third best was the fastest often enough on a blocking network to matter
// (oversub-contending: 66% of cells within 5% of the oracle with two, 82% with three; docs/results.md).
//
// Under confirm, `widen` more of the ranked candidates (beyond the trial, in predicted order) are kept
// for a widened trial (check_predictions below), with every trial candidate's prediction.
struct KeyPlan {
  std::vector<const AlgorithmChoice*> trial;  // native first where there is a choice to confirm
  KeySource source = KeySource::model;
  ModelEvidence evidence;
  std::vector<double> predicted_us;  // per trial candidate; 0 where not costed exactly
  std::vector<const AlgorithmChoice*> widen_to;
  std::vector<double> widen_to_us;
};
inline constexpr std::size_t confirm_model_candidates = 3;
inline constexpr std::size_t online_model_candidates = 5;
KeyPlan plan_key(const Selector& selector, const ModelVerdict& verdict,
                 const std::vector<const AlgorithmChoice*>& candidates, std::size_t widen = 0);

// How many of the fastest candidates model_decision must cost whole for plan_key under `mode`, with
// `widen` more for a widened confirmation (ranked exactly up front: the branch and bound costs a few
// more candidates whole, where rerunning it at the trial's end would be a second collective step).
std::size_t candidates_to_rank(TuneMode mode, std::size_t widen = 0);

// When the description is wrong (docs/cost-model.md): a confirmation's measured times against the
// model's predictions. Each candidate timed with an exact prediction has a ratio measured /
// predicted. A description that is off by a common factor (a slower machine, every call's first
// calls slow) moves every ratio alike and leaves the ranking right; ratios far apart mean the model
// ranked these candidates wrongly, so it may have ranked the untried ones wrongly too (a link the
// calibration never crossed). The model's own error against SMPI, with a description it was
// validated on, is at most 1.17 per prediction outside its known structural misses (Allgather at
// p = 256 and 512, docs/results.md, "The cost model against SMPI"): two predictions within it can
// have ratios up to 1.17² ≈ 1.37 apart, so a wider spread is disagreement beyond its error.
inline constexpr double largest_validated_error = 1.17;
inline constexpr double widen_ratio_spread = largest_validated_error * largest_validated_error;
struct PredictionCheck {
  bool disagrees = false;          // highest / lowest > widen_ratio_spread
  double lowest = 0, highest = 0;  // measured / predicted ratios (0: fewer than two to compare)
  std::string ratios;              // "native 1.02, bruck 1.71, ..." for logs
};
// `measured` as TuningSession::measured() gives them, `predicted_us` in the same order (0: none).
PredictionCheck check_predictions(const std::vector<TuningSession::Measured>& measured,
                                  const std::vector<double>& predicted_us);

// True when nothing but native may run for these candidates (nothing to cost, e.g. floating-point
// sums without reordering).
bool nothing_to_cost(const std::vector<const AlgorithmChoice*>& candidates, const AlgorithmChoice* native);

}  // namespace collshim::model
