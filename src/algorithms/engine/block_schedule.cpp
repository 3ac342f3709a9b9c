#include "algorithms/engine/block_schedule.hpp"

#include <algorithm>

namespace collshim {
namespace {

Transfer lower_transfer(const BlockTransfer& transfer) {
  return {transfer.peer, {Buffer::recv, {transfer.blocks.begin(), transfer.blocks.end()}}};
}

}  // namespace

Schedule lower_block_schedule(const BlockSchedule& blocks, int rank) {
  Schedule schedule;
  schedule.steps.reserve(std::max<std::size_t>(blocks.steps.size(), 1));
  for (const BlockStep& block_step : blocks.steps) {
    Step& step = schedule.steps.emplace_back();
    for (const BlockTransfer& send : block_step.sends) step.sends.push_back(lower_transfer(send));
    for (const BlockTransfer& recv : block_step.recvs) step.recvs.push_back(lower_transfer(recv));
  }
  if (schedule.steps.empty()) schedule.steps.emplace_back();
  schedule.steps.front().copies.push_back({{Buffer::send, {rank}}, {Buffer::recv, {rank}}});
  return schedule;
}

}  // namespace collshim
