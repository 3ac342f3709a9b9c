#pragma once
// `collshim-tune verify`: how a rule table does against native, cell by cell, from measurements.
// Either the measurements hold the table's own row (collshim-bench --rules: algorithm "collshim"),
// or a decision function picks, per cell, one of the algorithms measured there (a table judged on
// sweeps it was not tuned on: the leave-one-platform-out check). Each library whose native was
// measured in a cell is judged apart: with the rules that library sees, against its own native. No
// MPI: unit-tested on synthetic rows.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "rule_synthesis.hpp"
#include "selector/rule_table.hpp"

namespace collshim::tune {

// A cell counts as within reach of its best when the table's time is at most this times the best.
inline constexpr double within_best_factor = 1.05;

struct VerifiedCell {
  std::string platform, variant;
  std::string library;  // whose native and rules: MpiLibrary::text() ("ompi 4.1.4", "smpi-ompi 3.32")
  Collective collective = Collective::allgather;
  int procs = 1, nodes = 1, ppn = 1;
  MappingClass mapping = MappingClass::single_node;
  long long block_bytes = 0;
  std::string decision;         // what the table runs there ("native" when it passes through)
  bool measured = true;         // false: the decision was not among the cell's measurements
  double native_us = 0;         // the library's native (the fastest of its rows in the cell)
  double table_us = 0;          // the decision's time; native_us when it passes through
  double best_us = 0;           // the fastest of the library's native and what was measured beside it
  std::string best;             // its label
  double speedup = 1;           // native_us / table_us; exactly 1 when the table passes through
  double measured_speedup = 1;  // for a pass-through with its own row: the measured ratio (noise)
};

struct VerifyResult {
  std::vector<VerifiedCell> cells;  // measured ones, in key order
  int unmeasured = 0;               // cells whose decision was not measured (left out of the figures)
  double geometric_mean = 1;        // of the speedups
  const VerifiedCell* worst = nullptr;
  int below = 0;             // speedup below the threshold
  int within_5_percent = 0;  // table_us <= within_best_factor * best_us
  std::vector<std::string> errors;
};

// The table's decision for a call under `library`; empty: the table has none (it runs native).
using DecideCell = std::function<std::string(const CallFacts& facts, const MpiLibrary& library)>;

// With `decide` null, each cell's table time is its "collshim" row (beside one library's natives:
// the row does not say whose rules it ran). `threshold`: a speedup below it counts in `below`.
VerifyResult verify_table(const std::vector<Measurement>& measurements, const DecideCell& decide, double threshold);

// The per-cell table and the summary lines.
std::string verify_report(const VerifyResult& result, double threshold);
// The same as one JSON object (verify --json): every cell with its figures, the summary, the
// errors; worst_cell is an index into cells (null without cells).
std::string verify_json(const VerifyResult& result, double threshold);

}  // namespace collshim::tune
