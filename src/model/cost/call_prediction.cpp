#include "model/cost/call_prediction.hpp"

#include <algorithm>
#include <limits>
#include <memory>
#include <numeric>
#include <stdexcept>

#include "algorithms/engine/call_layout.hpp"
#include "algorithms/engine/registry.hpp"
#include "model/cost/rank_orbits.hpp"

namespace collshim::model {
namespace {

BlockNaming naming_of(Collective collective) {
  switch (collective_info(collective).shape) {
    case CallShape::allgather_like: return BlockNaming::allgather;
    case CallShape::alltoallv_like: return BlockNaming::alltoall;
    case CallShape::reduction: return BlockNaming::reduction;
    case CallShape::rooted: break;
  }
  return BlockNaming::gather;
}

// Beyond this many rank-steps, an Allreduce vector that breaks the rank symmetry is costed as the
// next one that splits evenly: costing every rank of the ring's 2(p - 1) steps is O(p²), about
// 0.6 us per rank-step (1.2 s for an 8 B vector at p = 1024, 116 s at p = 16384). 2^17 keeps the
// ring exact up to p = 256 and a key's decision near 0.05 s at p = 1024.
constexpr long long exact_rank_steps = 1LL << 17;

// Beyond ModelCall::exact_up_to_p, an algorithm whose exact symmetry leaves more ranks than this to
// cost is costed by a sample of about this many (whole nodes where they are sequential) under an
// assumed rotation (predict's sampled_ranks): at p = 16384 a grid with holes, costed for every rank,
// took 0.2-0.7 s of a key's decision (docs/cost-model.md, "The cost of deciding").
constexpr int sampled_ranks = 256;

// Whether `blocks` hold no segment or every segment of the vector once (block b holds segment b mod
// p: each temp copy numbers its segments from c·p).
bool none_or_all(const BlockList& blocks, int p) {
  if (blocks.empty()) return true;
  if (blocks.size() != static_cast<std::size_t>(p)) return false;
  const std::vector<BlockList::Run>& runs = blocks.runs();
  if (runs.size() == 1) return true;  // p consecutive blocks: every residue once
  std::vector<bool> seen(static_cast<std::size_t>(p), false);
  for (const std::int64_t block : blocks) {
    if (seen[static_cast<std::size_t>(block % p)]) return false;
    seen[static_cast<std::size_t>(block % p)] = true;
  }
  return true;  // p blocks, no segment twice
}

// Whether every message, copy and reduction of the schedules holds the whole vector or nothing, so
// that every rank moves the same bytes however the vector splits into segments (recursive doubling
// and multiplying): then the symmetry holds for any vector. Checked on one rank per orbit of the
// declared symmetry (on one node, where every relabeling applies): the others are theirs relabeled,
// with as many blocks per message (the unit tests check each declaration rank by rank), and p blocks
// are all of them.
bool moves_whole_vectors(int p, const RankSymmetry& symmetry, const std::function<Schedule(int)>& schedule_of) {
  const RankOrbits orbits(symmetry, std::vector<int>(static_cast<std::size_t>(p), 0));
  if (orbits.kind() == RankSymmetry::Kind::none) return false;
  for (int orbit = 0; orbit < orbits.representatives(); ++orbit) {
    for (const Step& step : schedule_of(orbits.representative_rank(orbit)).steps) {
      for (const auto& transfers : {&step.sends, &step.recvs})
        for (const Transfer& transfer : *transfers)
          if (!none_or_all(transfer.region.blocks, p)) return false;
      for (const LocalCopy& copy : step.copies)
        if (!none_or_all(copy.from.blocks, p) || !none_or_all(copy.to.blocks, p)) return false;
      for (const LocalReduce& reduce : step.reductions)
        if (!none_or_all(reduce.from.blocks, p) || !none_or_all(reduce.into.blocks, p)) return false;
    }
  }
  return true;
}

}  // namespace

// What cost() costs for `call`: the call, with the rank symmetry where every datum has one size. An
// Allreduce vector that does not split into p equal segments breaks the symmetry, unless every
// message holds the whole vector; beyond a few million rank-steps it is costed as the next vector
// that does, and marked approximated.
CostPlan plan_cost(const ModelCall& call, bool every_size_known, const std::function<Schedule(int)>& schedule_of,
                   const RankSymmetry& symmetry, const std::string& label) {
  const int p = call.p;
  const bool reduction = collective_info(call.collective).shape == CallShape::reduction;
  const bool one_size = call.one_size() || (reduction && symmetry.kind != RankSymmetry::Kind::none &&
                                            moves_whole_vectors(p, symmetry, schedule_of));
  CostPlan plan;
  plan.rounded = reduction && !one_size && symmetry.kind != RankSymmetry::Kind::none &&
                 static_cast<long long>(schedule_of(0).steps.size()) * p > exact_rank_steps;
  ModelCall costed = call;
  if (plan.rounded) {
    const long long element = std::max<long long>(1, call.element_bytes);
    const long long elements = call.bytes / element, even_elements = (elements + p - 1) / p * p;
    costed.bytes = even_elements * element;
    plan.note = label + " at p = " + std::to_string(p) + ": a vector of " + std::to_string(elements) +
                " elements is costed as " + std::to_string(even_elements) + " (p equal segments), approximated";
  }
  plan.approximated = plan.rounded;
  plan.setup = model_setup(costed);
  plan.setup.every_size_known = every_size_known;
  plan.symmetry = one_size || plan.rounded ? symmetry : RankSymmetry{};
  // An Allreduce vector of uneven segments (at most one element apart) is sampled too; an irregular
  // Alltoallv or Allgatherv is not.
  if ((one_size || reduction) && p > call.exact_up_to_p) plan.sampled_ranks = sampled_ranks;
  return plan;
}

// What the model costs for one algorithm or stand-in: its schedules, the rank symmetry they have,
// and where counts give the profiles faster (Alltoall(v)), that form.
struct CostInputs {
  std::function<Schedule(int)> schedule_of;
  RankSymmetry symmetry;
  ProfilesOf counted;
  bool every_size_known = false;  // the library knows every block's size: no size headers
  bool sends_empty_messages = false;
  std::string label;
  std::string approximation;  // where this is not the algorithm's own cost: how (and approximated)
};

namespace {

// Where the prediction was costed by a sample of ranks, the note says so.
void add_sample_note(CallPrediction& result, const std::string& label, int p) {
  if (!result.prediction.sampled) return;
  result.note += (result.note.empty() ? "" : "; ") + label + " at p = " + std::to_string(p) + ": costed by " +
                 std::to_string(result.prediction.ranks_costed) + " ranks under an assumed rotation, approximated";
}

CostPlan plan_inputs(const ModelCall& call, const CostInputs& inputs) {
  CostPlan plan = plan_cost(call, inputs.every_size_known, inputs.schedule_of, inputs.symmetry, inputs.label);
  plan.setup.sends_empty_messages = inputs.sends_empty_messages;
  if (!inputs.approximation.empty()) {
    plan.note += (plan.note.empty() ? "" : "; ") + inputs.approximation;
    plan.approximated = true;
  }
  return plan;
}

CallPrediction cost(const Platform& platform, const ModelCall& call, const std::vector<int>& node_of_rank,
                    const CostInputs& inputs, const std::vector<double>& start_us) {
  const CostPlan plan = plan_inputs(call, inputs);
  CallPrediction result{predict(
                            platform, plan.setup, node_of_rank,
                            [&](int rank) { return rank_profile(plan.setup, rank, inputs.schedule_of(rank)); },
                            start_us, plan.symmetry, inputs.counted, plan.sampled_ranks),
                        plan.note};
  result.prediction.approximated = result.prediction.approximated || plan.approximated;
  add_sample_note(result, inputs.label, call.p);
  return result;
}

}  // namespace

bool ModelCall::one_size() const {
  if (!pairs.uniform()) return false;
  if (!block_bytes.empty())
    return std::all_of(block_bytes.begin(), block_bytes.end(), [&](long long b) { return b == block_bytes.front(); });
  if (collective_info(collective).shape == CallShape::reduction)
    return element_bytes > 0 && bytes / element_bytes % p == 0;
  return true;
}

CheckSetup model_setup(const ModelCall& call) {
  const BlockNaming naming = naming_of(call.collective);
  const int p = call.p;
  if (naming == BlockNaming::reduction) {
    const long long element = std::max<long long>(1, call.element_bytes);
    const long long elements = call.bytes / element;
    CheckSetup setup{naming, p, [elements, p, element](std::int64_t segment) {
                       return element * segment_elements(elements, p, static_cast<int>(segment));
                     }};
    setup.datum_run_bytes = [elements, p, element](std::int64_t first, std::int64_t count) {
      return element * segments_elements(elements, p, first, count);
    };
    return setup;
  }
  if (!call.block_bytes.empty()) {
    auto prefix = std::make_shared<std::vector<long long>>(call.block_bytes.size() + 1, 0);
    std::partial_sum(call.block_bytes.begin(), call.block_bytes.end(), prefix->begin() + 1);
    CheckSetup setup{naming, p, [prefix](std::int64_t datum) {
                       return (*prefix)[static_cast<std::size_t>(datum) + 1] -
                              (*prefix)[static_cast<std::size_t>(datum)];
                     }};
    setup.datum_run_bytes = [prefix](std::int64_t first, std::int64_t count) {
      return (*prefix)[static_cast<std::size_t>(first + count)] - (*prefix)[static_cast<std::size_t>(first)];
    };
    return setup;
  }
  if (!call.pairs.uniform()) {
    auto pairs = std::make_shared<AlltoallBlocks>(call.pairs);
    return {naming, p, [pairs, p](std::int64_t datum) {
              return pairs->bytes(static_cast<int>(datum / p), static_cast<int>(datum % p));
            }};
  }
  return uniform_setup(naming, p, call.bytes);
}

namespace {

// The closures below keep their own copy of the choice: a stand-in's uniform equivalent is parsed on
// the spot (library_inputs).
std::function<Schedule(int)> algorithm_schedules(const AlgorithmChoice& choice, const std::vector<int>& node_of_rank) {
  return [choice, &node_of_rank](int rank) { return generate_schedule(choice, node_of_rank, rank); };
}

// A call's Alltoall blocks: the uniform size, or each pair's.
AlltoallBlocks blocks_of(const ModelCall& call) {
  return call.pairs.uniform() ? AlltoallBlocks{call.bytes, {}} : call.pairs;
}

// A forwarding Alltoall's schedules list every block they move: their profiles come from counts.
ProfilesOf counted_profiles(const ModelCall& call, const std::vector<int>& node_of_rank,
                            const AlgorithmChoice& choice) {
  if (naming_of(call.collective) != BlockNaming::alltoall) return {};
  return [&call, &node_of_rank, choice](const std::vector<int>& ranks) {
    return counted_alltoall_profiles(choice, node_of_rank, blocks_of(call), false, ranks);
  };
}

CostInputs algorithm_inputs(const ModelCall& call, const std::vector<int>& node_of_rank,
                            const AlgorithmChoice& choice) {
  return {algorithm_schedules(choice, node_of_rank),
          rank_symmetry(choice, node_of_rank),
          counted_profiles(call, node_of_rank, choice),
          false,
          false,
          choice.text()};
}

// The call a library's stand-in costs: the call's own blocks where it is a schedule of the call's
// kind; otherwise (another collective's schedule with the same messages, or whole send buffers as
// blocks) blocks of the call's size, or of p of them.
ModelCall library_call(const ModelCall& call, const NativeDecision& decision) {
  if (decision.whole_buffers || naming_of(decision.costed_as) != naming_of(call.collective)) {
    ModelCall costed{decision.costed_as, call.p, decision.whole_buffers ? call.bytes * call.p : call.bytes};
    costed.element_bytes = call.element_bytes;
    costed.exact_up_to_p = call.exact_up_to_p;
    return costed;
  }
  ModelCall costed = call;
  costed.collective = decision.costed_as;
  return costed;
}

// Beyond this many messages, a library's direct exchange with no rank symmetry over blocks of one
// size is costed as its uniform equivalent (NativeStandIn): costing each of p² messages took
// 0.05-0.2 s at p = 1024 and 25-105 s at p = 16384. 2^19 keeps it exact up to p = 724.
constexpr long long exact_direct_messages = 1LL << 19;

// The stand-in's inputs for `costed` (library_call's), which they keep a reference to.
CostInputs library_inputs(const ModelCall& costed, const std::vector<int>& node_of_rank,
                          const NativeDecision& decision) {
  NativeStandIn stand_in = native_stand_in(decision, node_of_rank);
  const long long p = costed.p;
  if (!stand_in.uniform_equivalent.empty() && costed.one_size() && p * p > exact_direct_messages) {
    const SpecParseResult parsed = parse_algorithm_spec(std::string(stand_in.uniform_equivalent), costed.collective);
    if (!parsed.choice) throw std::logic_error("uniform equivalent of '" + decision.stand_in + "': " + parsed.error);
    CostInputs inputs = algorithm_inputs(costed, node_of_rank, *parsed.choice);
    inputs.every_size_known = true;
    inputs.sends_empty_messages = decision.sends_empty_messages;
    inputs.label = decision.stand_in;
    inputs.approximation = decision.stand_in + " at p = " + std::to_string(p) + ": costed as " + parsed.choice->text() +
                           " (the same messages in another order, with a rank symmetry), approximated";
    return inputs;
  }
  ProfilesOf counted;
  if (naming_of(costed.collective) == BlockNaming::alltoall && stand_in.counted) {
    counted = [&costed, profiles = std::move(stand_in.counted)](const std::vector<int>& ranks) {
      return profiles(blocks_of(costed), ranks);
    };
  }
  return {std::move(stand_in.schedule_of), stand_in.symmetry, std::move(counted), true,
          decision.sends_empty_messages,   decision.stand_in};
}

}  // namespace

CallPrediction predict_algorithm(const Platform& platform, const ModelCall& call, const std::vector<int>& node_of_rank,
                                 const AlgorithmChoice& choice, const std::vector<double>& start_us) {
  return cost(platform, call, node_of_rank, algorithm_inputs(call, node_of_rank, choice), start_us);
}

AlgorithmCosting::AlgorithmCosting(const Platform& platform, const ModelCall& call,
                                   const std::vector<int>& node_of_rank, const AlgorithmChoice& choice)
    : AlgorithmCosting(platform, call, nullptr, node_of_rank, algorithm_inputs(call, node_of_rank, choice)) {}

AlgorithmCosting::AlgorithmCosting(const Platform& platform, const ModelCall& call, std::unique_ptr<ModelCall> owned,
                                   const std::vector<int>& node_of_rank, CostInputs inputs)
    : platform_(platform),
      owned_call_(std::move(owned)),
      node_of_rank_(node_of_rank),
      inputs_(std::make_unique<CostInputs>(std::move(inputs))) {
  plan_ = plan_inputs(call, *inputs_);
  rank_0_ = inputs_->schedule_of(0);
  bound_us_ = rank_work_lower_bound_us(platform_, plan_.setup, node_of_rank_, 0, *rank_0_);
}

std::optional<AlgorithmCosting> AlgorithmCosting::of_library(const Platform& platform, const ModelCall& call,
                                                             const std::vector<int>& node_of_rank,
                                                             const NativeDecision& decision) {
  if (decision.stand_in.empty()) return std::nullopt;
  auto costed = std::make_unique<ModelCall>(library_call(call, decision));
  const ModelCall& costed_call = *costed;  // stays where it is when `costed` moves into the costing
  CostInputs inputs = library_inputs(costed_call, node_of_rank, decision);
  return AlgorithmCosting(platform, costed_call, std::move(costed), node_of_rank, std::move(inputs));
}

AlgorithmCosting::AlgorithmCosting(AlgorithmCosting&&) noexcept = default;
AlgorithmCosting::~AlgorithmCosting() = default;

double AlgorithmCosting::lower_bound_us() const {
  return stepped_ ? std::max(bound_us_, stepped_->elapsed_us()) : bound_us_;
}

bool AlgorithmCosting::advance(double give_up_above_us) {
  if (!stepped_) {
    stepped_.emplace(
        platform_, plan_.setup, node_of_rank_,
        [&](int rank) {
          return rank_profile(plan_.setup, rank, rank == 0 && rank_0_ ? *rank_0_ : inputs_->schedule_of(rank));
        },
        std::vector<double>{}, plan_.symmetry, inputs_->counted, plan_.sampled_ranks);
    rank_0_.reset();  // the profiles are taken
  }
  return stepped_->advance(give_up_above_us);
}

CallPrediction AlgorithmCosting::prediction() const {
  CallPrediction result{stepped_ ? stepped_->prediction() : Prediction{}, plan_.note};
  if (!stepped_) result.prediction.lower_bound = true;
  result.prediction.us = std::max(result.prediction.us, result.prediction.lower_bound ? bound_us_ : 0.0);
  result.prediction.approximated = result.prediction.approximated || plan_.approximated;
  add_sample_note(result, inputs_->label, plan_.setup.p);
  return result;
}

std::optional<CallPrediction> predict_library(const Platform& platform, const ModelCall& call,
                                              const std::vector<int>& node_of_rank, const NativeDecision& decision,
                                              const std::vector<double>& start_us) {
  if (decision.stand_in.empty()) return std::nullopt;
  const ModelCall costed = library_call(call, decision);
  return cost(platform, costed, node_of_rank, library_inputs(costed, node_of_rank, decision), start_us);
}

}  // namespace collshim::model
