#pragma once
// The τ-Lop cost of a collective's schedules (Rico Gallego, "τ-Lop: Scalably and Accurately
// Modeling Contention and Mapping Effects in Multi-core Clusters", 2015), step by step, without
// running them. Within a step every message is a transmission on one channel: inside a node
// o(m) + n·L_shm(m, τ) (eq. 3.1, n = shm_copies_per_message), between nodes
// o(m) + n·L_shm(m, τ) + L_net(m, τ) (eq. 3.3, n = nic_copies_per_message). τ comes from the
// concurrency the schedules create in that step (the ∥ operator): inside a node, the messages that
// start and end in it; between nodes, the larger of the network messages arriving at the destination
// node and leaving the source node (the thesis counts arrivals; leaving covers a NIC that sends many).
// Messages of different sizes count by their bytes (over the size's bandwidth factor): a message of
// m waits for Σ_j min(m_j, m) of the channel, the small ones having finished and left it the
// bandwidth, so its τ is that over m, the thesis's count where all are alike.
// Every rank keeps a clock. In a step it does its local copies and reductions, then injects its
// messages one after another (o(m) each); a message arrives a transmission time after injection. The
// rank's step ends when its sends have arrived (or, below the channel's eager threshold, are
// injected) and it has taken in every message for it, in order of arrival, each with the receive
// overhead. So a late rank delays exactly the ranks that wait for its
// messages, as in the engine, where each rank finishes a step before starting the next. With every
// rank starting together and the same work everywhere this is the thesis's sum of stage costs.
// The prediction is the longest time a rank spends from its own start, which is what a benchmark
// that times each rank from a barrier's exit measures; dissemination_barrier_exit_us() gives the
// exit times of such a barrier (ranks leave it at different times, and that skew is part of what
// such a benchmark reports).
//
// Opaque phases (a library collective, a shared-memory window) are costed as the messages the
// schedule models them by, and the prediction says it is approximated. A message over blocks of the
// user's buffer that are not back to back (the engine sends it as an `hindexed` type) costs packing
// before injection and unpacking after receipt (pack_gbytes_per_s; the thesis's p(m), which it takes
// as 0). An in-place call's saved copy is not modelled.
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/engine/schedule.hpp"
#include "algorithms/engine/schedule_check.hpp"
#include "model/platform/platform.hpp"

