#include "model/cost/cost_model.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>

#include "algorithms/engine/call_layout.hpp"
#include "model/cost/rank_orbits.hpp"

namespace collshim::model {
namespace {

// Where the executor builds an `hindexed` type (a typed region whose blocks are not one run), the
// MPI library packs on send and unpacks on receipt: the thesis's p(m), first and last transfer only.
bool scattered(const Region& region) { return !is_packed(region.buffer) && region.blocks.runs().size() > 1; }

}  // namespace

RankProfile rank_profile(const CheckSetup& call, int rank, const Schedule& schedule) {
  RankProfile profile;
  profile.step_count = static_cast<std::uint32_t>(schedule.steps.size());
  auto& items = profile.items;
  for (std::size_t s = 0; s < schedule.steps.size(); ++s) {
    const Step& step = schedule.steps[s];
    ProfileStep compact;
    compact.step = static_cast<std::uint32_t>(s);
    compact.first = static_cast<std::uint32_t>(items.size());
    compact.opaque = step.opaque.has_value();
    for (const LocalCopy& copy : step.copies) {
      const long long bytes = payload_bytes(call, rank, copy.from);
      if (copy.from == copy.to || bytes == 0) continue;  // in place or empty: the engine moves nothing
      items.push_back({ProfileItem::Kind::copy, false, rank, bytes});
    }
    for (const LocalReduce& reduce : step.reductions) compact.reduced_bytes += payload_bytes(call, rank, reduce.from);
    for (const Transfer& send : step.sends) {
      const WireMessage message = wire_message(call, rank, send.region, send.peer);
      if (!message.skipped)
        items.push_back({ProfileItem::Kind::send, scattered(send.region), send.peer, message.bytes});
    }
    for (const Transfer& recv : step.recvs) {
      const WireMessage message = wire_message(call, rank, recv.region, rank);
      if (message.header) items.push_back({ProfileItem::Kind::probe, false, recv.peer, message.bytes});
      if (scattered(recv.region) && !message.skipped) compact.unpacked_bytes += message.bytes;
    }
    compact.count = static_cast<std::uint32_t>(items.size() - compact.first);
    if (compact.count > 0 || compact.reduced_bytes > 0 || compact.unpacked_bytes > 0 || compact.opaque)
      profile.steps.push_back(compact);
  }
  return profile;
}

namespace {

// Why rank `rank`'s profile is not rank `model`'s relabeled by the orbits' g (g(model) = rank), or "".
// Packing aside: which messages lie over scattered blocks depends on where a run of blocks wraps at
// the end of the user's buffer, which no relabeling keeps; the model uses symmetries only where
// packing is free.
std::string relabeling_mismatch(const RankOrbits& orbits, int model, const RankProfile& of_model, int rank,
                                const RankProfile& of_rank) {
  const std::string where = "rank " + std::to_string(rank) + " against rank " + std::to_string(model);
  if (of_rank.step_count != of_model.step_count)
    return where + ": " + std::to_string(of_rank.step_count) + " steps, not " + std::to_string(of_model.step_count);
  // Steps in which a rank only unpacks are packing, which the symmetry leaves aside.
  const auto compared = [](const RankProfile& profile) {
    std::vector<const ProfileStep*> steps;
    for (const ProfileStep& step : profile.steps)
      if (step.count > 0 || step.reduced_bytes > 0 || step.opaque) steps.push_back(&step);
    return steps;
  };
  const std::vector<const ProfileStep*> of_model_steps = compared(of_model), of_rank_steps = compared(of_rank);
  if (of_rank_steps.size() != of_model_steps.size())
    return where + ": active in " + std::to_string(of_rank_steps.size()) + " steps, not " +
           std::to_string(of_model_steps.size());
  for (std::size_t s = 0; s < of_model_steps.size(); ++s) {
    const ProfileStep& a = *of_model_steps[s];
    const ProfileStep& b = *of_rank_steps[s];
    const std::string at = where + ", step " + std::to_string(a.step) + ": ";
    if (a.step != b.step)
      return where + ": active in step " + std::to_string(b.step) + ", not " + std::to_string(a.step);
    if (a.count != b.count)
      return at + std::to_string(b.count) + " messages and copies, not " + std::to_string(a.count);
    if (a.reduced_bytes != b.reduced_bytes)
      return at + "reduces " + std::to_string(b.reduced_bytes) + " bytes, not " + std::to_string(a.reduced_bytes);
    for (std::uint32_t i = 0; i < a.count; ++i) {
      const ProfileItem& x = of_model.items[a.first + i];
      const ProfileItem& y = of_rank.items[b.first + i];
      if (x.kind != y.kind || x.bytes != y.bytes) return at + "item " + std::to_string(i) + " differs in kind or bytes";
      if (y.peer != orbits.relabel(model, rank, x.peer))
        return at + "item " + std::to_string(i) + " goes to rank " + std::to_string(y.peer) + ", not " +
               std::to_string(orbits.relabel(model, rank, x.peer));
    }
  }
  return "";
}

std::vector<int> numbered_nodes(const std::vector<int>& node_of_rank) {
  std::vector<int> nodes;
  nodes.reserve(node_of_rank.size());
  const auto [low, high] = std::minmax_element(node_of_rank.begin(), node_of_rank.end());
  if (low != node_of_rank.end() && *low >= 0 && *high < 4 * static_cast<long long>(node_of_rank.size()) + 64) {
    std::vector<int> index(static_cast<std::size_t>(*high) + 1, -1);  // node ids as given to 0..M-1
    int next = 0;
    for (const int node : node_of_rank) nodes.push_back(index[node] < 0 ? index[node] = next++ : index[node]);
    return nodes;
  }
  std::map<int, int> index;  // ids far apart or negative
  for (const int node : node_of_rank)
    nodes.push_back(index.try_emplace(node, static_cast<int>(index.size())).first->second);
  return nodes;
}

// node_of_rank, once it and start_us have been checked to have p entries.
const std::vector<int>& checked_sizes(const CheckSetup& call, const std::vector<int>& node_of_rank,
                                      const std::vector<double>& start_us) {
  if (static_cast<int>(node_of_rank.size()) != call.p)
    throw std::invalid_argument("node_of_rank has " + std::to_string(node_of_rank.size()) +
                                " entries for p = " + std::to_string(call.p));
  if (!start_us.empty() && static_cast<int>(start_us.size()) != call.p)
    throw std::invalid_argument("start_us has " + std::to_string(start_us.size()) +
                                " entries for p = " + std::to_string(call.p));
  return node_of_rank;
}

// The switch of every rank's node, where the platform has more than one (Platform::nodes_per_switch).
std::vector<int> switches_of(const Platform& platform, const std::vector<int>& node_of_rank) {
  if (platform.nodes_per_switch.empty()) return {};
  std::vector<int> switches;
  for (const int node : node_of_rank) switches.push_back(platform.switch_of_node(node));
  return switches;
}

// A message's arrival at a rank: when, whether across nodes, whether its sender is done once it has
// injected it, and from which rank; and when its sender injected it and how long it moves, for a
// receive posted only after a probe.
struct Arrival {
  double time = 0;
  bool between_nodes = false;
  bool eager = true;
  int sender = 0;
  double injected = 0;
  double transfer = 0;
};

// The messages that share one channel of a node in a step (its memory link, or its NIC one way),
// each as its work: bytes over the size's bandwidth factor (work()). τ-Lop's τ counts the transfers that
// share the channel; where they differ in size, the small ones finish first and leave the channel
// to the others (fair sharing, as SimGrid's max-min solver does), so a message of work w waits
// for Σ_j min(w_j, w): its effective τ is that over w, the count where all are equal.
class ChannelLoad {
 public:
  // Counted per work: a step's messages on a channel mostly come in runs of one size, and an
  // irregular Alltoallv's in many sizes, which finish() sorts and merges (not a search per message).
  void add(double work) {
    ++count_;
    if (!levels_.empty() && levels_.back().work == work) return ++levels_.back().count, void();
    levels_.push_back({work, 1, 0, 0});
  }
  void clear() { levels_.clear(), count_ = 0, total_ = 0; }
  bool empty() const { return count_ == 0; }
  // Once the step's messages are in: each work with the sum and count of those below it.
  void finish() {
    if (levels_.size() > 1) {
      std::sort(levels_.begin(), levels_.end(), [](const Level& a, const Level& b) { return a.work < b.work; });
      auto merged = levels_.begin();
      for (auto level = levels_.begin() + 1; level != levels_.end(); ++level) {
        if (level->work == merged->work)
          merged->count += level->count;
        else
          *++merged = *level;
      }
      levels_.erase(merged + 1, levels_.end());
    }
    std::size_t smaller = 0;
    double below = 0;
    for (Level& level : levels_) {
      level.smaller = smaller, level.below = below;
      smaller += level.count, below += level.work * static_cast<double>(level.count);
    }
    total_ = below;
  }
  // Σ_j min(w_j, work), or for an empty message the count of messages.
  double shared(double work) const {
    if (work <= 0) return static_cast<double>(count_);
    const auto level =
        std::lower_bound(levels_.begin(), levels_.end(), work, [](const Level& l, double w) { return l.work < w; });
    if (level == levels_.end()) return total_;  // larger than every one
    return level->below + work * static_cast<double>(count_ - level->smaller);
  }

