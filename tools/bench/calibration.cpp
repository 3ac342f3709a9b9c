#include "calibration.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <cstdio>
#include <map>
#include <sstream>
#include <tuple>

#include "algorithms/node/node_layout.hpp"

namespace collshim::bench {
namespace {

// Where `rank` is among the first `count` of `ranks` (all of them by default), or -1.
int position_of(int rank, const std::vector<int>& ranks, std::size_t count = SIZE_MAX) {
  const auto end = ranks.begin() + static_cast<std::ptrdiff_t>(std::min(count, ranks.size()));
  const auto it = std::find(ranks.begin(), end, rank);
  return it == end ? -1 : static_cast<int>(it - ranks.begin());
}

// 1, 2, 4, ... up to `most`, and `most` itself.
std::vector<int> concurrencies(int most) {
  std::vector<int> taus;
  for (int tau = 1; tau < most; tau *= 2) taus.push_back(tau);
  taus.push_back(most);
  return taus;
}

class Calibrator {
 public:
  Calibrator(MPI_Comm comm, const CalibrationRanks& ranks, const CalibrationOptions& options)
      : comm_(comm), a_(ranks.first_node), b_(ranks.second_node), node_firsts_(ranks.node_firsts), options_(options) {
    MPI_Comm_rank(comm_, &rank_);
    const std::size_t largest = static_cast<std::size_t>(options_.max_bytes);
    send_.assign(largest, 1);
    recv_.assign(largest, 0);
  }

  model::CalibrationMeasurements run() {
    model::CalibrationMeasurements measured;
    measured.name = options_.name;
    measure_channel(measured.shm, /*network=*/false);
    measure_channel(measured.net, /*network=*/true);
    measure_mixed(measured);
    measure_local(measured);
    measure_switches(measured);
    return measured;
  }

 private:
  // `body` on the participating ranks: untimed first, then `iterations` timed; every rank gets the
  // slowest participant's time per iteration, in µs. The barrier lets ranks go at different times,
  // and in a ring that skew takes a lap per rank to wear off (measured under SMPI: a 16-rank ring
  // step read 2.02 µs after 5 untimed steps, 1.62 after 20 or 50), so a chain of `chain` ranks
  // runs at least 2 · chain untimed steps.
  double timed(bool participates, int iterations, const std::function<void()>& body, int chain = 1) {
    MPI_Barrier(comm_);
    double elapsed = 0;
    if (participates) {
      for (int i = 0; i < std::max(options_.warmup, 2 * chain); ++i) body();
      const double start = MPI_Wtime();
      for (int i = 0; i < iterations; ++i) body();
      elapsed = MPI_Wtime() - start;
    }
    MPI_Allreduce(MPI_IN_PLACE, &elapsed, 1, MPI_DOUBLE, MPI_MAX, comm_);
    return elapsed * 1e6 / iterations;
  }

  // Fewer iterations for large messages: enough to average out, not so many that a slow channel
  // makes calibration take minutes.
  int iterations_for(long long bytes) const {
    constexpr long long budget_bytes = 64LL << 20;
    return static_cast<int>(std::clamp<long long>(budget_bytes / std::max(bytes, 1LL), 5, options_.iterations));
  }

  int bytes_arg(long long bytes) const { return static_cast<int>(bytes); }

