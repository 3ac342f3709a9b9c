#include "model/library/library_alltoall.hpp"

#include <algorithm>
#include <bit>

#include "algorithms/alltoall/alltoallv_algorithms.hpp"

namespace collshim::model {
namespace {

int modulo(int x, int p) { return ((x % p) + p) % p; }

// Rank `rank`'s message to `destination` and from `source` in `step` (the own block: a copy).
void exchange(Step& step, int rank, int destination, int source) {
  if (destination == rank) {
    step.copies.push_back(own_alltoallv_block(rank));
    return;
  }
  step.recvs.push_back({source, {Buffer::recv, {source}}});
  step.sends.push_back({destination, {Buffer::send, {destination}}});
}

}  // namespace

Schedule ompi_linear_alltoall_schedule(int p, int rank) {
  Step step;
  step.copies.push_back(own_alltoallv_block(rank));
  for (int k = 1; k < p; ++k) step.recvs.push_back({modulo(rank + k, p), {Buffer::recv, {modulo(rank + k, p)}}});
  for (int k = 1; k < p; ++k) step.sends.push_back({modulo(rank - k, p), {Buffer::send, {modulo(rank - k, p)}}});
  Schedule schedule;
  schedule.steps.push_back(std::move(step));
  return schedule;
}

RankSymmetry ompi_linear_alltoall_symmetry(int /*p*/) { return {RankSymmetry::Kind::rotation}; }

Schedule ompi_linear_alltoallv_schedule(int p, int rank) {
  Step step;
  step.copies.push_back(own_alltoallv_block(rank));
  for (int peer = 0; peer < p; ++peer)
    if (peer != rank) step.recvs.push_back({peer, {Buffer::recv, {peer}}});
  for (int peer = 0; peer < p; ++peer)
    if (peer != rank) step.sends.push_back({peer, {Buffer::send, {peer}}});
  Schedule schedule;
  schedule.steps.push_back(std::move(step));
  return schedule;
}

Schedule xor_pairwise_alltoall_schedule(int p, int rank) {
  Schedule schedule;
  schedule.steps.resize(static_cast<std::size_t>(std::max(p - 1, 1)));
  schedule.steps.front().copies.push_back(own_alltoallv_block(rank));
  for (int k = 1; k < p; ++k) exchange(schedule.steps[static_cast<std::size_t>(k - 1)], rank, rank ^ k, rank ^ k);
  return schedule;
}

RankSymmetry xor_pairwise_alltoall_symmetry(int p) {
  RankSymmetry symmetry{RankSymmetry::Kind::digits};
  for (int reach = 1; reach < p; reach *= 2) symmetry.radices.push_back(2);
  if (!std::has_single_bit(static_cast<unsigned>(p)) || symmetry.radices.empty()) return {};
  return symmetry;
}

Schedule scattered_alltoall_schedule(int p, int rank, int throttle) {
  Schedule schedule;
  for (int first = 0; first < p; first += throttle) {
    Step& step = schedule.steps.emplace_back();
    for (int i = first; i < std::min(p, first + throttle); ++i)
      exchange(step, rank, modulo(rank - i, p), modulo(rank + i, p));
  }
  return schedule;
}

Schedule scatter_dest_alltoall_schedule(int p, int rank) {
  return scattered_alltoall_schedule(p, rank, scatter_dest_throttle);
}

Schedule mpich_scattered_alltoall_schedule(int p, int rank) {
  return scattered_alltoall_schedule(p, rank, mpich_alltoall_throttle);
}

RankSymmetry scattered_alltoall_symmetry(int /*p*/) { return {RankSymmetry::Kind::rotation}; }

}  // namespace collshim::model
