// Rabenseifner's Allreduce: a reduce-scatter by recursive halving, then an allgather by recursive
// doubling, with MPICH's fold for p not a power of two (even ranks below 2*rem hand their vector to
// the odd rank above and get the result back at the end). In halving round s, new rank n exchanges
// with n XOR 2^s: it keeps half of its current segments and sends the other half, so each round
// moves half as much; the allgather retraces the rounds backwards. About 2 log2 p steps and twice
// the vector in bytes: for large vectors. Partners' partial results cover adjacent, aligned groups
// of new ranks, which are ascending intervals of real ranks, so combining with the lower group on
// the left keeps rank order.
#include <bit>
#include <utility>

#include "algorithms/allreduce/allreduce_algorithms.hpp"

namespace collshim {

Schedule allreduce_rabenseifner_schedule(const std::vector<int>& node_of_rank, int rank, const Params&) {
  const int p = static_cast<int>(node_of_rank.size());
  const int pof2 = static_cast<int>(std::bit_floor(static_cast<unsigned>(p)));
  const int rem = p - pof2;
  const int rounds = std::countr_zero(static_cast<unsigned>(pof2));
  const int new_rank = rank < 2 * rem ? (rank % 2 == 1 ? rank / 2 : -1) : rank - rem;
  const auto real_rank = [rem](int n) { return n < rem ? 2 * n + 1 : n + rem; };
  const auto other = [](Buffer buffer) { return buffer == Buffer::recv ? Buffer::temp : Buffer::recv; };

  Schedule schedule;
  schedule.temp_copies = p > 1 ? 1 : 0;
  schedule.steps.resize(static_cast<std::size_t>(2 * rounds + 3));
  auto& steps = schedule.steps;
  // Step 0: copy the contribution, fold. Step 1: the fold's reduction.
  steps[0].copies.push_back({whole_vector(Buffer::send, p), whole_vector(Buffer::recv, p)});
  if (rank < 2 * rem && new_rank < 0) steps[0].sends.push_back({rank + 1, whole_vector(Buffer::recv, p)});
  if (rank < 2 * rem && new_rank >= 0) {
    steps[0].recvs.push_back({rank - 1, whole_vector(Buffer::temp, p)});
    steps[1].reductions.push_back({whole_vector(Buffer::temp, p), whole_vector(Buffer::recv, p)});
  }
  if (new_rank >= 0) {
    // Reduce-scatter: round s in step 1+s, its reduction in step 2+s. `mine` holds the partial
    // result of the current segments [first, end).
    Buffer mine = Buffer::recv;
    int first = 0, end = p;
    struct Round {
      int peer;
      std::pair<int, int> kept, given;
    };
    std::vector<Round> history;
    for (int s = 0; s < rounds; ++s) {
      const int partner = new_rank ^ (1 << s);
      const int middle = first + (end - first) / 2;
      const bool lower = new_rank < partner;
      const std::pair<int, int> kept = lower ? std::pair{first, middle} : std::pair{middle, end};
      const std::pair<int, int> given = lower ? std::pair{middle, end} : std::pair{first, middle};
      Step& step = steps[static_cast<std::size_t>(1 + s)];
      step.sends.push_back({real_rank(partner), segment_range(mine, given.first, given.second)});
      step.recvs.push_back({real_rank(partner), segment_range(other(mine), kept.first, kept.second)});
      // The lower group's result is the left operand.
      Step& combine = steps[static_cast<std::size_t>(2 + s)];
      const Region own = segment_range(mine, kept.first, kept.second);
      const Region theirs = segment_range(other(mine), kept.first, kept.second);
      if (lower) {
        combine.reductions.push_back({own, theirs});
        mine = other(mine);
      } else {
        combine.reductions.push_back({theirs, own});
      }
      history.push_back({real_rank(partner), kept, given});
      first = kept.first;
      end = kept.second;
    }
    // Allgather, step 2+rounds on: the rounds backwards; the own segments first move to recvbuf.
    if (mine == Buffer::temp)
      steps[static_cast<std::size_t>(2 + rounds)].copies.push_back(
          {segment_range(Buffer::temp, first, end), segment_range(Buffer::recv, first, end)});
    for (int j = 0; j < rounds; ++j) {
      const Round& round = history[static_cast<std::size_t>(rounds - 1 - j)];
      Step& step = steps[static_cast<std::size_t>(2 + rounds + j)];
      step.sends.push_back({round.peer, segment_range(Buffer::recv, round.kept.first, round.kept.second)});
      step.recvs.push_back({round.peer, segment_range(Buffer::recv, round.given.first, round.given.second)});
    }
  }
  // Unfold: the last step.
  Step& unfold = steps.back();
  if (rank < 2 * rem && new_rank >= 0) unfold.sends.push_back({rank - 1, whole_vector(Buffer::recv, p)});
  if (rank < 2 * rem && new_rank < 0) unfold.recvs.push_back({rank + 1, whole_vector(Buffer::recv, p)});
  return schedule;
}

}  // namespace collshim
