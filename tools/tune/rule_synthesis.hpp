#pragma once
// Rule synthesis for `collshim-tune rules` (docs/rules-and-tuning.md): measurements in, the smallest
// rule table that keeps every measured cell within a tolerance of its best out. Pure data in and
// text out, no MPI, so unit tests drive it with synthetic measurements.
#include <istream>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/engine/collective.hpp"
#include "selector/mapping.hpp"
#include "selector/mpi_library.hpp"

namespace collshim::tune {

// One CSV row: one algorithm timed in one cell on one platform.
struct Measurement {
  std::string source;  // "file:line", for messages
  Collective collective = Collective::allgather;
  int procs = 1, nodes = 1, ppn = 1;
  MappingClass mapping = MappingClass::single_node;
  long long block_bytes = 0;  // average bytes per block, as rules test it
  std::string algorithm;      // canonical spec text, or the native label, or table_label
  bool native = false;        // `native` or `smpi_<selector>`: the MPI library's own collective
  bool predicted = false;     // a cost-model prediction (collshim-model predict --csv), not a measurement
  bool table = false;         // collshim-bench --rules' row: what the shim decided, `decision` tells what
  std::string decision;       // for table rows: the canonical spec that ran (or native)
  std::string variant;        // the bench case's variant (Allgatherv distribution, Alltoallv pattern)
  double time_us = 0;         // per call, slowest rank, median over the timed calls
  double spread_us = 0;       // interquartile range of the same calls
  std::string platform, mpi_library, date;
};

// The algorithm label of collshim-bench --rules' row: the rule table's decision, whatever it was.
inline constexpr std::string_view table_label = "collshim";

// True for the labels of the MPI library's own collective.
bool is_native_label(std::string_view algorithm);

// The library a native row stands for, as rules name it: `native` is the library of the row's
// mpi_library column, `smpi_SELECTOR` that SMPI selector of the column's SimGrid version, `native:NAME`
// the decisions table NAME (collshim-model predict --native). An empty name: none a rule can name.
MpiLibrary native_library(const Measurement& m);

// Splits one RFC 4180 line (quoted fields may hold commas and doubled quotes, not line breaks).
// Returns nullopt on an unterminated quote.
std::optional<std::vector<std::string>> split_csv_line(const std::string& line);

struct CsvReadResult {
  std::vector<Measurement> measurements;
  std::vector<std::string> errors;  // "file:line: column 'name': what was wrong"
  std::vector<std::string> notes;   // rows left out on purpose (mismatches, one-process cells)
};

// Reads collshim-bench --csv output (docs/rules-and-tuning.md lists the columns). `file` names the input in
// messages; `platform` fills rows whose platform column is absent or empty.
void read_measurements(std::istream& in, const std::string& file, const std::string& platform, CsvReadResult& result);

// Predictions (Measurement::predicted, from collshim-model predict --native) fill the cells nobody
// measured, never one that was: there the measurements alone decide. Their native rows are the
// libraries' decisions as the model costs them. A predicted win counts only beyond
// prediction_margin (its "spread": the model's error, not noise), and a rule's evidence says how
// many of its cells were predicted.
struct SynthesisOptions {
  double tolerance = 0.03;          // a cell may run an algorithm up to this much slower than its best
  double prediction_margin = 0.10;  // a predicted time's uncertainty, as a fraction of it
  bool robust = false;              // judge each algorithm by its worst ratio to its library's native over platforms
  double robust_minimum = 1.05;     // --robust: no rule where the best worst-case ratio is below this
  std::vector<std::string> inputs;  // named in the file's header comment
  std::vector<std::string> predicted_inputs;  // likewise, the files of predictions
};

// One rule set per library of the native rows, each judged against that library's natives only and
// carrying `library:` with the versions measured ("ompi 4.1.4", "smpi-ompi 3.32"). Native rows of a
// library no rule can name are refused beside others, and alone give rules without `library` (a note
// says so). Cells are counted once per library judged in them.
struct SynthesisResult {
  std::string yaml;                               // the rule file
  std::vector<std::string> libraries;             // the rule sets' libraries, as their conditions name them
  int rules = 0, cells = 0, cells_with_rule = 0;  // cells: measured ones
  int predicted_cells = 0, predicted_cells_with_rule = 0;
  int predictions_overridden = 0;   // predicted rows left out because their cell was measured
  std::vector<std::string> errors;  // nothing written when not empty
  std::vector<std::string> notes;   // predicted cells that could not be judged, and why
};

SynthesisResult synthesize_rules(const std::vector<Measurement>& measurements, const SynthesisOptions& options);

}  // namespace collshim::tune
