#pragma once
// `collshim-tune plot`: per sweep (platform, collective, variant, mapping, ranks per node), the fastest
// implementation of every measured (process count, block size) cell and its speed-up over native,
// ready for tools/tune/plot_heatmaps.py to draw. No MPI: unit-tested.
#include <optional>
#include <string>
#include <vector>

#include "rule_synthesis.hpp"

namespace collshim::tune {

struct WinnerMap {
  std::string title, file;             // "allgather (uniform) on yahoo, sequential, 8 per node"; "winners-....png"
  std::vector<int> procs;              // columns
  std::vector<long long> block_bytes;  // rows
  std::vector<std::vector<std::string>> winner;  // [row][column]; empty: not measured
  // native / winner; in a map of predictions (no native) the runner-up / winner, the winner's lead
  std::vector<std::vector<std::optional<double>>> speedup;
  std::string speedup_title = "its speed-up over native (native time / its time)";
};

std::vector<WinnerMap> winner_maps(const std::vector<Measurement>& measurements);
std::string winner_maps_json(const std::vector<WinnerMap>& maps);

}  // namespace collshim::tune