 private:
  struct Level {
    double work;
    std::size_t count;    // messages of this work
    std::size_t smaller;  // messages of less work, and
    double below;         // the sum of their works
  };
  std::vector<Level> levels_;
  std::size_t count_ = 0;
  double total_ = 0;
};

class CostModel {
 public:
  CostModel(const Platform& platform, const CheckSetup& call, const std::vector<int>& node_of_rank,
            const RankSymmetry& symmetry, const std::vector<double>& start_us, int sampled_ranks = 0)
      : platform_(platform),
        call_(call),
        start_us_(start_us),
        node_(numbered_nodes(checked_sizes(call, node_of_rank, start_us))),
        switch_of_rank_(switches_of(platform, node_)),
        // Where packing costs, which messages are scattered is not symmetric: every rank is costed.
        symmetry_(platform.pack_gbytes_per_s > 0 ? RankSymmetry{} : symmetry),
        orbits_(symmetry_, node_, start_us, switch_of_rank_) {
    // Where packing costs, no relabeling is a symmetry (as above): nothing is sampled either.
    if (sampled_ranks > 0 && platform.pack_gbytes_per_s <= 0 && orbits_.representatives() > sampled_ranks)
      sample(sampled_ranks);
    // Beyond the limit of exact costing the declared symmetry is trusted (the unit tests check every
    // declaration rank by rank): the two spot checks each build a schedule of O(p) blocks.
    spot_checks_ = sampled_ranks == 0;
    concurrency_.resize(static_cast<std::size_t>(orbits_.node_orbits()));
  }