  // Messages as the shim's executor moves them: nonblocking, then waited for (SMPI, for one, charges
  // a blocking send an overhead that a nonblocking one does not pay).
  void send(int peer, int n, bool synchronous = false) {
    MPI_Request request = MPI_REQUEST_NULL;
    (synchronous ? MPI_Issend : MPI_Isend)(send_.data(), n, MPI_BYTE, peer, 0, comm_, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  }
  void receive(int peer, int n) {
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Irecv(recv_.data(), n, MPI_BYTE, peer, 0, comm_, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  }
  void send_and_receive(int to, int from, int n) {
    MPI_Request requests[2];
    MPI_Irecv(recv_.data(), n, MPI_BYTE, from, 0, comm_, &requests[0]);
    MPI_Isend(send_.data(), n, MPI_BYTE, to, 0, comm_, &requests[1]);
    MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
  }

  // τ pairs (from[i], to[i]): from sends, to answers; half the round trip. τ = 1 is a ping-pong.
  double pairs_step(const std::vector<int>& from, const std::vector<int>& to, int tau, long long bytes,
                    bool synchronous) {
    const int as_sender = position_of(rank_, from, tau), as_receiver = position_of(rank_, to, tau);
    const int n = bytes_arg(bytes);
    return timed(as_sender >= 0 || as_receiver >= 0, iterations_for(bytes),
                 [&] {
                   if (as_sender >= 0) {
                     send(to[as_sender], n, synchronous);
                     receive(to[as_sender], n);
                   } else {
                     receive(from[as_receiver], n);
                     send(from[as_receiver], n, synchronous);
                   }
                 }) /
           2.0;
  }

  // A ring: every rank sends to the next and receives from the previous, all posted at once, and
  // waits for both before the next step, so every step has all transfers concurrent.
  double ring_step(const std::vector<int>& ring, long long bytes) {
    const int size = static_cast<int>(ring.size());
    const int index = position_of(rank_, ring);
    const int n = bytes_arg(bytes);
    return timed(
        index >= 0, iterations_for(bytes),
        [&] { send_and_receive(ring[(index + 1) % size], ring[(index + size - 1) % size], n); }, size);
  }
  // The thesis's Ring^0_τ: τ ranks of node A.
  double node_ring_step(int tau, long long bytes) { return ring_step({a_.begin(), a_.begin() + tau}, bytes); }
  // The thesis's Ring^1_τ: 2τ ranks alternating between A and B, so every step moves τ messages each
  // way across the network. The ring couples them: independent ping-pong pairs drift apart and then
  // overlap less than a collective step's transfers, which are posted together (the thesis's `-ping`
  // caveat; under SMPI the pairs measured 13.5 µs per step where 32 transfers sharing the NIC take 19.5).
  double network_ring_step(int tau, long long bytes) {
    std::vector<int> ring;
    for (std::size_t i = 0; i < static_cast<std::size_t>(tau); ++i) {
      ring.push_back(a_[i]);
      ring.push_back(b_[i]);
    }
    return ring_step(ring, bytes);
  }

  // Zero-byte messages between `root` and k peers, all at once: out (root sends) or in (root
  // receives). The root's cost grows by one overhead per peer.
  double fan(int root, const std::vector<int>& peers, bool in) {
    const int k = static_cast<int>(peers.size());
    const bool is_peer = position_of(rank_, peers) >= 0;
    std::vector<MPI_Request> requests(static_cast<std::size_t>(k));
    return timed(rank_ == root || is_peer, options_.iterations, [&] {
      if (rank_ == root) {
        for (int i = 0; i < k; ++i) {
          if (in)
            MPI_Irecv(recv_.data(), 0, MPI_BYTE, peers[i], 0, comm_, &requests[i]);
          else
            MPI_Isend(send_.data(), 0, MPI_BYTE, peers[i], 0, comm_, &requests[i]);
        }
        MPI_Waitall(k, requests.data(), MPI_STATUSES_IGNORE);
      } else if (in) {
        send(root, 0);
      } else {
        receive(root, 0);
      }
    });
  }

  // The per-message slope of a fan from one peer to all available ones; none with a single peer.
  std::optional<double> fan_slope(int root, const std::vector<int>& peers, bool in) {
    if (peers.size() < 2) return std::nullopt;
    const double one = fan(root, {peers.front()}, in);
    const double all = fan(root, peers, in);
    return (all - one) / static_cast<double>(peers.size() - 1);
  }

  // Whether a send of `bytes` completes before its receive is posted (eager), and how long the
  // receive then takes. The receiver posts it only after a go-ahead the sender gives once it has
  // tested the send for a while, so no timing decides completion and a descheduled rank cannot make
  // an eager send look like a rendezvous.
  struct Probe {
    bool completed_early = false;
    double receive_us = 0;
  };
  Probe probe_send(int sender, int receiver, long long bytes) {
    MPI_Barrier(comm_);
    double result[2] = {0, 0};  // completed early, receive µs
    const int n = bytes_arg(bytes);
    constexpr int data_tag = 1, go_tag = 2;
    if (rank_ == sender) {
      MPI_Request request = MPI_REQUEST_NULL;
      MPI_Isend(send_.data(), n, MPI_BYTE, receiver, data_tag, comm_, &request);
      // At least 100 tests and 200 µs (the library's progress), at most 100000 (a simulator whose
      // clock stands still while testing).
      int done = 0, tests = 0;
      const double start = MPI_Wtime();
      while (!done && (tests < 100 || MPI_Wtime() - start < 200e-6) && tests < 100000)
        MPI_Test(&request, &done, MPI_STATUS_IGNORE), ++tests;
      result[0] = done;
      MPI_Send(send_.data(), 0, MPI_BYTE, receiver, go_tag, comm_);
      MPI_Wait(&request, MPI_STATUS_IGNORE);
    } else if (rank_ == receiver) {
      MPI_Recv(recv_.data(), 0, MPI_BYTE, sender, go_tag, comm_, MPI_STATUS_IGNORE);
      const double start = MPI_Wtime();
      MPI_Recv(recv_.data(), n, MPI_BYTE, sender, data_tag, comm_, MPI_STATUS_IGNORE);
      result[1] = (MPI_Wtime() - start) * 1e6;
    }
    MPI_Allreduce(MPI_IN_PLACE, result, 2, MPI_DOUBLE, MPI_MAX, comm_);
    return {result[0] > 0, result[1]};
  }

  void measure_channel(model::ChannelMeasurements& measured, bool network) {
    // τ = 1 is always a ping-pong: inside A between its first two ranks, else A's first and B's first.
    const std::vector<int> partners = network ? b_ : std::vector<int>(a_.begin() + 1, a_.end());
    const int most = network ? static_cast<int>(std::min(a_.size(), b_.size())) : static_cast<int>(a_.size());
    std::map<long long, double> ping_pong;  // bytes -> step at τ = 1
    for (const int tau : concurrencies(most)) {
      for (long long bytes = options_.min_bytes; bytes <= options_.max_bytes; bytes *= 2) {
        const double us = tau == 1  ? pairs_step(a_, partners, tau, bytes, false)
                          : network ? network_ring_step(tau, bytes)
                                    : node_ring_step(tau, bytes);
        measured.steps.push_back({tau, bytes, us});
        if (tau == 1) ping_pong[bytes] = us;
      }
    }
    measured.zero_byte_step_us = pairs_step(a_, partners, 1, 0, false);
    measured.synchronous_zero_byte_step_us = pairs_step(a_, partners, 1, 0, true);
    // Fans from A's first rank: to the rest of A inside the node, to B across the network.
    measured.send_overhead_us = fan_slope(a_.front(), partners, false);
    measured.receive_overhead_us = fan_slope(a_.front(), partners, true);

    // Eager below the first size whose send waits for its receiver. Three tries: one early
    // completion is proof enough on a noisy machine.
    std::optional<long long> largest_eager;
    double largest_eager_receive_us = 0;
    for (long long bytes = options_.min_bytes; bytes <= options_.max_bytes; bytes *= 2) {
      Probe probe;
      for (int i = 0; i < 3 && !probe.completed_early; ++i) probe = probe_send(a_.front(), partners.front(), bytes);
      if (!probe.completed_early) {
        measured.eager_threshold_bytes = bytes;
        break;
      }
      largest_eager = bytes, largest_eager_receive_us = probe.receive_us;
    }
    measured.largest_size_tested = options_.max_bytes;
    // An eager message that was already delivered is received with one copy out of the library's
    // buffer; one that waited for the receive to be posted takes its whole transfer time. Undecided
    // where that time is too short to tell from the receive's own cost.
    if (largest_eager) {
      const double transfer_us = ping_pong[*largest_eager] - measured.zero_byte_step_us;
      if (transfer_us >= 1.0) measured.waits_for_receiver = largest_eager_receive_us > 0.75 * transfer_us;
    }
  }

  // A's first `pairs` ranks exchange with B's (both ways at once) while the rest of A runs a ring
  // (MixedIteration): two steps of each.
  double mixed_iteration(int pairs, long long bytes) {
    const int q = static_cast<int>(a_.size()), ring = q - pairs;
    const int in_a = position_of(rank_, a_), in_b = position_of(rank_, b_);
    const int n = bytes_arg(bytes);
    const bool participates = in_a >= 0 || (in_b >= 0 && in_b < pairs);
    return timed(
        participates, iterations_for(bytes),
        [&] {
          for (int step = 0; step < 2; ++step) {
            if (in_a >= 0 && in_a < pairs)
              send_and_receive(b_[in_a], b_[in_a], n);
            else if (in_a >= pairs)
              send_and_receive(a_[pairs + (in_a - pairs + 1) % ring], a_[pairs + (in_a - pairs + ring - 1) % ring], n);
            else
              send_and_receive(a_[in_b], a_[in_b], n);
          }
        },
        ring);
  }

  // Half of A's ranks (at most B's count) on the network, the rest (at least two) in a ring; at the
  // largest size and a sixteenth of it, where bandwidth decides.
  void measure_mixed(model::CalibrationMeasurements& measured) {
    const int q = static_cast<int>(a_.size());
    const int pairs = std::min(q / 2, static_cast<int>(b_.size()));
    if (pairs < 1 || q - pairs < 2) return;
    for (const long long bytes : {std::max(options_.min_bytes, options_.max_bytes / 16), options_.max_bytes})
      measured.mixed.push_back({q - pairs, pairs, bytes, mixed_iteration(pairs, bytes)});
  }

  // One rank's local work: combining doubles, packing a strided type, copying memory.
  void measure_local(model::CalibrationMeasurements& measured) {
    double times[3] = {0, 0, 0};
    const int elements = static_cast<int>(std::max<long long>(options_.max_bytes, 1 << 20) / 8);
    const double bytes = 8.0 * elements;
    constexpr int repeats = 10;
    if (rank_ == a_.front()) {
      std::vector<double> in(static_cast<std::size_t>(elements), 1.0), inout(static_cast<std::size_t>(elements), 2.0);
      double start = MPI_Wtime();
      for (int i = 0; i < repeats; ++i) MPI_Reduce_local(in.data(), inout.data(), elements, MPI_DOUBLE, MPI_SUM);
      times[0] = MPI_Wtime() - start;

      MPI_Datatype strided = MPI_DATATYPE_NULL;  // every other double of 2·(elements / 2)
      MPI_Type_vector(elements / 2, 1, 2, MPI_DOUBLE, &strided);
      MPI_Type_commit(&strided);
      std::vector<char> packed(static_cast<std::size_t>(elements) * 4 + 64);
      start = MPI_Wtime();
      for (int i = 0; i < repeats; ++i) {
        int position = 0;
        MPI_Pack(in.data(), 1, strided, packed.data(), static_cast<int>(packed.size()), &position, comm_);
      }
      times[1] = MPI_Wtime() - start;
      MPI_Type_free(&strided);

      start = MPI_Wtime();
      for (int i = 0; i < repeats; ++i)
        std::memcpy(inout.data(), in.data(), static_cast<std::size_t>(bytes)), in[0] += inout[1];
      times[2] = MPI_Wtime() - start;
    }
    MPI_Allreduce(MPI_IN_PLACE, times, 3, MPI_DOUBLE, MPI_MAX, comm_);
    // Faster than any memory (10 TB/s) means the clock did not see the work: a simulator that does
    // not time computation, whose clock moves only by what its own calls inject.
    constexpr double untimed_gbytes_per_s = 1e4;
    const auto rate = [&](double seconds, double moved) {
      const double gbytes_per_s = seconds > 0 ? moved * repeats / seconds * 1e-9 : INFINITY;
      return gbytes_per_s < untimed_gbytes_per_s ? std::optional<double>(gbytes_per_s) : std::nullopt;
    };
    measured.reduce_gbytes_per_s = rate(times[0], bytes);
    measured.pack_gbytes_per_s = rate(times[1], bytes / 2);
    measured.copies_take_time = rate(times[2], bytes).has_value();
  }

  // Switch probes (model::SwitchProbe): a ping-pong of the smallest size from the first rank of a
  // probe node to the first rank of every later node, one pair at a time; the next probe starts
  // where the run of nodes near this one ends (every rank has the times, so every rank agrees).
  void measure_switches(model::CalibrationMeasurements& measured) {
    const int nodes = static_cast<int>(node_firsts_.size());
    if (nodes < 3) return;
    measured.switch_probe_bytes = std::max(1LL, options_.min_bytes);
    for (int from = 0; from < nodes - 1;) {
      model::SwitchProbe probe{from, {}};
      for (int to = from + 1; to < nodes; ++to)
        probe.us.push_back(pairs_step({node_firsts_[from]}, {node_firsts_[to]}, 1, measured.switch_probe_bytes, false));
      measured.switch_probes.push_back(probe);
      const std::optional<int> run = model::switch_run(probe.us);
      if (!run) break;  // fit_platform says why no switches are described
      from += 1 + *run;
    }
  }

  MPI_Comm comm_;
  int rank_ = 0;
  const std::vector<int>& a_;
  const std::vector<int>& b_;
  const std::vector<int>& node_firsts_;
  const CalibrationOptions& options_;
  std::vector<char> send_, recv_;
};

}  // namespace

CalibrationRanks calibration_ranks(const std::vector<int>& node_of_rank) {
  std::map<int, std::vector<int>> members;
  for (int r = 0; r < static_cast<int>(node_of_rank.size()); ++r) members[node_of_rank[r]].push_back(r);
  std::vector<std::vector<int>> nodes;
  for (auto& [node, ranks] : members) nodes.push_back(std::move(ranks));
  // Fullest first; among equals, the node of the lowest rank.
  std::stable_sort(nodes.begin(), nodes.end(), [](const auto& x, const auto& y) { return x.size() > y.size(); });
  CalibrationRanks result;
  if (nodes.size() < 2 || nodes.front().size() < 2) {
    result.error =
        "--calibrate needs two nodes and two ranks on one of them (to measure the network and the "
        "memory channel); found " +
        std::to_string(nodes.size()) + " node(s) with at most " +
        std::to_string(nodes.empty() ? 0 : nodes.front().size()) +
        " rank(s) per node. Run more ranks, or describe nodes with COLLSHIM_TOPOLOGY";
    return result;
  }
  result.first_node = nodes[0];
  // B's candidates: the other nodes as full as the fullest of them, in the job's node order.
  std::vector<std::vector<int>> candidates(nodes.begin() + 1, nodes.end());
  std::erase_if(candidates, [&](const std::vector<int>& ranks) { return ranks.size() < nodes[1].size(); });
  std::sort(candidates.begin(), candidates.end(),
            [&](const auto& x, const auto& y) { return node_of_rank[x.front()] < node_of_rank[y.front()]; });
  result.second_candidates = candidates;
  result.second_node = candidates.back();
  for (const std::vector<int>& members : make_node_layout(node_of_rank).members)
    result.node_firsts.push_back(members.front());
  return result;
}

model::CalibrationMeasurements measure_platform(MPI_Comm comm, const CalibrationRanks& ranks,
                                                const CalibrationOptions& options) {
  return Calibrator(comm, ranks, options).run();
}

std::size_t farthest_of(const std::vector<double>& probe_us) {
  if (probe_us.empty()) return 0;
  const double slowest = *std::max_element(probe_us.begin(), probe_us.end());
  std::size_t chosen = 0;
  for (std::size_t i = 0; i < probe_us.size(); ++i)
    if (probe_us[i] >= slowest / 1.02) chosen = i;
  return chosen;
}

FarNodeChoice choose_far_node(MPI_Comm comm, CalibrationRanks& ranks, const CalibrationOptions& options) {
  FarNodeChoice choice;
  choice.chosen = ranks.second_candidates.size() - 1;
  if (ranks.second_candidates.size() < 2) return choice;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const int a = ranks.first_node.front();
  // The smallest size, a few steps each: latency is what the switches between two nodes add.
  const int iterations = std::clamp(options.iterations, 5, 20);
  char byte = 0;
  for (const std::vector<int>& candidate : ranks.second_candidates) {
    const int b = candidate.front();
    MPI_Barrier(comm);
    double elapsed = 0;
    if (rank == a || rank == b) {
      const int peer = rank == a ? b : a;
      const auto step = [&] {
        if (rank == a) {
          MPI_Send(&byte, 1, MPI_BYTE, peer, 0, comm);
          MPI_Recv(&byte, 1, MPI_BYTE, peer, 0, comm, MPI_STATUS_IGNORE);
        } else {
          MPI_Recv(&byte, 1, MPI_BYTE, peer, 0, comm, MPI_STATUS_IGNORE);
          MPI_Send(&byte, 1, MPI_BYTE, peer, 0, comm);
        }
      };
      for (int i = 0; i < std::max(options.warmup, 2); ++i) step();
      const double start = MPI_Wtime();
      for (int i = 0; i < iterations; ++i) step();
      elapsed = MPI_Wtime() - start;
    }
    // Every rank the same time, so every rank chooses the same node.
    MPI_Allreduce(MPI_IN_PLACE, &elapsed, 1, MPI_DOUBLE, MPI_MAX, comm);
    choice.probe_us.push_back(elapsed * 1e6 / iterations / 2);
  }
  choice.chosen = farthest_of(choice.probe_us);
  ranks.second_node = ranks.second_candidates[choice.chosen];
  return choice;
}

std::string calibration_yaml(const model::CalibrationMeasurements& measured, const model::Calibration& fitted,
                             const std::vector<std::string>& provenance) {
  std::ostringstream text;
  text
      << "# A cost-model platform description measured by collshim-bench --calibrate (collshim-model predict\n"
         "# --platform). Each channel's L(m, tau) is fitted per tau as latency + m / bandwidth, bent by a\n"
         "# latency and a bandwidth factor per measured size (size_factors); see src/model/platform/calibration.hpp.\n";
  for (const std::string& line : provenance) text << "# " << line << '\n';
  char line[200];
  for (const auto& [name, channel, quality] :
       {std::tuple{"shm", &measured.shm, &fitted.shm}, std::tuple{"net", &measured.net, &fitted.net}}) {
    std::snprintf(line, sizeof line,
                  "# %s: the description gives the measured steps back with median error %.3f, worst %.3f "
                  "(tau %d, %lld B)\n",
                  name, quality->median_error, quality->max_error, quality->worst.tau, quality->worst.bytes);
    text << line;
    std::snprintf(line, sizeof line, "# %s measured: zero-byte step %.3f us%s\n", name, channel->zero_byte_step_us,
                  channel->eager_threshold_bytes ? "" : ", every size tested eager");
    text << line;
    text << "#   tau      bytes     step_us\n";
    for (const model::StepTime& step : channel->steps) {
      std::snprintf(line, sizeof line, "#   %3d %10lld %11.3f\n", step.tau, step.bytes, step.us);
      text << line;
    }
  }
  if (fitted.crossing_errors) {
    std::snprintf(line, sizeof line,
                  "# both channels at once (%zu sizes): error %.3f if network traffic stays off the nodes' memory, "
                  "%.3f if it crosses it\n",
                  measured.mixed.size(), fitted.crossing_errors->first, fitted.crossing_errors->second);
    text << line;
    model::Platform variant = fitted.platform;
    for (const model::MixedIteration& mixed : measured.mixed) {
      variant.network_crosses_memory = false;
      const double off = model::predicted_mixed_us(variant, mixed);
      variant.network_crosses_memory = true;
      const double on = model::predicted_mixed_us(variant, mixed);
      std::snprintf(line, sizeof line,
                    "#   ring of %d beside %d pairs, %lld B: %.3f us (predicted %.3f off memory, %.3f across it)\n",
                    mixed.ring, mixed.pairs, mixed.bytes, mixed.us, off, on);
      text << line;
    }
  } else {
    text << "# not measured (too few ranks on the node): whether network traffic loads the nodes' memory\n";
  }
  if (!measured.copies_take_time)
    text << "# local copies, reductions and packing took no measurable time (a simulator that does not time them)\n";
  text << "# switches: " << fitted.switches_note << '\n';
  for (const model::SwitchProbe& probe : measured.switch_probes) {
    text << "#   from node " << probe.from_node << " to nodes " << probe.from_node + 1 << ".., "
         << measured.switch_probe_bytes << " B, us:";
    for (const double us : probe.us) {
      std::snprintf(line, sizeof line, " %.2f", us);
      text << line;
    }
    text << '\n';
  }
  return text.str() + model::platform_yaml(fitted.platform);
}

}  // namespace collshim::bench
