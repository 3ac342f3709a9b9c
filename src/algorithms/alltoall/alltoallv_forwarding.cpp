// The forwarding machinery shared by the grid and node-grid Alltoallv: packing, one message per peer
// and phase, delivery. Forwarded blocks' sizes are unknown to their receivers: the engine puts a size
// header in front of such a message and the receiver probes for its length; a message whose blocks
// the receiver knows (its own recvcounts) needs neither, and an empty one is skipped by both sides.
#include <algorithm>

#include "algorithms/alltoall/alltoallv_algorithms.hpp"

namespace collshim {

std::vector<std::int64_t> pack_outgoing_items(int p, int rank, Step& first) {
  first.copies.push_back(own_alltoallv_block(rank));
  LocalCopy pack{{Buffer::send, {}}, {Buffer::scratch, {}}};
  std::vector<std::int64_t> items;
  for (int destination = 0; destination < p; ++destination) {
    if (destination == rank) continue;
    pack.from.blocks.push_back(destination);
    items.push_back(static_cast<std::int64_t>(rank) * p + destination);  // the item (origin, destination)
  }
  pack.to.blocks = items;  // packed into scratch as the items they are
  if (!items.empty()) first.copies.push_back(std::move(pack));
  return items;
}

Schedule forwarding_alltoallv_schedule(int p, int rank, const ForwardingRoute& route) {
  Schedule schedule;
  schedule.steps.resize(static_cast<std::size_t>(route.phases) + 1);
  Step& first = schedule.steps.front();
  std::vector<std::int64_t> held = pack_outgoing_items(p, rank, first);  // never its own deliveries

  for (int j = 0; j < route.phases; ++j) {
    Step& step = schedule.steps[j];
    std::map<int, std::vector<std::int64_t>> outgoing;
    std::vector<std::int64_t> staying;
    for (const std::int64_t held_item : held) {
      const int next = route.next_hop(j, static_cast<int>(held_item / p), static_cast<int>(held_item % p));
      (next == rank ? staying : outgoing[next]).push_back(held_item);
    }
    for (auto& [peer, blocks] : outgoing) step.sends.push_back({peer, {Buffer::scratch, std::move(blocks)}});
    // Posted from the next rank up, cyclically: group members start with different partners, and
    // a grid's digit relabelings keep the order (the cost model's symmetry).
    std::stable_sort(step.sends.begin(), step.sends.end(), [p, rank](const Transfer& a, const Transfer& b) {
      return (a.peer - rank + p) % p < (b.peer - rank + p) % p;
    });

    Step& after = schedule.steps[j + 1];
    LocalCopy deliver{{Buffer::scratch, {}}, {Buffer::recv, {}}};
    held = std::move(staying);
    for (auto& [peer, blocks] : route.incoming(j)) {
      for (const std::int64_t arriving : blocks) {
        if (arriving % p == rank) {
          deliver.from.blocks.push_back(arriving);
          deliver.to.blocks.push_back(arriving / p);
        } else {
          held.push_back(arriving);
        }
      }
      step.recvs.push_back({peer, {Buffer::scratch, std::move(blocks)}});
    }
    // Posted from the next rank down, cyclically, mirroring the sends: the engine probes for each
    // message's length in this order, and a sender's first message goes to the rank above it.
    std::stable_sort(step.recvs.begin(), step.recvs.end(), [p, rank](const Transfer& a, const Transfer& b) {
      return (rank - a.peer + p) % p < (rank - b.peer + p) % p;
    });
    std::sort(held.begin(), held.end());
    if (!deliver.from.blocks.empty()) after.copies.push_back(std::move(deliver));
  }
  return schedule;
}

}  // namespace collshim