  // Where the exact orbits leave more than `ranks` ranks to cost, a symmetry is assumed and its
  // representatives are costed for all: where every node holds p/M ranks, sequentially or round
  // robin, the relabelings that move whole nodes by multiples of k (the first divisor of M with
  // k·p/M >= ranks), so that the ranks of nodes 0..k-1 stand for those of every node (a node's
  // leader and the others alike); otherwise the rotation by the first divisor t >= ranks of p that
  // keeps the nodes (ranks 0..t-1). Each must also keep switches and starts. Exact where the
  // schedules have that symmetry; elsewhere (grids with holes) an approximation, marked so. Where
  // none keeps the nodes: exact.
  void sample(int ranks) {
    const int p = call_.p;
    const auto take = [&](const RankSymmetry& symmetry) {
      RankOrbits assumed(symmetry, node_, start_us_, switch_of_rank_);
      if (assumed.kind() == RankSymmetry::Kind::none || assumed.representatives() >= orbits_.representatives())
        return false;  // no relabeling of the kind keeps the nodes
      orbits_ = std::move(assumed);
      prediction_.sampled = true;
      return true;
    };
    const int nodes = *std::max_element(node_.begin(), node_.end()) + 1;
    const int per_node = p / nodes;
    if (per_node > 1 && per_node * nodes == p) {
      bool in_order = true, round_robin = true;  // node_ numbers nodes in order of their first rank
      for (int r = 0; r < p; ++r) {
        in_order = in_order && node_[r] == r / per_node;
        round_robin = round_robin && node_[r] == r % nodes;
      }
      for (int k = 1; k < nodes && (in_order || round_robin); ++k) {
        if (nodes % k != 0 || k * per_node < ranks) continue;
        RankSymmetry whole_nodes{RankSymmetry::Kind::digits};
        if (in_order)  // rank = local index + per_node · node: add multiples of k to the node
          whole_nodes.radices = {per_node, nodes}, whole_nodes.fixed = {0}, whole_nodes.strides = {1, k};
        else  // rank = node + nodes · local index
          whole_nodes.radices = {nodes, per_node}, whole_nodes.fixed = {1}, whole_nodes.strides = {k, 1};
        if (take(whole_nodes)) return;
      }
    }
    for (int t = ranks; t <= p / 2; ++t)
      if (p % t == 0 && take(RankSymmetry{RankSymmetry::Kind::rotation, t})) return;
  }

  // Pass 1: the representatives' profiles (each rank is asked for once at most), then the clocks at
  // the ranks' starts.
  void prepare(const std::function<RankProfile(int rank)>& one_profile, const ProfilesOf& profiles_of) {
    // Indices below are orbits, one rank costed for each (orbits_.representative_rank).
    const int ranks = orbits_.representatives();
    // Beyond a few dozen ranks to cost, a form that gives the profiles at once is cheaper: those of
    // the representatives and of the ranks checked against them.
    constexpr int profiles_at_once_above = 32;
    std::vector<RankProfile> at_once;  // p entries, the wanted ones filled; empty: one rank at a time
    if (profiles_of && ranks > profiles_at_once_above) {
      std::vector<int> wanted;
      if (ranks < call_.p) {
        for (int r = 0; r < ranks; ++r) wanted.push_back(orbits_.representative_rank(r));
        for (const int rank : checked_ranks())
          if (!orbits_.is_representative(rank)) wanted.push_back(rank);
        std::sort(wanted.begin(), wanted.end());
      }
      at_once = profiles_of(wanted);
    }
    const auto profile_of = [&](int rank) {
      return at_once.empty() ? one_profile(rank) : std::move(at_once[static_cast<std::size_t>(rank)]);
    };
    // The representatives' clocks differ (their nodes do), their schedules need not: where the
    // declared symmetry relates two of them (on one node every relabeling applies), one profile is
    // built and the other relabeled from it. The ranks checked below are built.
    const RankOrbits declared(at_once.empty() ? symmetry_ : RankSymmetry{},
                              std::vector<int>(static_cast<std::size_t>(call_.p), 0));
    std::vector<std::optional<RankProfile>> built(static_cast<std::size_t>(declared.representatives()));
    const auto representative_profile = [&](int rank) {
      if (declared.kind() == RankSymmetry::Kind::none || !at_once.empty()) return profile_of(rank);
      const int orbit = declared.orbit_of(rank), base = declared.representative_rank(orbit);
      std::optional<RankProfile>& profile = built[static_cast<std::size_t>(orbit)];
      if (!profile) profile = profile_of(base);
      RankProfile relabeled = *profile;
      for (ProfileItem& item : relabeled.items) item.peer = declared.relabel(base, rank, item.peer);
      return relabeled;
    };
    profiles_.reserve(static_cast<std::size_t>(ranks));
    for (int r = 0; r < ranks; ++r) record(r, representative_profile(orbits_.representative_rank(r)));
    check_relabeled_ranks(profile_of);

    clock_.assign(static_cast<std::size_t>(ranks), 0.0);
    for (int r = 0; r < ranks && !start_us_.empty(); ++r) clock_[r] = start_us_[orbits_.representative_rank(r)];
    posted_at_ = busy_until_ = sends_done_ = taken_in_ = clock_;
    arrivals_.assign(clock_.size(), {});
    entry_.assign(clock_.size(), nullptr);
    is_touched_.assign(clock_.size(), false);
    prediction_.ranks_costed = ranks;
    prediction_.approximated = prediction_.sampled;
    prediction_.steps.resize(steps_);
  }

