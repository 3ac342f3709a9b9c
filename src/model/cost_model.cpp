#include "model/cost_model.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>

#include "algorithms/call_layout.hpp"
#include "model/rank_orbits.hpp"

namespace collshim::model {
namespace {

// Per step and node orbit (rank_orbits.hpp): the representatives' counts that set τ.
struct Concurrency {
  std::size_t orbits = 0;
  std::vector<int> inside;    // messages that start and end in the node
  std::vector<int> leaving;   // network messages leaving the node
  std::vector<int> arriving;  // network messages arriving at the node
  std::vector<int> copying;   // ranks of the node that copy or reduce locally

  void resize(std::size_t steps) {
    for (auto* counts : {&inside, &leaving, &arriving, &copying}) counts->assign(steps * orbits, 0);
  }
  std::size_t at(std::size_t step, int orbit) const { return step * orbits + static_cast<std::size_t>(orbit); }
};

// Where the executor builds an `hindexed` type (a typed region whose blocks are not one run), the
// MPI library packs on send and unpacks on receipt: the thesis's p(m), first and last transfer only.
bool scattered(const Region& region) {
  return !is_packed(region.buffer) && region.blocks.runs().size() > 1;
}

}  // namespace

RankProfile rank_profile(const CheckSetup& call, int rank, const Schedule& schedule) {
  RankProfile profile;
  profile.steps.resize(schedule.steps.size());
  profile.opaque.resize(schedule.steps.size());
  for (std::size_t s = 0; s < schedule.steps.size(); ++s) {
    const Step& step = schedule.steps[s];
    ProfileStep& compact = profile.steps[s];
    auto& items = profile.items;
    compact.first = static_cast<std::uint32_t>(items.size());
    profile.opaque[s] = step.opaque.has_value();
    for (const LocalCopy& copy : step.copies) {
      const long long bytes = payload_bytes(call, rank, copy.from);
      if (copy.from == copy.to || bytes == 0) continue;  // in place or empty: the engine moves nothing
      items.push_back({ProfileItem::Kind::copy, false, rank, bytes});
    }
    for (const LocalReduce& reduce : step.reductions) compact.reduced_bytes += payload_bytes(call, rank, reduce.from);
    for (const Transfer& send : step.sends) {
      const auto [skipped, bytes] = wire_message(call, rank, send.region, send.peer);
      if (!skipped) items.push_back({ProfileItem::Kind::send, scattered(send.region), send.peer, bytes});
    }
    compact.count = static_cast<std::uint32_t>(items.size() - compact.first);
    for (const Transfer& recv : step.recvs) {
      if (!scattered(recv.region)) continue;
      const auto [skipped, bytes] = wire_message(call, rank, recv.region, rank);
      if (!skipped) compact.unpacked_bytes += bytes;
    }
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
  if (of_rank.steps.size() != of_model.steps.size())
    return where + ": " + std::to_string(of_rank.steps.size()) + " steps, not " + std::to_string(of_model.steps.size());
  for (std::size_t s = 0; s < of_model.steps.size(); ++s) {
    const ProfileStep& a = of_model.steps[s];
    const ProfileStep& b = of_rank.steps[s];
    const std::string at = where + ", step " + std::to_string(s) + ": ";
    if (a.count != b.count) return at + std::to_string(b.count) + " messages and copies, not " + std::to_string(a.count);
    if (a.reduced_bytes != b.reduced_bytes) return at + "reduces " + std::to_string(b.reduced_bytes) + " bytes, not " + std::to_string(a.reduced_bytes);
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
  std::map<int, int> index;  // node ids as given to 0..M-1
  std::vector<int> nodes;
  for (const int node : node_of_rank) nodes.push_back(index.try_emplace(node, static_cast<int>(index.size())).first->second);
  return nodes;
}

// node_of_rank, once it and start_us have been checked to have p entries.
const std::vector<int>& checked_sizes(const CheckSetup& call, const std::vector<int>& node_of_rank,
                                      const std::vector<double>& start_us) {
  if (static_cast<int>(node_of_rank.size()) != call.p)
    throw std::invalid_argument("node_of_rank has " + std::to_string(node_of_rank.size()) + " entries for p = " +
                                std::to_string(call.p));
  if (!start_us.empty() && static_cast<int>(start_us.size()) != call.p)
    throw std::invalid_argument("start_us has " + std::to_string(start_us.size()) + " entries for p = " + std::to_string(call.p));
  return node_of_rank;
}

// The switch of every rank's node, where the platform has more than one (Platform::nodes_per_switch).
std::vector<int> switches_of(const Platform& platform, const std::vector<int>& node_of_rank) {
  if (platform.nodes_per_switch.empty()) return {};
  std::vector<int> switches;
  for (const int node : node_of_rank) switches.push_back(platform.switch_of_node(node));
  return switches;
}

class CostModel {
 public:
  CostModel(const Platform& platform, const CheckSetup& call, const std::vector<int>& node_of_rank,
            const RankSymmetry& symmetry, const std::vector<double>& start_us)
      : platform_(platform),
        call_(call),
        node_(numbered_nodes(checked_sizes(call, node_of_rank, start_us))),
        switch_of_rank_(switches_of(platform, node_)),
        // Where packing costs, which messages are scattered is not symmetric: every rank is costed.
        orbits_(platform.pack_gbytes_per_s > 0 ? RankSymmetry{} : symmetry, node_, start_us, switch_of_rank_) {
    concurrency_.orbits = static_cast<std::size_t>(orbits_.node_orbits());
  }

  Prediction run(const std::function<RankProfile(int rank)>& one_profile, const std::vector<double>& start_us,
                 std::vector<double>* end_us = nullptr,
                 const std::function<std::vector<RankProfile>()>& every_profile = {}) {
    // Indices below are orbits, one rank costed for each (orbits_.representative_rank).
    const int ranks = orbits_.representatives();
    // Beyond a few dozen ranks to cost, a form that gives every rank's profile at once is cheaper.
    constexpr int every_profile_above = 32;
    std::vector<RankProfile> every;
    if (every_profile && ranks > every_profile_above) every = every_profile();
    const auto profile_of = [&](int rank) {  // each rank is asked for once at most
      return every.empty() ? one_profile(rank) : std::move(every[static_cast<std::size_t>(rank)]);
    };
    for (int r = 0; r < ranks; ++r) {
      const int rank = orbits_.representative_rank(r);
      record(r, profile_of(rank));
    }
    check_relabeled_ranks(profile_of);

    std::vector<double> clock(static_cast<std::size_t>(ranks), 0.0);
    for (int r = 0; r < ranks && !start_us.empty(); ++r) clock[r] = start_us[orbits_.representative_rank(r)];
    std::vector<double> posted_at(clock.size()), busy_until(clock.size()), sends_done(clock.size());
    std::vector<std::vector<std::pair<double, bool>>> arrivals(clock.size());  // (time, between nodes)
    Prediction prediction;
    prediction.ranks_costed = ranks;
    prediction.steps.resize(steps_);
    for (std::size_t s = 0; s < steps_; ++s) {
      for (int r = 0; r < ranks; ++r) posted_at[r] = posted(r, s, clock[r]);
      for (int r = 0; r < ranks; ++r) send(r, s, posted_at, busy_until[r], sends_done[r], arrivals);
      StepPrediction& step = prediction.steps[s];
      step.opaque = opaque_[s];
      for (int r = 0; r < ranks; ++r) {
        auto& incoming = arrivals[static_cast<std::size_t>(r)];
        std::sort(incoming.begin(), incoming.end());
        double t = busy_until[r];
        for (const auto& [arrival, between_nodes] : incoming)
          t = std::max(t, arrival) + (between_nodes ? platform_.net : platform_.shm).receive_overhead_us;
        incoming.clear();
        t += pack_us(profiles_[static_cast<std::size_t>(r)].steps[s].unpacked_bytes);
        const double end = std::max(t, sends_done[r]);
        if (end - clock[r] > step.us) step.us = end - clock[r], step.slowest_rank = orbits_.representative_rank(r);
        clock[r] = end;
      }
      prediction.approximated = prediction.approximated || step.opaque;
    }
    for (int r = 0; r < ranks; ++r)
      prediction.us = std::max(prediction.us, clock[r] - (start_us.empty() ? 0.0 : start_us[orbits_.representative_rank(r)]));
    if (end_us) {
      end_us->resize(static_cast<std::size_t>(call_.p));
      for (int r = 0; r < call_.p; ++r) (*end_us)[r] = clock[orbits_.orbit_of(r)];
    }
    return prediction;
  }

 private:
  // Pass 1: a representative's profile, and its share of every step's concurrency (τ per node).
  void record(int index, RankProfile profile) {
    const int rank = orbits_.representative_rank(index);
    if (index == 0) {
      steps_ = profile.steps.size();
      concurrency_.resize(steps_);
      opaque_ = profile.opaque;
    } else if (profile.steps.size() != steps_) {
      throw std::invalid_argument("rank " + std::to_string(rank) + " has " + std::to_string(profile.steps.size()) +
                                  " steps, rank 0 has " + std::to_string(steps_));
    }
    const int orbit = orbits_.node_orbit(node_[rank]);
    for (std::size_t s = 0; s < steps_; ++s) {
      opaque_[s] = opaque_[s] || profile.opaque[s];
      const ProfileStep& compact = profile.steps[s];
      bool copies = compact.reduced_bytes > 0;
      for (std::uint32_t i = compact.first; i < compact.first + compact.count; ++i) {
        const ProfileItem& item = profile.items[i];
        if (item.kind == ProfileItem::Kind::copy) {
          copies = true;
        } else if (const int destination = node_[item.peer]; destination == node_[rank]) {
          ++concurrency_.inside[concurrency_.at(s, orbit)];
        } else {
          ++concurrency_.leaving[concurrency_.at(s, orbit)];
          ++concurrency_.arriving[concurrency_.at(s, orbits_.node_orbit(destination))];
        }
      }
      if (copies) ++concurrency_.copying[concurrency_.at(s, orbit)];
    }
    profiles_.push_back(std::move(profile));
  }

  // The symmetry is the algorithm's claim (the unit tests check it for every rank up to p = 130);
  // here ranks spread over all p, the representatives skipped, are checked against it.
  void check_relabeled_ranks(const std::function<RankProfile(int rank)>& profile_of) const {
    constexpr int samples = 16;
    for (int i = 0; i < samples && orbits_.representatives() < call_.p; ++i) {
      const int rank = static_cast<int>(static_cast<long long>(call_.p - 1) * i / (samples - 1));
      if (orbits_.is_representative(rank)) continue;
      const int orbit = orbits_.orbit_of(rank);
      const std::string mismatch = relabeling_mismatch(orbits_, orbits_.representative_rank(orbit), profiles_[static_cast<std::size_t>(orbit)],
                                                       rank, profile_of(rank));
      if (!mismatch.empty()) throw std::logic_error("the schedules lack the symmetry their algorithm declares: " + mismatch);
    }
  }

  // A node's count in a step, from its orbit's.
  int count(const std::vector<int>& counts, std::size_t s, int node) const {
    const int orbit = orbits_.node_orbit(node);
    return orbits_.per_node(counts[concurrency_.at(s, orbit)], orbit);
  }

  double pack_us(long long bytes) const {
    return platform_.pack_gbytes_per_s > 0 ? static_cast<double>(bytes) * 1e-3 / platform_.pack_gbytes_per_s : 0.0;
  }

  // τ on a node's memory channel: its messages inside, and with network_crosses_memory also the
  // network messages leaving and arriving there.
  int memory_tau(std::size_t s, int node) const {
    const int network =
        platform_.network_crosses_memory ? count(concurrency_.leaving, s, node) + count(concurrency_.arriving, s, node) : 0;
    return count(concurrency_.inside, s, node) + network;
  }

  // Pass 2, per step. First the rank's local copies and reductions from its clock: then it posts
  // its receives and sends.
  double posted(int orbit, std::size_t s, double clock) const {
    const RankProfile& profile = profiles_[static_cast<std::size_t>(orbit)];
    const ProfileStep& compact = profile.steps[s];
    double t = clock;
    if (platform_.reduce_gbytes_per_s > 0) t += static_cast<double>(compact.reduced_bytes) * 1e-3 / platform_.reduce_gbytes_per_s;
    const int copiers = count(concurrency_.copying, s, node_[orbits_.representative_rank(orbit)]);
    for (std::uint32_t i = compact.first; i < compact.first + compact.count && profile.items[i].kind == ProfileItem::Kind::copy; ++i)
      if (!platform_.local_copies_free) t += platform_.shm.transfer_time(profile.items[i].bytes, copiers);
    return t;
  }

  // Then its sends, one after another from when it posted; a message moves from its injection (or,
  // where transfers wait for the receiver, from when the receiver posted, if later) for one
  // transmission time. It arrives at the representative of its receiver's orbit.
  void send(int orbit, std::size_t s, const std::vector<double>& posted_at, double& busy_until, double& sends_done,
            std::vector<std::vector<std::pair<double, bool>>>& arrivals) const {
    const int node = node_[orbits_.representative_rank(orbit)];
    const Channel& shm = platform_.shm;
    const Channel& net = platform_.net;
    const RankProfile& profile = profiles_[static_cast<std::size_t>(orbit)];
    const ProfileStep& compact = profile.steps[s];
    double t = posted_at[orbit];
    sends_done = t;
    for (std::uint32_t i = compact.first; i < compact.first + compact.count; ++i) {
      const ProfileItem& item = profile.items[i];
      if (item.kind == ProfileItem::Kind::copy) continue;
      const int destination = node_[item.peer];
      const int receiver = orbits_.orbit_of(item.peer);
      const Channel& channel = destination == node ? shm : net;
      double transfer = 0;
      if (destination == node) {
        transfer = platform_.shm_copies_per_message * shm.transfer_time(item.bytes, memory_tau(s, node));
      } else {
        const int tau = std::max(count(concurrency_.leaving, s, node), count(concurrency_.arriving, s, destination));
        transfer = platform_.nic_copies_per_message * shm.transfer_time(item.bytes, tau) + net.transfer_time(item.bytes, tau);
        if (!switch_of_rank_.empty() && switch_of_rank_[orbits_.representative_rank(orbit)] != switch_of_rank_[item.peer])
          transfer += platform_.across_switches_latency_us * net.size_factor(item.bytes).latency_factor;
        if (platform_.network_crosses_memory)  // the slowest of the NIC and the two nodes' memory links
          transfer = std::max({transfer, shm.transfer_time(item.bytes, memory_tau(s, node)),
                               shm.transfer_time(item.bytes, memory_tau(s, destination))});
      }
      t += channel.overhead(item.bytes) + (item.scattered ? pack_us(item.bytes) : 0.0);
      const double start = platform_.transfers_wait_for_receiver ? std::max(t, posted_at[receiver]) : t;
      arrivals[static_cast<std::size_t>(receiver)].emplace_back(start + transfer, destination != node);
      const bool eager = item.bytes < channel.eager_threshold_bytes;
      sends_done = std::max(sends_done, eager ? t : start + transfer);
    }
    busy_until = t;
  }

  const Platform& platform_;
  const CheckSetup call_;  // a copy: callers may pass a temporary
  std::vector<int> node_;  // rank -> node index 0..M-1
  std::vector<int> switch_of_rank_;  // empty where the platform has one switch
  RankOrbits orbits_;      // the ranks costed: one per orbit
  std::size_t steps_ = 0;
  Concurrency concurrency_;
  std::vector<bool> opaque_;             // per step
  std::vector<RankProfile> profiles_;    // per representative
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
                   const RankSymmetry& symmetry, const std::function<std::vector<RankProfile>()>& every_profile) {
  return CostModel(platform, call, node_of_rank, symmetry, start_us).run(profile_of, start_us, nullptr, every_profile);
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
    std::string mismatch = relabeling_mismatch(orbits, orbits.representative_rank(orbit), representatives[static_cast<std::size_t>(orbit)], rank,
                                               rank_profile(call, rank, schedule_of(rank)));
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
  model.run([&](int rank) { return rank_profile(call, rank, schedule_of(rank)); }, {}, &exit);
  return exit;
}

}  // namespace collshim::model