namespace collshim::model {

struct StepPrediction {
  double us = 0;         // the longest any rank spent in the step
  int slowest_rank = 0;  // with a rank symmetry: the representative of the slowest orbit
  bool opaque = false;   // an opaque phase, costed by its modelled messages
};

struct Prediction {
  double us = 0;
  std::vector<StepPrediction> steps;
  bool approximated = false;  // some step was an opaque phase
  int ranks_costed = 0;       // one per orbit of the rank symmetry used (p without one)
  // Costing stopped before the last step (SteppedPrediction): `us` is only a lower bound of the
  // prediction, and `steps` and `approximated` cover the steps costed.
  bool lower_bound = false;
  // Costed by a sample of ranks under an assumed rotation (predict's sampled_ranks): approximated.
  bool sampled = false;
};

// A rank's schedule as the model costs it: per step its local copies (bytes), its messages (peer,
// bytes on the wire, whether over scattered blocks of the user's type) and its probed receives, in
// the schedule's order, and what it reduces and unpacks. rank_profile derives it from the schedule; where the
// schedules list p² forwarded items, counts can give it faster (alltoall_profiles.hpp).
// A probe is a receive whose length the engine probes for before posting it (its blocks' sizes
// travel in a header): it waits for that message, in the order the receives are listed, where other
// receives complete in any order. Its peer is the sender, its bytes the message's.
struct ProfileItem {
  enum class Kind : std::uint8_t { send, copy, probe } kind = Kind::send;
  bool scattered = false;  // a send of the user's datatype over blocks that are not back to back
  int peer = 0;            // a copy's: the rank itself
  long long bytes = 0;
  bool operator==(const ProfileItem&) const = default;
};
struct ProfileStep {
  std::uint32_t step = 0;              // the schedule's step
  std::uint32_t first = 0, count = 0;  // its items: [first, first + count) of RankProfile::items
  long long reduced_bytes = 0;
  long long unpacked_bytes = 0;  // received into scattered blocks of the user's datatype
  bool opaque = false;
  bool operator==(const ProfileStep&) const = default;
};
// Only the steps in which the rank copies, reduces, sends, unpacks or runs an opaque phase are
// listed: a step where it only receives is costed from the messages that arrive.
struct RankProfile {
  std::uint32_t step_count = 0;    // the schedule's steps
  std::vector<ProfileStep> steps;  // ascending
  std::vector<ProfileItem> items;
  bool operator==(const RankProfile&) const = default;
};
// Copies that move nothing (in place, or no bytes) and messages the engine skips are left out.
RankProfile rank_profile(const CheckSetup& call, int rank, const Schedule& schedule);
// Some ranks' profiles at once: `ranks` (ascending; none: every rank) filled in a list of p, the
// others left empty or filled; nothing where this form is not available. Cheaper than a call per
// rank where the profiles come from counts (alltoall_profiles.hpp).
using ProfilesOf = std::function<std::vector<RankProfile>(const std::vector<int>& ranks)>;

// `call` gives the collective's block naming, p, the bytes of every datum and the root (as for the
// checker); node_of_rank has p entries; start_us, if given, each rank's start (p entries). The
// schedules are kept as messages and copies only (about 16 bytes each) while the steps are costed.
// Throws std::invalid_argument if the ranks' step counts differ.
// With `symmetry` (the algorithm's, and only where every datum has one size, or the data breaks it)
// one rank per orbit of the relabelings that keep nodes whole is costed (rank_orbits.hpp): the same
// prediction, at p/t of the work. Ranks outside the representatives are spot-checked against the
// symmetry (std::logic_error if one differs). Only relabelings that keep start_us count; a platform
// that charges packing (which messages are scattered is not symmetric) turns the symmetry off.
Prediction predict(const Platform& platform, const CheckSetup& call, const std::vector<int>& node_of_rank,
                   const std::function<Schedule(int rank)>& schedule_of, const std::vector<double>& start_us = {},
                   const RankSymmetry& symmetry = {});
// The same from the ranks' profiles (`call` then only gives p). `profiles_of`, if given, is used
// instead of profile_of where the symmetry leaves more than a few dozen ranks to cost.
// `sampled_ranks` > 0: where the symmetry leaves more ranks than that to cost, a rotation by the
// first divisor t of p from sampled_ranks on that keeps the nodes is assumed instead, and ranks
// 0..t-1 are costed for all (not spot-checked): exact where the schedules have that rotation, an
// approximation elsewhere, marked approximated and sampled. 0: exact.
Prediction predict(const Platform& platform, const CheckSetup& call, const std::vector<int>& node_of_rank,
                   const std::function<RankProfile(int rank)>& profile_of, const std::vector<double>& start_us = {},
                   const RankSymmetry& symmetry = {}, const ProfilesOf& profiles_of = {}, int sampled_ranks = 0);

// The same prediction a few steps at a time, for a decision that only needs to know that an
// algorithm loses: the profiles are taken at construction (profile_of is not kept), the steps costed
// by advance(). Keeps a reference to `platform`.
class SteppedPrediction {
 public:
  SteppedPrediction(const Platform& platform, const CheckSetup& call, const std::vector<int>& node_of_rank,
                    const std::function<RankProfile(int rank)>& profile_of, const std::vector<double>& start_us = {},
                    const RankSymmetry& symmetry = {}, const ProfilesOf& profiles_of = {}, int sampled_ranks = 0);
  SteppedPrediction(SteppedPrediction&&) noexcept;
  SteppedPrediction& operator=(SteppedPrediction&&) noexcept;
  ~SteppedPrediction();

  // Costs the next steps, until the last (true) or until the prediction is certain to exceed
  // `give_up_above_us` (false): some rank has spent longer, and clocks never go back. A later call
  // goes on from there.
  bool advance(double give_up_above_us = std::numeric_limits<double>::infinity());
  // The longest any rank has spent so far: a lower bound of the prediction, the prediction once done.
  double elapsed_us() const;
  // Once done, the prediction; before, Prediction::lower_bound and the steps costed so far.
  Prediction prediction() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// A lower bound of every prediction of schedules that include `schedule`, rank `rank`'s, whatever the
// other ranks do: the time the rank spends on its own work, step after step (reductions and copies,
// each send's overhead and packing, a send's delivery where it waits for it, at the τ its own messages
// give the channel at least, each probe and message received with its overhead, unpacking). One
// schedule instead of all the representatives': a decision can skip an algorithm whose bound already
// loses.
double rank_work_lower_bound_us(const Platform& platform, const CheckSetup& call, const std::vector<int>& node_of_rank,
                                int rank, const Schedule& schedule);

// Where `symmetry` fails for these schedules: the first rank whose messages and copies, as the model
// costs them (packing aside), are not its representative's relabeled (on one node, so every relabeling applies), or
// "" if none. The unit tests run it for every algorithm's declared symmetry.
std::string rank_symmetry_violation(const CheckSetup& call, const RankSymmetry& symmetry,
                                    const std::function<Schedule(int rank)>& schedule_of);

// When each rank leaves a dissemination barrier (MPICH's, and SMPI's `smpi/barrier:mpich`: in round k
// rank r sends to r + 2^k and receives from r − 2^k) that all ranks enter at time 0.
std::vector<double> dissemination_barrier_exit_us(const Platform& platform, const std::vector<int>& node_of_rank);

}  // namespace collshim::model
