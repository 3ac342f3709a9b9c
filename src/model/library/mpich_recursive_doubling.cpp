// MPICH's recursive-doubling Allgather at any p (Thakur et al. 2005; SMPI's allgather__rdb, which
// both its ompi and mpich selectors run), as a block schedule for the cost model only: collshim's
// own recursive_doubling is defined for powers of two, and this one is not a collshim algorithm.
//
// Stage s (group 2^s): a rank exchanges everything it holds, the blocks of its aligned group of 2^s
// ranks that exist, with rank XOR 2^s if that rank exists. Where the partner group is cut short by
// p, the ranks of the lower group without a partner receive the partner group's blocks afterwards by
// a binomial tree inside their own group, from the ranks that got them (log2 2^s sub-steps, mostly
// empty). So every rank holds its whole group before the next stage, and all p blocks at the end.
// Every stage keeps 1 + s steps for every rank (empty where it has nothing to do), so that all ranks
// have the same step count, as the model requires.
#include "model/library/mpich_recursive_doubling.hpp"

#include <algorithm>

namespace collshim::model {

BlockSchedule mpich_recursive_doubling_schedule(int p, int rank) {
  BlockSchedule schedule;
  // The blocks rank q holds at the start of the stage of groups of `group`: its group's, up to p.
  auto group_first = [](int q, int group) { return q & ~(group - 1); };
  auto held = [&](int q, int group) { return std::min(group, p - group_first(q, group)); };
  auto blocks = [](int first, int count) {
    std::vector<int> list;
    for (int b = first; b < first + count; ++b) list.push_back(b);
    return list;
  };
  for (int group = 1, level = 0; group < p; group <<= 1, ++level) {
    const int partner = rank ^ group;
    const int own_first = group_first(rank, group), partner_first = group_first(partner, group);
    BlockStep exchange;
    if (partner < p) {
      exchange.sends.push_back({partner, blocks(own_first, held(rank, group))});
      exchange.recvs.push_back({partner, blocks(partner_first, held(partner, group))});
    }
    schedule.steps.push_back(std::move(exchange));
    // The partner group is cut short (only a lower group's partner group can be): its `present`
    // ranks' blocks go down a binomial tree of the lower group, from its first `present` ranks.
    const int present = p - partner_first;
    const bool cut_short = partner_first > own_first && partner_first + group > p && present > 0;
    for (int half = group >> 1, span = group; half > 0; half >>= 1, span >>= 1) {
      BlockStep tree;
      if (cut_short) {
        const int peer = rank ^ half;
        const int subtree_first = group_first(rank, span);
        const bool has = rank < subtree_first + present, peer_has = peer < subtree_first + present;
        if (peer > rank && has && !peer_has) tree.sends.push_back({peer, blocks(partner_first, present)});
        if (peer < rank && peer_has && !has) tree.recvs.push_back({peer, blocks(partner_first, present)});
      }
      schedule.steps.push_back(std::move(tree));
    }
  }
  return schedule;
}

}  // namespace collshim::model