  // Pass 2, from the next step on: costs steps until the last (true) or until some rank has spent
  // longer than `give_up_above_us` (false): clocks only advance, so that is a lower bound of the
  // prediction (elapsed_us()), and a later call goes on from there.
  // Only the ranks that do something in a step, or receive in it, are visited there: a schedule of
  // p - 1 steps with a message each (pairwise) costs O(p) per rank, not O(p) per step.
  bool advance(double give_up_above_us) {
    const auto touch = [this](int r) { touch_rank(r); };
    for (; next_step_ < steps_; ++next_step_) {
      const std::size_t s = next_step_;
      if (elapsed_ > give_up_above_us) return false;
      count_concurrency(active_[s]);
      for (const auto& [r, step] : active_[s]) {
        entry_[r] = step;
        touch_rank(r);
        posted_at_[r] = posted(r, *step, clock_[r]);
      }
      for (const auto& [r, step] : active_[s])
        send(r, *step, posted_at_, busy_until_[r], sends_done_[r], arrivals_, touch);
      StepPrediction& prediction_step = prediction_.steps[s];
      prediction_step.opaque = opaque_[s];
      std::sort(touched_.begin(), touched_.end());  // the order the ranks are reported in
      for (const int r : touched_) {                // first every receiver: a probe can hold back a sender's completion
        auto& incoming = arrivals_[static_cast<std::size_t>(r)];
        taken_in_[r] = take_in(r, entry_[r], busy_until_[r], incoming, sends_done_);
        incoming.clear();
        if (entry_[r]) taken_in_[r] += pack_us(entry_[r]->unpacked_bytes);
      }
      for (const int r : touched_) {
        const double end = std::max(taken_in_[r], sends_done_[r]);
        if (end - clock_[r] > prediction_step.us)
          prediction_step.us = end - clock_[r], prediction_step.slowest_rank = orbits_.representative_rank(r);
        clock_[r] = posted_at_[r] = end;
        entry_[r] = nullptr;
        is_touched_[r] = false;
        elapsed_ = std::max(elapsed_, end - start_of(r));
      }
      touched_.clear();
      prediction_.approximated = prediction_.approximated || prediction_step.opaque;
    }
    return true;
  }

  // The longest any rank has spent so far: the prediction once advance() is done.
  double elapsed_us() const { return elapsed_; }

  // The prediction, once advance() is done (end_us: when each rank ends, if asked for); before, what
  // is known: a lower bound and the steps costed.
  Prediction prediction(std::vector<double>* end_us = nullptr) const {
    Prediction prediction = prediction_;
    for (std::size_t r = 0; r < clock_.size(); ++r)
      prediction.us = std::max(prediction.us, clock_[r] - start_of(static_cast<int>(r)));
    if (next_step_ < steps_) {
      prediction.lower_bound = true;
      prediction.steps.resize(next_step_);
    }
    if (end_us) {
      end_us->resize(static_cast<std::size_t>(call_.p));
      for (int r = 0; r < call_.p; ++r) (*end_us)[r] = clock_[orbits_.orbit_of(r)];
    }
    return prediction;
  }

 private:
  // Per node orbit (rank_orbits.hpp), in the step being costed: the representatives' messages and
  // copies that set τ.
  struct Concurrency {
    std::vector<ChannelLoad> memory;    // messages crossing the node's memory link (inside it, and with
                                        // network_crosses_memory those leaving or arriving too)
    std::vector<ChannelLoad> leaving;   // network messages leaving the node
    std::vector<ChannelLoad> arriving;  // network messages arriving at the node
    std::vector<int> copying;           // ranks of the node that copy or reduce locally
    std::vector<int> counted;           // orbits with something, to clear for the next step

    void resize(std::size_t orbits) {
      for (auto* loads : {&memory, &leaving, &arriving}) loads->assign(orbits, {});
      copying.assign(orbits, 0);
    }
    void add(std::vector<ChannelLoad>& loads, int orbit, double work) {
      count_in(orbit);
      loads[orbit].add(work);
    }
    void add_copier(int orbit) {
      count_in(orbit);
      ++copying[orbit];
    }
    void count_in(int orbit) {  // before its first message or copier of the step
      if (memory[orbit].empty() && leaving[orbit].empty() && arriving[orbit].empty() && copying[orbit] == 0)
        counted.push_back(orbit);
    }
    void finish() {
      for (const int orbit : counted)
        for (auto* loads : {&memory, &leaving, &arriving}) (*loads)[orbit].finish();
    }
    void clear() {
      for (const int orbit : counted) {
        for (auto* loads : {&memory, &leaving, &arriving}) (*loads)[orbit].clear();
        copying[orbit] = 0;
      }
      counted.clear();
    }
  };

