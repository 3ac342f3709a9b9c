#pragma once
// One call's predictions: what a collshim algorithm and the MPI library's own decision (through its
// stand-in, native_decision.hpp) cost on a node map, for the data the call moves. The one place that
// turns a call into the cost model's inputs: collshim-model, collshim-config explain, collshim-bench
// and the shim's model step all cost through it.
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/engine/algorithm_spec.hpp"
#include "algorithms/engine/schedule_check.hpp"
#include "model/cost/alltoall_profiles.hpp"
#include "model/cost/cost_model.hpp"
#include "model/library/native_decision.hpp"

namespace collshim::model {

// The data of one call, as the model costs it.
struct ModelCall {
  Collective collective = Collective::allgather;
  int p = 1;
  // The allgathers' block per rank, Alltoall(v)'s block per pair, Allreduce's vector.
  long long bytes = 0;
  // Allgatherv with blocks of different sizes: every rank's block (p entries); empty: all `bytes`.
  std::vector<long long> block_bytes;
  // Alltoallv with an irregular pattern: per origin its non-empty blocks; uniform: every pair `bytes`.
  AlltoallBlocks pairs;
  // Allreduce: the vector is cut into p segments of whole elements of this size.
  long long element_bytes = 8;
  // What a library's decision may also test: MPI_IN_PLACE, a predefined operation.
  bool in_place = false;
  bool builtin_op = true;
  // How it is costed: beyond this many ranks, where the data has one size, by a sample of ranks
  // under an assumed rotation where the exact symmetry leaves more to cost (CostPlan::sampled_ranks).
  int exact_up_to_p = 4096;

  // Whether every datum has one size (what a rank symmetry needs).
  bool one_size() const;
};

// What the checker and the model see of the call: its block naming, p and every datum's bytes.
CheckSetup model_setup(const ModelCall& call);

struct CallPrediction {
  Prediction prediction;
  // Where the prediction is not of this exact call: an Allreduce vector that does not split into p
  // equal segments, costed at large p as the next one that does (also marks it approximated).
  std::string note;
};

// A collshim algorithm's prediction. The choice must build its schedule from the node map alone
// (Algorithm::make_schedule). `start_us`: each rank's start (empty: all at 0).
CallPrediction predict_algorithm(const Platform& platform, const ModelCall& call, const std::vector<int>& node_of_rank,
                                 const AlgorithmChoice& choice, const std::vector<double>& start_us = {});

// What the model costs for a call (predict_algorithm, predict_library): the call, or where an
// Allreduce vector breaks the rank symmetry at large p, the next one that splits evenly (rounded,
// with a note), and the symmetry that applies.
struct CostPlan {
  CheckSetup setup;
  RankSymmetry symmetry;
  bool rounded = false;
  bool approximated = false;  // rounded, or another approximation the note names
  std::string note;
  // predict()'s sampled_ranks: beyond ModelCall::exact_up_to_p, where every datum has one size (or the
  // vector is rounded), the ranks costed at most, about, by an assumed rotation; 0: exact.
  int sampled_ranks = 0;
};
CostPlan plan_cost(const ModelCall& call, bool every_size_known, const std::function<Schedule(int)>& schedule_of,
                   const RankSymmetry& symmetry, const std::string& label);

struct CostInputs;

// predict_algorithm's prediction (all ranks starting together), a few steps at a time, for a
// decision that stops costing an algorithm once it is certain to lose (model_decision). Construction
// builds rank 0's schedule only, for a first lower bound (rank_work_lower_bound_us); the first
// advance() takes every representative's profile. Keeps references to its arguments.
class AlgorithmCosting {
 public:
  AlgorithmCosting(const Platform& platform, const ModelCall& call, const std::vector<int>& node_of_rank,
                   const AlgorithmChoice& choice);
  // The same for the library's decision, by its stand-in (predict_library's prediction); nothing
  // where it has none.
  static std::optional<AlgorithmCosting> of_library(const Platform& platform, const ModelCall& call,
                                                    const std::vector<int>& node_of_rank,
                                                    const NativeDecision& decision);
  AlgorithmCosting(AlgorithmCosting&&) noexcept;
  ~AlgorithmCosting();

  // A lower bound of the prediction: rank 0's own work, then also the longest any rank has spent.
  double lower_bound_us() const;
  // Costs on until done (true) or until the prediction is certain to exceed `give_up_above_us`.
  bool advance(double give_up_above_us);
  // Once done, predict_algorithm's; before, a lower bound (Prediction::lower_bound).
  CallPrediction prediction() const;

 private:
  // `call` is the call costed: the caller's, or `owned` (which the inputs' closures refer to).
  AlgorithmCosting(const Platform& platform, const ModelCall& call, std::unique_ptr<ModelCall> owned,
                   const std::vector<int>& node_of_rank, CostInputs inputs);

  const Platform& platform_;
  std::unique_ptr<ModelCall> owned_call_;  // a stand-in's call where it is not the caller's (library_call)
  const std::vector<int>& node_of_rank_;
  std::unique_ptr<CostInputs> inputs_;  // on the heap: the closures in it outlive moves
  CostPlan plan_;
  double bound_us_ = 0;
  // Rank 0's schedule, built for the bound, kept for the first advance() (which needs its profile).
  std::optional<Schedule> rank_0_;
  std::optional<SteppedPrediction> stepped_;
};

// The library's decision, costed by its stand-in (nothing where it has none: decision.stand_in empty).
// The library knows every block's size, so its forwarded blocks carry no size headers.
std::optional<CallPrediction> predict_library(const Platform& platform, const ModelCall& call,
                                              const std::vector<int>& node_of_rank, const NativeDecision& decision,
                                              const std::vector<double>& start_us = {});

}  // namespace collshim::model
