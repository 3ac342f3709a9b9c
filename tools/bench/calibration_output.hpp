#pragma once
// What collshim-bench --calibrate prints on standard output (rank 0) for collshim-tune calibrate,
// which reads it back through the launcher: the placement the job got, and with `--calibrate -`
// the description between two marker lines. Every line is a YAML comment or the description
// itself, so the output redirected to a file is a usable description. No MPI here: collshim-tune
// includes it.
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

namespace collshim::bench {

inline constexpr std::string_view calibration_prefix = "# collshim-bench --calibrate: ";
inline constexpr std::string_view description_begins = "# collshim-bench --calibrate: the description follows";
inline constexpr std::string_view description_ends = "# collshim-bench --calibrate: end of the description";

// The job as collshim-bench sees it: whether it can calibrate is decided from this.
struct CalibrationLayout {
  int ranks = 0, nodes = 0;
  int fullest = 0;  // ranks on the node with the most

  // Two nodes to measure the network, two ranks on one of them to measure its memory.
  bool enough() const { return nodes >= 2 && fullest >= 2; }
};

inline std::string layout_line(const CalibrationLayout& layout) {
  char text[160];
  std::snprintf(text, sizeof text, "%.*s%d ranks on %d node(s), at most %d on one node",
                static_cast<int>(calibration_prefix.size()), calibration_prefix.data(), layout.ranks, layout.nodes,
                layout.fullest);
  return text;
}

// The layout from its line; anything else (the markers included) is nullopt.
inline std::optional<CalibrationLayout> parse_layout_line(std::string_view line) {
  if (!line.starts_with(calibration_prefix)) return std::nullopt;
  const std::string rest(line.substr(calibration_prefix.size()));
  CalibrationLayout layout;
  int consumed = 0;
  if (std::sscanf(rest.c_str(), "%d ranks on %d node(s), at most %d on one node%n", &layout.ranks, &layout.nodes,
                  &layout.fullest, &consumed) != 3 ||
      consumed != static_cast<int>(rest.size()))
    return std::nullopt;
  return layout;
}

}  // namespace collshim::bench