  // A rank takes in its step's messages from when it has injected its own. It probes for some of them
  // first, one after another in the order its receives are listed:
  // - where a message moves as soon as it is sent, a probe waits for it to arrive;
  // - where it waits for its receiver (transfers_wait_for_receiver), a probe sees it once it is sent
  //   and only then posts its receive: the message moves from there, so one late sender holds back
  //   the messages probed after its own, and a sender that waits for delivery waits that long too.
  // Then it takes in every message in order of arrival, each with the receive overhead.
  double take_in(int orbit, const ProfileStep* step, double t, std::vector<Arrival>& incoming,
                 std::vector<double>& sends_done) const {
    const auto overhead = [this](const Arrival& a) {
      return (a.between_nodes ? platform_.net : platform_.shm).receive_overhead_us;
    };
    const auto by_time = [](const Arrival& a, const Arrival& b) { return a.time < b.time; };
    const bool probes_post_receives = platform_.transfers_wait_for_receiver;
    // Where probes move messages, the arrivals are put in order once, after the probes.
    if (!probes_post_receives) std::sort(incoming.begin(), incoming.end(), by_time);
    std::vector<bool> taken(incoming.size(), false);
    if (step) {
      const RankProfile& profile = profiles_[static_cast<std::size_t>(orbit)];
      std::vector<std::size_t> by_sender;  // arrivals by sender, then time: a probe takes its sender's first
      for (std::uint32_t i = step->first; i < step->first + step->count; ++i) {
        if (profile.items[i].kind != ProfileItem::Kind::probe) continue;
        if (by_sender.empty()) {
          by_sender.resize(incoming.size());
          for (std::size_t a = 0; a < incoming.size(); ++a) by_sender[a] = a;
          std::sort(by_sender.begin(), by_sender.end(), [&](std::size_t a, std::size_t b) {
            const Arrival &x = incoming[a], &y = incoming[b];
            return x.sender != y.sender ? x.sender < y.sender : x.time < y.time;
          });
        }
        auto a = std::lower_bound(by_sender.begin(), by_sender.end(), profile.items[i].peer,
                                  [&](std::size_t x, int sender) { return incoming[x].sender < sender; });
        while (a != by_sender.end() && incoming[*a].sender == profile.items[i].peer && taken[*a]) ++a;
        if (a == by_sender.end() || incoming[*a].sender != profile.items[i].peer) continue;
        Arrival& probed = incoming[*a];
        taken[*a] = true;
        if (probes_post_receives) {
          t = std::max(t, probed.injected) + platform_.probe_us;
          if (t + probed.transfer > probed.time) {
            probed.time = t + probed.transfer;
            double& sender_done = sends_done[static_cast<std::size_t>(orbits_.orbit_of(probed.sender))];
            if (!probed.eager) sender_done = std::max(sender_done, probed.time);
          }
        } else {
          t = std::max(t, probed.time) + platform_.probe_us + overhead(probed);
        }
      }
    }
    if (probes_post_receives) {  // every message is taken in once the probes are done, in order of arrival
      std::sort(incoming.begin(), incoming.end(), by_time);
      for (const Arrival& a : incoming) t = std::max(t, a.time) + overhead(a);
      return t;
    }
    for (std::size_t a = 0; a < incoming.size(); ++a)
      if (!taken[a]) t = std::max(t, incoming[a].time) + overhead(incoming[a]);
    return t;
  }

  // Pass 1: a representative's profile, indexed by the steps it is active in.
  void record(int index, RankProfile profile) {
    const int rank = orbits_.representative_rank(index);
    if (index == 0) {
      steps_ = profile.step_count;
      active_.assign(steps_, {});
      opaque_.assign(steps_, false);
    } else if (profile.step_count != steps_) {
      throw std::invalid_argument("rank " + std::to_string(rank) + " has " + std::to_string(profile.step_count) +
                                  " steps, rank " + std::to_string(orbits_.representative_rank(0)) + " has " +
                                  std::to_string(steps_));
    }
    profiles_.push_back(std::move(profile));
    for (const ProfileStep& step : profiles_.back().steps) {
      active_[step.step].emplace_back(index, &step);
      opaque_[step.step] = opaque_[step.step] || step.opaque;
    }
  }

  // Ranks spot-checked against their representatives: 0 (always a representative), p/2, p - 1.
  std::vector<int> checked_ranks() const {
    constexpr int samples = 3;
    std::vector<int> ranks;
    if (prediction_.sampled || !spot_checks_) return ranks;  // an assumed symmetry, or trusted
    for (int i = 0; i < samples && orbits_.representatives() < call_.p; ++i)
      ranks.push_back(static_cast<int>(static_cast<long long>(call_.p - 1) * i / (samples - 1)));
    return ranks;
  }

  // The symmetry is the algorithm's claim (the unit tests check it for every rank up to p = 130);
  // here the middle and the last rank, unless representatives, are checked against it. Each check
  // builds a schedule, which is all the work left where one rank is costed: two, not more.
  void check_relabeled_ranks(const std::function<RankProfile(int rank)>& profile_of) const {
    for (const int rank : checked_ranks()) {
      if (orbits_.is_representative(rank)) continue;
      const int orbit = orbits_.orbit_of(rank);
      const std::string mismatch =
          relabeling_mismatch(orbits_, orbits_.representative_rank(orbit), profiles_[static_cast<std::size_t>(orbit)],
                              rank, profile_of(rank));
      if (!mismatch.empty())
        throw std::logic_error("the schedules lack the symmetry their algorithm declares: " + mismatch);
    }
  }

  // The step's concurrency, from the messages and copies of the representatives active in it.
  void count_concurrency(const std::vector<std::pair<int, const ProfileStep*>>& active) {
    concurrency_.clear();
    for (const auto& [index, step] : active) {
      const int rank = orbits_.representative_rank(index);
      const int orbit = orbits_.node_orbit(node_[rank]);
      const RankProfile& profile = profiles_[static_cast<std::size_t>(index)];
      bool copies = step->reduced_bytes > 0;
      for (std::uint32_t i = step->first; i < step->first + step->count; ++i) {
        const ProfileItem& item = profile.items[i];
        if (item.kind == ProfileItem::Kind::copy) {
          copies = true;
        } else if (item.kind == ProfileItem::Kind::probe) {
          continue;
        } else if (const int destination = node_[item.peer]; destination == node_[rank]) {
          concurrency_.add(concurrency_.memory, orbit, work(platform_.shm, item.bytes));
        } else {
          const int arrival_orbit = orbits_.node_orbit(destination);
          const double on_network = work(platform_.net, item.bytes);
          concurrency_.add(concurrency_.leaving, orbit, on_network);
          concurrency_.add(concurrency_.arriving, arrival_orbit, on_network);
          if (platform_.network_crosses_memory) {
            const double on_memory = work(platform_.shm, item.bytes);
            concurrency_.add(concurrency_.memory, orbit, on_memory);
            concurrency_.add(concurrency_.memory, arrival_orbit, on_memory);
          }
        }
      }
      if (copies) concurrency_.add_copier(orbit);
    }
    concurrency_.finish();
  }

