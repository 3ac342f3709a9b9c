// Bruck's Alltoall with radix k (Bruck et al. 1997; what MPICH and Open MPI run for small blocks at
// many ranks): ceil(log_k p) phases of at most k-1 messages each, instead of p-1 messages. The block
// from origin o for destination t travels the distance delta = (t - o) mod p written in base k: in
// phase j it moves digit_j(delta) * k^j ranks forward (nothing when the digit is 0), so after the last
// phase it is at o + delta = t. A byte is forwarded up to ceil(log_k p) times: worth it where
// start-ups dominate (small blocks, many ranks).
//
// As a schedule it is shaped like the grid's (alltoallv_grid.cpp): step 0 packs every outgoing block
// into scratch (block o*p+t), step j sends each held block whose digit j is d to rank + d*k^j, and the
// step after a block reaches its destination unpacks it. The rotations of the textbook form are not
// needed: scratch blocks are named, not placed. Forwarded blocks' sizes travel in the engine's
// headers; the schedule does not depend on the counts.
//
// Incoming, per phase: before phase j the block (o, t) sits at o + (delta mod k^j), so what rank r
// receives from r - d*k^j is every delta with digit j equal to d, with o = r - d*k^j - (delta mod k^j):
// O(p) per phase, no enumeration of all p^2 blocks.
#include <algorithm>
#include <map>

#include "algorithms/alltoall/alltoallv_algorithms.hpp"

namespace collshim {

Schedule bruck_alltoall_schedule(const std::vector<int>& node_of_rank, int rank, const Params& params) {
  const int p = static_cast<int>(node_of_rank.size());
  const int k = param_int(params, "radix");
  const auto item = [p](std::int64_t origin, std::int64_t destination) { return origin * p + destination; };
  const auto mod = [p](long long x) { return static_cast<int>(((x % p) + p) % p); };
  const auto delta_of = [&](std::int64_t held) { return mod(held % p - held / p); };
  int phases = 0;
  for (long long reach = 1; reach < p; reach *= k) ++phases;

  Schedule schedule;
  schedule.steps.resize(static_cast<std::size_t>(phases) + 1);
  Step& first = schedule.steps.front();
  std::vector<std::int64_t> held = pack_outgoing_items(p, rank, first);  // never this rank's own deliveries

  long long weight = 1;  // k^j
  for (int j = 0; j < phases; ++j, weight *= k) {
    Step& step = schedule.steps[j];
    const auto digit = [&](int delta) { return static_cast<int>(delta / weight % k); };
    // Sent in order of the digit, as received: every rank then posts to the same distances in the
    // same order (the cost model relies on that symmetry).
    std::map<int, std::vector<std::int64_t>> outgoing;  // by digit
    std::vector<std::int64_t> staying;
    for (const std::int64_t block : held) {
      const int d = digit(delta_of(block));
      (d == 0 ? staying : outgoing[d]).push_back(block);
    }
    for (auto& [d, blocks] : outgoing)
      step.sends.push_back({mod(rank + d * weight), {Buffer::scratch, std::move(blocks)}});

    Step& after = schedule.steps[j + 1];
    LocalCopy deliver{{Buffer::scratch, {}}, {Buffer::recv, {}}};
    held = std::move(staying);
    for (int d = 1; d < k; ++d) {
      const int from = mod(rank - d * weight);
      if (from == rank) continue;  // d * k^j a multiple of p: no delta has this digit (delta < p)
      std::vector<std::int64_t> blocks;
      for (int delta = 1; delta < p; ++delta) {
        if (digit(delta) != d) continue;
        const int origin = mod(rank - d * weight - delta % weight);
        const int destination = mod(origin + delta);
        blocks.push_back(item(origin, destination));
        if (destination == rank) {
          deliver.from.blocks.push_back(item(origin, destination));
          deliver.to.blocks.push_back(origin);
        } else {
          held.push_back(item(origin, destination));
        }
      }
      if (blocks.empty()) continue;
      std::sort(blocks.begin(), blocks.end());  // the sender lists its blocks in ascending order
      step.recvs.push_back({from, {Buffer::scratch, std::move(blocks)}});
    }
    std::sort(held.begin(), held.end());
    if (!deliver.from.blocks.empty()) after.copies.push_back(std::move(deliver));
  }
  return schedule;
}

}  // namespace collshim