  // A message's work on a channel: its bytes over the size's bandwidth factor (remembered per
  // channel for the last size asked, as a step's messages are mostly alike).
  double work(const Channel& channel, long long bytes) const {
    auto& [last_bytes, last_work] = last_work_[&channel == &platform_.shm ? 0 : 1];
    if (bytes != last_bytes)
      last_bytes = bytes, last_work = static_cast<double>(bytes) / channel.size_factor(bytes).bandwidth_factor;
    return last_work;
  }

  // Channel::transfer_time, remembered per use for the last size and τ asked: a step's messages are
  // mostly alike, and a rank's to one node share τ (about a quarter of costing a direct exchange).
  enum class Use { memory, nic_copy, network };
  double transfer_time(Use use, long long bytes, double tau) const {
    auto& [last_bytes, last_tau, last_us] = last_transfer_[static_cast<std::size_t>(use)];
    if (bytes != last_bytes || tau != last_tau)
      last_bytes = bytes, last_tau = tau,
      last_us = (use == Use::network ? platform_.net : platform_.shm).transfer_time(bytes, tau);
    return last_us;
  }

  // A node's count in the step, from its orbit's.
  int count(const std::vector<int>& counts, int node) const {
    const int orbit = orbits_.node_orbit(node);
    return orbits_.per_node(counts[static_cast<std::size_t>(orbit)], orbit);
  }

  // The effective τ of a message of work w on a node's channel (ChannelLoad), from its orbit's load.
  double tau(const std::vector<ChannelLoad>& loads, int node, double w) const {
    const int orbit = orbits_.node_orbit(node);
    const double shared = orbits_.per_node(loads[static_cast<std::size_t>(orbit)].shared(w), orbit);
    return w > 0 ? shared / w : shared;
  }

  double pack_us(long long bytes) const {
    return platform_.pack_gbytes_per_s > 0 ? static_cast<double>(bytes) * 1e-3 / platform_.pack_gbytes_per_s : 0.0;
  }

  // Pass 2, per step. First the rank's local copies and reductions from its clock: then it posts
  // its receives and sends.
  double posted(int orbit, const ProfileStep& step, double clock) const {
    const RankProfile& profile = profiles_[static_cast<std::size_t>(orbit)];
    double t = clock;
    if (platform_.reduce_gbytes_per_s > 0)
      t += static_cast<double>(step.reduced_bytes) * 1e-3 / platform_.reduce_gbytes_per_s;
    const int copiers = count(concurrency_.copying, node_[orbits_.representative_rank(orbit)]);
    for (std::uint32_t i = step.first; i < step.first + step.count && profile.items[i].kind == ProfileItem::Kind::copy;
         ++i)
      if (!platform_.local_copies_free) t += platform_.shm.transfer_time(profile.items[i].bytes, copiers);
    return t;
  }

  // Then its sends, one after another from when it posted; a message moves from its injection (or,
  // where transfers wait for the receiver, from when the receiver posted, if later) for one
  // transmission time. It arrives at the representative of its receiver's orbit.
  template <typename Touch>
  void send(int orbit, const ProfileStep& step, const std::vector<double>& posted_at, double& busy_until,
            double& sends_done, std::vector<std::vector<Arrival>>& arrivals, const Touch& touch) const {
    const int node = node_[orbits_.representative_rank(orbit)];
    const Channel& shm = platform_.shm;
    const Channel& net = platform_.net;
    const RankProfile& profile = profiles_[static_cast<std::size_t>(orbit)];
    double t = posted_at[orbit];
    sends_done = t;
    for (std::uint32_t i = step.first; i < step.first + step.count; ++i) {
      const ProfileItem& item = profile.items[i];
      if (item.kind != ProfileItem::Kind::send) continue;
      const int destination = node_[item.peer];
      const int receiver = orbits_.orbit_of(item.peer);
      const Channel& channel = destination == node ? shm : net;
      double transfer = 0;
      const double on_memory = work(shm, item.bytes);
      const auto memory_time = [&](int at) {
        return transfer_time(Use::memory, item.bytes, tau(concurrency_.memory, at, on_memory));
      };
      if (destination == node) {
        transfer = platform_.shm_copies_per_message * memory_time(node);
      } else {
        const double on_network = work(net, item.bytes);
        const double nic_tau =
            std::max(tau(concurrency_.leaving, node, on_network), tau(concurrency_.arriving, destination, on_network));
        transfer = platform_.nic_copies_per_message * transfer_time(Use::nic_copy, item.bytes, nic_tau) +
                   transfer_time(Use::network, item.bytes, nic_tau);
        if (!switch_of_rank_.empty() &&
            switch_of_rank_[orbits_.representative_rank(orbit)] != switch_of_rank_[item.peer])
          transfer += platform_.across_switches_latency_us * net.size_factor(item.bytes).latency_factor;
        if (platform_.network_crosses_memory)  // the slowest of the NIC and the two nodes' memory links
          transfer = std::max({transfer, memory_time(node), memory_time(destination)});
      }
      t += channel.overhead(item.bytes) + (item.scattered ? pack_us(item.bytes) : 0.0);
      const double start = platform_.transfers_wait_for_receiver ? std::max(t, posted_at[receiver]) : t;
      touch(receiver);
      // The sender as its receiver's orbit representative sees it (relabeled like the receiver).
      const int sender =
          orbits_.relabel(item.peer, orbits_.representative_rank(receiver), orbits_.representative_rank(orbit));
      const bool eager = item.bytes < channel.eager_threshold_bytes;
      arrivals[static_cast<std::size_t>(receiver)].push_back(
          {start + transfer, destination != node, eager, sender, t, transfer});
      sends_done = std::max(sends_done, eager ? t : start + transfer);
    }
    busy_until = t;
  }

  void touch_rank(int r) {  // a rank active or receiving in the step being costed
    if (is_touched_[r]) return;
    is_touched_[r] = true;
    touched_.push_back(r);
    busy_until_[r] = sends_done_[r] = clock_[r];
  }
  double start_of(int orbit) const { return start_us_.empty() ? 0.0 : start_us_[orbits_.representative_rank(orbit)]; }

  const Platform& platform_;
  const CheckSetup call_;  // a copy: callers may pass a temporary
  const std::vector<double> start_us_;
  std::vector<int> node_;            // rank -> node index 0..M-1
  std::vector<int> switch_of_rank_;  // empty where the platform has one switch
  RankSymmetry symmetry_;            // the declared one, or none where packing costs
  RankOrbits orbits_;                // the ranks costed: one per orbit (of an assumed symmetry where sampled)
  bool spot_checks_ = true;          // ranks outside the representatives checked against the symmetry
  std::size_t steps_ = 0;
  Concurrency concurrency_;
  mutable std::array<std::pair<long long, double>, 2> last_work_{{{-1, 0.0}, {-1, 0.0}}};  // work(): shm, net
  mutable std::array<std::tuple<long long, double, double>, 3> last_transfer_{
      {{-1, 0.0, 0.0}, {-1, 0.0, 0.0}, {-1, 0.0, 0.0}}};  // transfer_time(), by Use
  std::vector<RankProfile> profiles_;                     // per representative (active_ points into their steps)
  std::vector<std::vector<std::pair<int, const ProfileStep*>>> active_;  // per step: (representative, its step)
  std::vector<bool> opaque_;                                             // per step
  // Pass 2's state, per representative, between calls of advance().
  std::size_t next_step_ = 0;
  double elapsed_ = 0;
  std::vector<double> clock_, posted_at_, busy_until_, sends_done_, taken_in_;
  std::vector<std::vector<Arrival>> arrivals_;
  std::vector<const ProfileStep*> entry_;  // this step's, of the active ranks
  std::vector<int> touched_;
  std::vector<bool> is_touched_;
  Prediction prediction_;  // its steps so far
};

}  // namespace

Prediction predict(const Platform& platform, const CheckSetup& call, const std::vector<int>& node_of_rank,
                   const std::function<Schedule(int rank)>& schedule_of, const std::vector<double>& start_us,
                   const RankSymmetry& symmetry) {
  return predict(
      platform, call, node_of_rank, [&](int rank) { return rank_profile(call, rank, schedule_of(rank)); }, start_us,
      symmetry);
}

Prediction predict(const Platform& platform, const CheckSetup& call, const std::vector<int>& node_of_rank,
                   const std::function<RankProfile(int rank)>& profile_of, const std::vector<double>& start_us,
                   const RankSymmetry& symmetry, const ProfilesOf& profiles_of, int sampled_ranks) {
  SteppedPrediction stepped(platform, call, node_of_rank, profile_of, start_us, symmetry, profiles_of, sampled_ranks);
  stepped.advance();
  return stepped.prediction();
}

struct SteppedPrediction::State {
  CostModel model;
};

SteppedPrediction::SteppedPrediction(const Platform& platform, const CheckSetup& call,
                                     const std::vector<int>& node_of_rank,
                                     const std::function<RankProfile(int rank)>& profile_of,
                                     const std::vector<double>& start_us, const RankSymmetry& symmetry,
                                     const ProfilesOf& profiles_of, int sampled_ranks)
    : state_(
          std::make_unique<State>(State{CostModel(platform, call, node_of_rank, symmetry, start_us, sampled_ranks)})) {
  state_->model.prepare(profile_of, profiles_of);
}

SteppedPrediction::SteppedPrediction(SteppedPrediction&&) noexcept = default;
SteppedPrediction& SteppedPrediction::operator=(SteppedPrediction&&) noexcept = default;
SteppedPrediction::~SteppedPrediction() = default;

bool SteppedPrediction::advance(double give_up_above_us) { return state_->model.advance(give_up_above_us); }
double SteppedPrediction::elapsed_us() const { return state_->model.elapsed_us(); }
Prediction SteppedPrediction::prediction() const { return state_->model.prediction(); }

namespace {

// The least L(m, τ) over every τ from `tau` on: transfer_time is linear in τ between the described
// points and grows beyond the last, so the least is at `tau` or at a point beyond it.
double least_transfer_time(const Channel& channel, long long bytes, double tau) {
  double least = channel.transfer_time(bytes, tau);
  for (const TransferPoint& point : channel.transfer)
    if (point.tau > tau) least = std::min(least, channel.transfer_time(bytes, point.tau));
  return least;
}

}  // namespace

double rank_work_lower_bound_us(const Platform& platform, const CheckSetup& call, const std::vector<int>& node_of_rank,
                                int rank, const Schedule& schedule) {
  const RankProfile profile = rank_profile(call, rank, schedule);
  const auto pack_us = [&](long long bytes) {
    return platform.pack_gbytes_per_s > 0 ? static_cast<double>(bytes) * 1e-3 / platform.pack_gbytes_per_s : 0.0;
  };
  const int node = node_of_rank.at(static_cast<std::size_t>(rank));
  double total = 0;
  auto listed = profile.steps.begin();  // the profile's steps are the active ones, ascending
  for (std::size_t s = 0; s < schedule.steps.size(); ++s) {
    // As CostModel costs a step: the reductions (copies count nothing here), then the sends one after
    // another, each with its overhead; a send that is not eager is done a transfer later at the
    // earliest. Then every message received, after the rank's own sends, with its overhead.
    double t = 0, sends_done = 0, unpacked = 0;
    if (listed != profile.steps.end() && listed->step == s) {
      if (platform.reduce_gbytes_per_s > 0)
        t += static_cast<double>(listed->reduced_bytes) * 1e-3 / platform.reduce_gbytes_per_s;
      // The rank's own messages share its node's channels in the step: a message's τ is at least
      // theirs, Σ_j min(w_j, w) / w over its own on the same channel (memory, or the NIC leaving).
      std::array<ChannelLoad, 2> own_work;  // inside the node, between nodes
      for (std::uint32_t i = listed->first; i < listed->first + listed->count; ++i) {
        const ProfileItem& item = profile.items[i];
        if (item.kind == ProfileItem::Kind::copy && !platform.local_copies_free)
          t += least_transfer_time(platform.shm, item.bytes, 1.0);
        if (item.kind != ProfileItem::Kind::send) continue;
        const bool inside = node_of_rank.at(static_cast<std::size_t>(item.peer)) == node;
        const Channel& channel = inside ? platform.shm : platform.net;
        own_work[inside ? 0 : 1].add(static_cast<double>(item.bytes) /
                                     channel.size_factor(item.bytes).bandwidth_factor);
      }
      for (ChannelLoad& load : own_work) load.finish();
      const auto own_tau = [&](bool inside, double work) {
        const double shared = own_work[inside ? 0 : 1].shared(work);
        return std::max(1.0, work > 0 ? shared / work : shared);
      };
      for (std::uint32_t i = listed->first; i < listed->first + listed->count; ++i) {
        const ProfileItem& item = profile.items[i];
        if (item.kind != ProfileItem::Kind::send) continue;
        const bool inside = node_of_rank.at(static_cast<std::size_t>(item.peer)) == node;
        const Channel& channel = inside ? platform.shm : platform.net;
        t += channel.overhead(item.bytes) + (item.scattered ? pack_us(item.bytes) : 0.0);
        double done = t;
        if (item.bytes >= channel.eager_threshold_bytes) {
          const double tau =
              own_tau(inside, static_cast<double>(item.bytes) / channel.size_factor(item.bytes).bandwidth_factor);
          done += inside ? platform.shm_copies_per_message * least_transfer_time(platform.shm, item.bytes, tau)
                         : platform.nic_copies_per_message * least_transfer_time(platform.shm, item.bytes, tau) +
                               least_transfer_time(platform.net, item.bytes, tau);
        }
        sends_done = std::max(sends_done, done);
      }
      unpacked = pack_us(listed->unpacked_bytes);
      ++listed;
    }
    sends_done = std::max(sends_done, t);
    for (const Transfer& recv : schedule.steps[s].recvs) {
      const WireMessage message = wire_message(call, rank, recv.region, rank);
      if (message.skipped) continue;
      const bool inside = node_of_rank.at(static_cast<std::size_t>(recv.peer)) == node;
      t += (inside ? platform.shm : platform.net).receive_overhead_us + (message.header ? platform.probe_us : 0.0);
    }
    total += std::max(t + unpacked, sends_done);
  }
  // Less a billionth: the model adds the same terms in another order, which may round lower.
  return total * (1 - 1e-9);
}

std::string rank_symmetry_violation(const CheckSetup& call, const RankSymmetry& symmetry,
                                    const std::function<Schedule(int rank)>& schedule_of) {
  // One node: every relabeling keeps it, so every rank is checked against its orbit's representative.
  const RankOrbits orbits(symmetry, std::vector<int>(static_cast<std::size_t>(call.p), 0));
  if (symmetry.kind != RankSymmetry::Kind::none && orbits.kind() == RankSymmetry::Kind::none)
    return "the declared symmetry does not fit p = " + std::to_string(call.p);
  std::vector<RankProfile> representatives;
  for (int orbit = 0; orbit < orbits.representatives(); ++orbit) {
    const int rank = orbits.representative_rank(orbit);
    representatives.push_back(rank_profile(call, rank, schedule_of(rank)));
  }
  for (int rank = 0; rank < call.p; ++rank) {
    if (orbits.is_representative(rank)) continue;
    const int orbit = orbits.orbit_of(rank);
    std::string mismatch =
        relabeling_mismatch(orbits, orbits.representative_rank(orbit), representatives[static_cast<std::size_t>(orbit)],
                            rank, rank_profile(call, rank, schedule_of(rank)));
    if (!mismatch.empty()) return mismatch;
  }
  return "";
}

std::vector<double> dissemination_barrier_exit_us(const Platform& platform, const std::vector<int>& node_of_rank) {
  const int p = static_cast<int>(node_of_rank.size());
  // Round k: send to rank + 2^k, receive from rank - 2^k (one byte stands for the empty message).
  const auto schedule_of = [p](int rank) {
    Schedule schedule;
    for (int distance = 1; distance < p; distance *= 2) {
      Step step;
      step.sends.push_back({(rank + distance) % p, Region{Buffer::recv, {rank}}});
      step.recvs.push_back({(rank - distance + p) % p, Region{Buffer::recv, {(rank - distance + p) % p}}});
      schedule.steps.push_back(std::move(step));
    }
    return schedule;
  };
  const CheckSetup call{BlockNaming::allgather, p, {}};
  CostModel model(platform, call, node_of_rank, {RankSymmetry::Kind::rotation}, {});
  std::vector<double> exit(static_cast<std::size_t>(p), 0.0);
  model.prepare([&](int rank) { return rank_profile(call, rank, schedule_of(rank)); }, {});
  model.advance(std::numeric_limits<double>::infinity());
  model.prediction(&exit);
  return exit;
}

}  // namespace collshim::model
