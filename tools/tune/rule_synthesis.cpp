#include "rule_synthesis.hpp"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "algorithms/engine/algorithm_spec.hpp"
#include "selector/rule_table.hpp"

namespace collshim::tune {

bool is_native_label(std::string_view algorithm) {
  return algorithm == "native" || algorithm.starts_with("native:") || algorithm.starts_with("smpi_");
}

// ---------------------------------------------------------------------------------------------
// CSV

std::optional<std::vector<std::string>> split_csv_line(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quoted) {
      if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (ch == '"') {
        quoted = false;
      } else {
        fields.back() += ch;
      }
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      fields.emplace_back();
    } else if (ch != '\r') {
      fields.back() += ch;
    }
  }
  if (quoted) return std::nullopt;
  return fields;
}

namespace {

// The columns `rules` reads. `ranks` is collshim-bench's name for what rules call procs; either works.
struct Columns {
  int collective = -1, procs = -1, nodes = -1, ppn = -1, mapping = -1, block_bytes = -1, algorithm = -1, time = -1,
      spread = -1, platform = -1, mpi_library = -1, date = -1, verified = -1, variant = -1, decision = -1,
      approximated = -1;
};

class RowReader {
 public:
  RowReader(const std::vector<std::string>& fields, const std::string& where, std::vector<std::string>& errors)
      : fields_(fields), where_(where), errors_(errors) {}

  std::string text(int column) const { return column < 0 ? std::string() : fields_[column]; }

  std::optional<long long> integer(int column, std::string_view name, long long minimum, long long maximum) {
    const std::string& value = fields_[column];
    long long parsed = 0;
    const auto [end, problem] = std::from_chars(value.data(), value.data() + value.size(), parsed);
    if (problem != std::errc{} || end != value.data() + value.size() || parsed < minimum || parsed > maximum) {
      fail(name, "expected an integer from " + std::to_string(minimum) + " to " + std::to_string(maximum), value);
      return std::nullopt;
    }
    return parsed;
  }

  std::optional<double> number(int column, std::string_view name, bool positive) {
    const std::string& value = fields_[column];
    double parsed = 0;
    const auto [end, problem] = std::from_chars(value.data(), value.data() + value.size(), parsed);
    if (problem != std::errc{} || end != value.data() + value.size() || !std::isfinite(parsed) || parsed < 0 ||
        (positive && parsed == 0)) {
      fail(name,
           positive ? "expected a positive number of microseconds" : "expected a non-negative number of microseconds",
           value);
      return std::nullopt;
    }
    return parsed;
  }

  void fail(std::string_view column, const std::string& expected, const std::string& got) {
    errors_.push_back(where_ + ": column '" + std::string(column) + "': " + expected + ", got '" + got + "'");
  }

 private:
  const std::vector<std::string>& fields_;
  const std::string& where_;
  std::vector<std::string>& errors_;
};

}  // namespace

void read_measurements(std::istream& in, const std::string& file, const std::string& platform, CsvReadResult& result) {
  std::string line;
  int line_number = 0;
  std::optional<std::vector<std::string>> header;
  Columns columns;
  bool predicted = false;
  int approximated = 0;
  while (std::getline(in, line)) {
    ++line_number;
    // collshim-bench writes comments (its settings, the verification summary) among the rows.
    if (line.empty() || line == "\r" || line.starts_with("#")) continue;
    const std::string where = file + ":" + std::to_string(line_number);
    auto fields = split_csv_line(line);
    if (!fields) {
      result.errors.push_back(where + ": unterminated quoted field");
      continue;
    }
    if (!header) {
      header = *fields;
      auto find = [&](std::initializer_list<std::string_view> names) {
        for (std::string_view name : names) {
          const auto at = std::find(header->begin(), header->end(), name);
          if (at != header->end()) return static_cast<int>(at - header->begin());
        }
        return -1;
      };
      columns = {find({"collective"}),  find({"procs", "ranks"}),
                 find({"nodes"}),       find({"ppn"}),
                 find({"mapping"}),     find({"block_bytes"}),
                 find({"algorithm"}),   find({"median_us", "predicted_us"}),
                 find({"spread_us"}),   find({"platform"}),
                 find({"mpi_library"}), find({"date"}),
                 find({"verified"}),    find({"distribution", "pattern"}),
                 find({"decision"}),    find({"approximated"})};
      // collshim-model's predictions carry predicted_us and no spread (a model has no noise).
      predicted = std::find(header->begin(), header->end(), "predicted_us") != header->end() &&
                  std::find(header->begin(), header->end(), "median_us") == header->end();
      const std::pair<int, std::string_view> required[] = {{columns.collective, "collective"},
                                                           {columns.procs, "procs (or ranks)"},
                                                           {columns.nodes, "nodes"},
                                                           {columns.ppn, "ppn"},
                                                           {columns.mapping, "mapping"},
                                                           {columns.block_bytes, "block_bytes"},
                                                           {columns.algorithm, "algorithm"},
                                                           {columns.time, "median_us (or predicted_us)"},
                                                           {columns.spread, predicted ? "" : "spread_us"}};
      for (const auto& [column, name] : required) {
        if (column < 0 && !name.empty())
          result.errors.push_back(where + ": the header has no column '" + std::string(name) +
                                  "' (collshim-bench --csv writes every column rules needs)");
      }
      if (!result.errors.empty()) return;  // every row would repeat the same problem
      continue;
    }
    if (fields->size() != header->size()) {
      const std::size_t first_missing = std::min(fields->size(), header->size());
      result.errors.push_back(where + ": " + std::to_string(fields->size()) + " fields, the header names " +
                              std::to_string(header->size()) +
                              (fields->size() < header->size()
                                   ? " (column '" + (*header)[first_missing] + "' is missing)"
                                   : std::string(" (extra fields after the last column)")));
      continue;
    }
    const std::size_t errors_before = result.errors.size();
    RowReader row(*fields, where, result.errors);
    const std::string verified = row.text(columns.verified);
    // bench/sim/run.py writes "not run: ..." rows without times; a wrong result's time means nothing.
    if (!verified.empty() && verified != "ok") {
      result.notes.push_back(where + ": left out, verified is '" + verified + "'");
      continue;
    }
    // A prediction with an opaque phase (a library collective, a shared-memory window) is costed by
    // an approximation, no evidence.
    if (predicted && row.text(columns.approximated) == "1") {
      ++approximated;
      continue;
    }
    Measurement m;
    m.source = where;
    const auto collective = find_collective(row.text(columns.collective));
    if (!collective) row.fail("collective", "expected " + collective_names(), row.text(columns.collective));
    const auto procs = row.integer(columns.procs, (*header)[columns.procs], 1, INT_MAX);
    const auto nodes = row.integer(columns.nodes, "nodes", 1, INT_MAX);
    const auto ppn = row.integer(columns.ppn, "ppn", 1, INT_MAX);
    const auto mapping = parse_mapping(row.text(columns.mapping));
    if (!mapping)
      row.fail("mapping", "expected single_node, sequential, cyclic or irregular", row.text(columns.mapping));
    const auto block_bytes = row.integer(columns.block_bytes, "block_bytes", 0, LLONG_MAX);
    const auto time = row.number(columns.time, "median_us", true);
    const auto spread = predicted ? std::optional<double>(0.0) : row.number(columns.spread, "spread_us", false);
    m.algorithm = row.text(columns.algorithm);
    m.native = is_native_label(m.algorithm);
    m.predicted = predicted;
    m.table = m.algorithm == table_label;
    m.variant = row.text(columns.variant);
    if (m.table) {
      // The rule table's decision (collshim-bench --rules): what ran is in `decision`.
      m.decision = row.text(columns.decision);
      if (collective && !is_native_label(m.decision)) {
        const auto parsed = parse_algorithm_spec(m.decision, *collective);
        if (parsed.choice)
          m.decision = parsed.choice->text();
        else
          row.fail("decision", parsed.error, m.decision);
      }
    } else if (collective && !m.native) {
      // The canonical spec text, so that "bruck:radix=2" and "bruck" are one algorithm.
      const auto parsed = parse_algorithm_spec(m.algorithm, *collective);
      if (parsed.choice)
        m.algorithm = parsed.choice->text();
      else
        row.fail("algorithm", parsed.error + " (or native, smpi_<selector>)", m.algorithm);
    }
    if (result.errors.size() != errors_before) continue;
    m.collective = *collective;
    m.procs = static_cast<int>(*procs);
    m.nodes = static_cast<int>(*nodes);
    m.ppn = static_cast<int>(*ppn);
    m.mapping = *mapping;
    m.block_bytes = *block_bytes;
    m.time_us = *time;
    m.spread_us = *spread;
    m.platform = row.text(columns.platform);
    if (m.platform.empty()) m.platform = platform.empty() ? "unnamed" : platform;
    m.mpi_library = row.text(columns.mpi_library);
    m.date = row.text(columns.date);
    if (m.procs == 1) {
      // The shim passes every one-process call through, so no rule can change it.
      result.notes.push_back(where + ": left out, one process");
      continue;
    }
    result.measurements.push_back(std::move(m));
  }
  if (!header) result.errors.push_back(file + ": no header line (expected collshim-bench --csv output)");
  if (approximated > 0)
    result.notes.push_back(
        file + ": " + std::to_string(approximated) +
        " predictions left out, approximated (an opaque phase: a library collective or shared memory)");
}

MpiLibrary native_library(const Measurement& m) {
  MpiLibrary library;
  if (m.algorithm.starts_with("native:")) {
    // collshim-model predict --native NAME: the decisions table NAME (or its short name).
    std::string error;
    const std::string name = m.algorithm.substr(7);
    library = mpi_library_from_name(name, error).value_or(MpiLibrary{"", {}, "", name});
  } else if (m.algorithm.starts_with("smpi_")) {
    // Under SMPI the selector plays the library; the mpi_library column gives SimGrid's version.
    const std::string name = "smpi-" + m.algorithm.substr(5);
    library = identify_mpi_library(m.mpi_library, m.algorithm.substr(5));
    if (library.name != name) library = {name, {}, "", m.algorithm};
  } else {
    library = identify_mpi_library(m.mpi_library);
  }
  // Only a library a rule can name is one (an SMPI selector without a name, say, is not).
  std::string error;
  if (!library.name.empty() && !parse_library_range(library.name, error)) library.name.clear();
  return library;
}

namespace {

// ---------------------------------------------------------------------------------------------
// Synthesis

// A sweep: the cells that differ only in block size. Rules key on it exactly, as measured.
using SweepKey = std::tuple<Collective, int, int, int, MappingClass>;  // collective, procs, nodes, ppn, mapping

// Where rows were measured: the platform and the MPI library text of the run. The natives of a site
// are judged against the algorithm rows of the same site: the same runs, the same library under
// them (under SMPI every selector of one SimGrid shares a site).
using Site = std::pair<std::string, std::string>;

// One algorithm in one cell at one site. Repeated measurements keep the fastest time and widen the
// spread to cover their disagreement.
struct Timing {
  double time_us = 0, spread_us = 0, slowest_us = 0;
  const Measurement* first = nullptr;

  void add(const Measurement& m) {
    if (first == nullptr) {
      *this = {m.time_us, m.spread_us, m.time_us, &m};
      return;
    }
    time_us = std::min(time_us, m.time_us);
    slowest_us = std::max(slowest_us, m.time_us);
    spread_us = std::max({spread_us, m.spread_us, slowest_us - time_us});
  }
};

struct Cell {
  std::map<Site, std::map<std::string, Timing>> timings;  // site -> algorithm (or native label) -> timing
  bool predicted = false;                                 // filled by predictions (nobody measured it)
};

// What a cell allows under one library, judged against that library's natives only. Ratios are
// native time / algorithm time, the worst over the library's natives in the cell (platforms,
// versions).
struct Verdict {
  bool judged = false;  // the library has a native row in the cell; otherwise it says nothing
  // May start a rule: qualifies (beats native by more than the spreads) within the tolerance of the
  // best qualifying ratio.
  std::map<std::string, double> acceptable;
  // May run under a rule that evidence elsewhere started: never below native, within the tolerance
  // of the cell's best (native included). Every acceptable algorithm is allowed.
  std::map<std::string, double> allowed;
  bool native_acceptable = true;
  bool predicted = false;
  std::set<std::string> platforms, mpi_libraries, dates, natives;  // natives: the baselines' labels
};

// The library a native label stands for, keyed by its rule name ("" for one no rule can name).
std::string library_key(const Measurement& m) { return native_library(m).name; }

Verdict judge(const Cell& cell, const std::string& library, const SynthesisOptions& options) {
  Verdict verdict;
  verdict.predicted = cell.predicted;
  // The baselines: each native row of the library, at its site.
  struct Baseline {
    const Timing* native;
    const std::map<std::string, Timing>* algorithms;  // measured beside it
  };
  std::vector<Baseline> baselines;
  for (const auto& [site, algorithms] : cell.timings) {
    for (const auto& [label, timing] : algorithms) {
      if (!is_native_label(label) || library_key(*timing.first) != library) continue;
      baselines.push_back({&timing, &algorithms});
      verdict.platforms.insert(site.first);
      verdict.natives.insert(label);
      if (!site.second.empty()) verdict.mpi_libraries.insert(site.second);
      for (const auto& [name, t] : algorithms) {
        if (!t.first->date.empty()) verdict.dates.insert(t.first->date);
      }
    }
  }
  if (baselines.empty()) return verdict;
  verdict.judged = true;
  // Candidates: every algorithm measured beside every baseline.
  std::set<std::string> names;
  for (const Baseline& baseline : baselines) {
    for (const auto& [algorithm, timing] : *baseline.algorithms) {
      if (!is_native_label(algorithm)) names.insert(algorithm);
    }
  }
  std::map<std::string, double> qualifying, worst_of;
  for (const std::string& algorithm : names) {
    double worst_ratio = INFINITY;
    bool everywhere = true, clear_everywhere = true;
    for (const Baseline& baseline : baselines) {
      const auto found = baseline.algorithms->find(algorithm);
      if (found == baseline.algorithms->end()) {
        everywhere = false;
        break;
      }
      const Timing& timing = found->second;
      worst_ratio = std::min(worst_ratio, baseline.native->time_us / timing.time_us);
      // A win within the noise of either measurement is no evidence.
      clear_everywhere &=
          baseline.native->time_us - timing.time_us > std::max(baseline.native->spread_us, timing.spread_us);
    }
    if (!everywhere) continue;
    worst_of[algorithm] = worst_ratio;
    if (clear_everywhere && (!options.robust || worst_ratio >= options.robust_minimum))
      qualifying[algorithm] = worst_ratio;
  }
  double best_ratio = 1.0;  // native's own
  for (const auto& [algorithm, ratio] : qualifying) best_ratio = std::max(best_ratio, ratio);
  verdict.native_acceptable = best_ratio <= 1.0 + options.tolerance;
  for (const auto& [algorithm, ratio] : qualifying) {
    if (ratio * (1.0 + options.tolerance) >= best_ratio) verdict.acceptable[algorithm] = ratio;
  }
  for (const auto& [algorithm, ratio] : worst_of) {
    if (ratio >= 1.0 && ratio * (1.0 + options.tolerance) >= best_ratio) verdict.allowed[algorithm] = ratio;
  }
  return verdict;
}

std::string join(const std::set<std::string>& items, std::string_view separator) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : std::string(separator)) + item;
  return text.empty() ? "unknown" : text;
}

std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

std::string percent_text(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%g%%", fraction * 100);
  return text;
}

std::string ratio_text(double ratio) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2fx", ratio);
  return text;
}

// A measured cell a rule covers: its size and what it allows.
struct MeasuredCell {
  long long block_bytes;
  const Verdict* verdict;
};

// A library rules are synthesized for: its rule name and the versions measured ("" and no range: one
// no rule can name).
struct LibrarySet {
  LibraryRange range;
  std::set<std::string> described;  // what the rows said, for messages
  std::string text() const { return range.name.empty() ? "an unidentified library" : range.text(); }
};

double geometric_mean(const std::vector<MeasuredCell>& cells, const std::string& algorithm) {
  double log_sum = 0;
  for (const MeasuredCell& cell : cells) log_sum += std::log(cell.verdict->allowed.at(algorithm));
  return cells.empty() ? 1.0 : std::exp(log_sum / static_cast<double>(cells.size()));
}

// A rule's evidence comments: its cells, the geometric mean and worst cell of its ratio to the
// library's native, the platforms, dates and MPI libraries (and natives) it was judged against.
std::vector<std::string> evidence_of(const std::vector<MeasuredCell>& cells, const std::string& algorithm,
                                     const LibrarySet& library, const SynthesisOptions& options) {
  double worst = INFINITY;
  long long worst_size = 0, smallest = LLONG_MAX, largest = 0;
  std::set<std::string> platforms, libraries, dates, natives;
  std::size_t predicted = 0;
  for (const MeasuredCell& cell : cells) {
    if (cell.verdict->predicted) ++predicted;
    const double ratio = cell.verdict->allowed.at(algorithm);
    if (ratio < worst) {
      worst = ratio;
      worst_size = cell.block_bytes;
    }
    smallest = std::min(smallest, cell.block_bytes);
    largest = std::max(largest, cell.block_bytes);
    platforms.insert(cell.verdict->platforms.begin(), cell.verdict->platforms.end());
    libraries.insert(cell.verdict->mpi_libraries.begin(), cell.verdict->mpi_libraries.end());
    dates.insert(cell.verdict->dates.begin(), cell.verdict->dates.end());
    natives.insert(cell.verdict->natives.begin(), cell.verdict->natives.end());
  }
  const std::size_t count = cells.size();
  const std::string per = options.robust ? " (worst over platforms per cell)" : "";
  const std::string how = predicted == 0       ? " measured"
                          : predicted == count ? " predicted, none measured"
                                               : " (" + std::to_string(count - predicted) + " measured, " +
                                                     std::to_string(predicted) + " predicted)";
  const std::string against =
      library.range.name.empty() ? "native" : library.range.text() + "'s own native (" + join(natives, ", ") + ")";
  std::vector<std::string> lines{
      std::to_string(count) + (count == 1 ? " cell" : " cells") + ", block_bytes " + std::to_string(smallest) +
          (smallest == largest ? "" : ".." + std::to_string(largest)) + how + "; ratio to " + against + per +
          ": geometric mean " + ratio_text(geometric_mean(cells, algorithm)) + ", worst cell " + ratio_text(worst) +
          " at " + std::to_string(worst_size) + " B",
      "platform: " + join(platforms, ", ") +
          "; date: " + (dates.empty() ? "unknown" : *dates.begin() + (dates.size() > 1 ? ".." + *dates.rbegin() : "")),
      "MPI library: " + one_line(join(libraries, " | "))};
  if (predicted > 0) {
    const std::string margin = percent_text(options.prediction_margin);
    lines.push_back(
        "predicted by the cost model (collshim-model predict --native); native = the library's decision, "
        "costed; wins count beyond " +
        margin);
  }
  return lines;
}

struct SynthesizedRule {
  Collective collective;
  RuleConditions when;
  std::string algorithm;
  // Comment lines (evidence_of's), one list per library the rule holds for.
  std::vector<std::vector<std::string>> evidence;
  int cells = 0;            // measured cells in its range
  int predicted_cells = 0;  // and predicted ones

  // Each library's first line (its cells and ratios), then the other lines once each.
  std::vector<std::string> comments() const {
    std::vector<std::string> lines;
    for (const auto& of_library : evidence) lines.push_back(of_library.front());
    for (const auto& of_library : evidence) {
      for (std::size_t i = 1; i < of_library.size(); ++i) {
        if (std::find(lines.begin(), lines.end(), of_library[i]) == lines.end()) lines.push_back(of_library[i]);
      }
    }
    return lines;
  }
};

void count_cells(const std::vector<MeasuredCell>& covered, SynthesizedRule& rule) {
  rule.predicted_cells = static_cast<int>(
      std::count_if(covered.begin(), covered.end(), [](const MeasuredCell& cell) { return cell.verdict->predicted; }));
  rule.cells = static_cast<int>(covered.size()) - rule.predicted_cells;
}

// The rules of one sweep (its cells that the library was judged in, in size order). Greedy over the
// sizes (docs/rules-and-tuning.md, "Synthesis"): where a cell needs a rule (native is not acceptable), the acceptable
// algorithm whose run of allowed cells from there is longest starts one (ties: the faster here), and
// the range goes on while that algorithm stays allowed, through cells where native would also do.
// That gives the fewest ranges for the sweep from those starts; widen_rules merges further.
void synthesize_sweep(const SweepKey& key, const std::vector<long long>& sizes,
                      const std::vector<const Verdict*>& verdicts, const LibrarySet& library,
                      const SynthesisOptions& options, std::vector<SynthesizedRule>& rules) {
  const std::size_t n = sizes.size();
  auto run_length = [&](std::size_t from, const std::string& algorithm) {
    std::size_t end = from;
    while (end < n && verdicts[end]->allowed.contains(algorithm)) ++end;
    return end - from;
  };
  auto emit = [&](std::size_t first, std::size_t last, const std::string& algorithm) {
    // Ends: the measured sizes at the sweep's edges, else halfway to the neighbouring measured size
    // (which has another winner), so that every size inside the sweep is decided by its nearest
    // measurement and nothing beyond the data is claimed.
    const long long low = first == 0 ? sizes[first] : sizes[first - 1] + (sizes[first] - sizes[first - 1]) / 2 + 1;
    const long long high = last + 1 == n ? sizes[last] : sizes[last] + (sizes[last + 1] - sizes[last]) / 2;
    SynthesizedRule rule{std::get<0>(key), {}, algorithm, {}};
    rule.when.procs = Range{std::get<1>(key), std::get<1>(key)};
    rule.when.nodes = Range{std::get<2>(key), std::get<2>(key)};
    rule.when.ppn = Range{std::get<3>(key), std::get<3>(key)};
    rule.when.mapping = std::vector<MappingClass>{std::get<4>(key)};
    rule.when.block_bytes = Range{low, high};
    std::vector<MeasuredCell> covered;
    for (std::size_t i = first; i <= last; ++i) covered.push_back({sizes[i], verdicts[i]});
    rule.evidence = {evidence_of(covered, algorithm, library, options)};
    count_cells(covered, rule);
    rules.push_back(std::move(rule));
  };

  std::size_t i = 0;
  while (i < n) {
    if (verdicts[i]->native_acceptable) {
      ++i;
      continue;
    }
    std::string chosen;
    std::size_t longest = 0;
    for (const auto& [algorithm, ratio] : verdicts[i]->acceptable) {
      const std::size_t length = run_length(i, algorithm);
      if (length > longest || (length == longest && ratio > verdicts[i]->acceptable.at(chosen))) {
        chosen = algorithm;
        longest = length;
      }
    }
    // Not native-acceptable means some algorithm qualified, and the best one is always acceptable.
    if (longest == 0) {
      ++i;
      continue;
    }
    emit(i, i + longest - 1, chosen);
    i += longest;
  }
}

bool overlap(const std::optional<Range>& a, const std::optional<Range>& b) {
  return !a || !b || (a->low <= b->high && b->low <= a->high);
}

Range hull(const std::optional<Range>& a, const std::optional<Range>& b) {
  return {std::min(a->low, b->low), std::max(a->high, b->high)};
}

// Widening (docs/rules-and-tuning.md, "Synthesis"): two rules of the same collective and mapping become one over the
// hull of their procs, nodes, ppn and block_bytes ranges, running either one's algorithm, when the
// data supports it: every measured cell inside the hull, on every platform and sweep, allows that
// algorithm (never below the library's native, within the tolerance of the cell's best), and the
// hull meets no other rule, so the order of the rules stays irrelevant. Of the two algorithms the one
// with the better geometric mean over the hull's cells runs. Repeated until nothing merges: adjacent
// size ranges whose cells one algorithm serves within the tolerance become one rule, and so do
// placements. Points inside the hull that nobody measured are interpolated: that is the claim a
// range makes, and only measured points can refute it.
template <typename Sweeps>
void widen_rules(std::vector<SynthesizedRule>& rules, const Sweeps& sweeps,
                 const std::map<SweepKey, std::vector<Verdict>>& verdict_of, const LibrarySet& library,
                 const SynthesisOptions& options) {
  auto meets = [](const RuleConditions& a, const RuleConditions& b) {
    return *a.mapping == *b.mapping && overlap(a.procs, b.procs) && overlap(a.nodes, b.nodes) &&
           overlap(a.ppn, b.ppn) && overlap(a.block_bytes, b.block_bytes);
  };
  // The cells of the library `when` covers, or nullopt if one of them does not allow `algorithm`.
  auto supported = [&](Collective collective, const RuleConditions& when,
                       const std::string& algorithm) -> std::optional<std::vector<MeasuredCell>> {
    std::vector<MeasuredCell> covered;
    for (const auto& [key, cells] : sweeps) {
      const auto& [c, procs, nodes, ppn, mapping] = key;
      if (c != collective || !when.procs->contains(procs) || !when.nodes->contains(nodes) || !when.ppn->contains(ppn) ||
          (*when.mapping)[0] != mapping)
        continue;
      std::size_t i = 0;
      for (const auto& [size, cell] : cells) {
        const Verdict& verdict = verdict_of.at(key)[i++];
        if (!verdict.judged || !when.block_bytes->contains(size)) continue;
        if (!verdict.allowed.contains(algorithm)) return std::nullopt;
        covered.push_back({size, &verdict});
      }
    }
    return covered;
  };
  for (bool merged = true; merged;) {
    merged = false;
    for (std::size_t i = 0; i < rules.size() && !merged; ++i) {
      for (std::size_t j = i + 1; j < rules.size() && !merged; ++j) {
        const SynthesizedRule& a = rules[i];
        const SynthesizedRule& b = rules[j];
        if (a.collective != b.collective || *a.when.mapping != *b.when.mapping) continue;
        RuleConditions when = a.when;
        when.procs = hull(a.when.procs, b.when.procs);
        when.nodes = hull(a.when.nodes, b.when.nodes);
        when.ppn = hull(a.when.ppn, b.when.ppn);
        when.block_bytes = hull(a.when.block_bytes, b.when.block_bytes);
        bool clear = true;
        for (std::size_t k = 0; k < rules.size() && clear; ++k) {
          if (k != i && k != j && rules[k].collective == a.collective) clear = !meets(when, rules[k].when);
        }
        if (!clear) continue;
        std::optional<SynthesizedRule> widened;
        double widened_mean = 0;
        for (const std::string* algorithm : {&a.algorithm, &b.algorithm}) {
          const auto covered = supported(a.collective, when, *algorithm);
          if (!covered) continue;
          const double mean = geometric_mean(*covered, *algorithm);
          if (widened && mean <= widened_mean) continue;
          widened =
              SynthesizedRule{a.collective, when, *algorithm, {evidence_of(*covered, *algorithm, library, options)}};
          widened_mean = mean;
          count_cells(*covered, *widened);
        }
        if (!widened) continue;
        rules[i] = std::move(*widened);
        rules.erase(rules.begin() + static_cast<std::ptrdiff_t>(j));
        merged = true;
      }
    }
  }
}

}  // namespace

SynthesisResult synthesize_rules(const std::vector<Measurement>& measurements, const SynthesisOptions& options) {
  SynthesisResult result;
  std::set<std::string> platforms;
  for (const Measurement& m : measurements) platforms.insert(m.platform);
  if (!options.robust && platforms.size() > 1) {
    result.errors.push_back("the measurements come from " + std::to_string(platforms.size()) + " platforms (" +
                            join(platforms, ", ") +
                            "); rules for several machines need --robust (worst case over platforms)");
    return result;
  }
  std::map<SweepKey, std::map<long long, Cell>> sweeps;
  for (const Measurement& m : measurements) {
    // A rule table's timing (verify) is not an algorithm's; predictions come next, where this left gaps.
    if (m.table || m.predicted) continue;
    Cell& cell = sweeps[{m.collective, m.procs, m.nodes, m.ppn, m.mapping}][m.block_bytes];
    cell.timings[{m.platform, m.mpi_library}][m.algorithm].add(m);
  }
  // Predictions go only where nothing was measured, with the model's margin as their spread.
  std::vector<Measurement> predictions;
  for (const Measurement& m : measurements) {
    if (!m.predicted) continue;
    const auto sweep = sweeps.find({m.collective, m.procs, m.nodes, m.ppn, m.mapping});
    if (sweep != sweeps.end() && sweep->second.contains(m.block_bytes)) {
      ++result.predictions_overridden;
      continue;
    }
    predictions.push_back(m);
    predictions.back().spread_us = m.time_us * options.prediction_margin;
  }
  for (const Measurement& m : predictions) {  // complete: Timing keeps pointers into it
    Cell& cell = sweeps[{m.collective, m.procs, m.nodes, m.ppn, m.mapping}][m.block_bytes];
    cell.predicted = true;
    cell.timings[{m.platform, m.mpi_library}][m.algorithm].add(m);
  }

  // The libraries, from the native rows kept: one rule set each, judged against its own natives.
  std::map<std::string, LibrarySet> libraries;
  int predicted_without_native = 0;
  for (const auto& [key, cells] : sweeps) {
    for (const auto& [size, cell] : cells) {
      for (const auto& [site, algorithms] : cell.timings) {
        bool native = false;
        for (const auto& [label, timing] : algorithms) {
          if (!is_native_label(label)) continue;
          native = true;
          const MpiLibrary library = native_library(*timing.first);
          const LibraryRange measured = LibraryRange::exactly(library);
          const auto [at, added] = libraries.try_emplace(library.name, LibrarySet{measured, {}});
          if (!added) at->second.range = LibraryRange::hull(at->second.range, measured);
          at->second.described.insert(library.name.empty()
                                          ? "'" + one_line(library.description) + "' (" + timing.first->source + ")"
                                          : library.text());
        }
        if (native) continue;
        if (cell.predicted) {
          ++predicted_without_native;  // the library's algorithm there has no schedule: no verdict, no rule
        } else {
          result.errors.push_back(algorithms.begin()->second.first->source +
                                  ": no native (or smpi_<selector>) row for this cell on platform '" + site.first +
                                  "', so nothing can be compared with native there");
        }
      }
    }
  }
  if (predicted_without_native > 0)
    result.notes.push_back(std::to_string(predicted_without_native) +
                           " predicted cell(s) have no costed native row (the library's algorithm there has no "
                           "schedule in the model): no rule there");
  if (const auto unnamed = libraries.find(""); unnamed != libraries.end()) {
    // Rules without `library` apply under every library: only where nothing else was measured.
    if (libraries.size() > 1) {
      result.errors.push_back("native rows of an MPI library no rule can name (" +
                              join(unnamed->second.described, ", ") +
                              ") beside those of others: their rules could not say which library they hold for; "
                              "leave them out, or measure Open MPI, MPICH or SimGrid SMPI");
    } else {
      result.notes.push_back("the MPI library of the native rows cannot be named in a rule (" +
                             join(unnamed->second.described, ", ") +
                             "): the rules carry no `library` condition and so apply under any library");
    }
  }
  if (!result.errors.empty()) return result;

  std::vector<SynthesizedRule> rules;
  for (const auto& [name, library] : libraries) {
    std::vector<SynthesizedRule> of_library;
    std::map<SweepKey, std::vector<Verdict>> verdict_of;  // by sweep, every size (judged or not)
    for (const auto& [key, cells] : sweeps) {
      std::vector<Verdict>& verdicts = verdict_of[key];
      for (const auto& [size, cell] : cells) verdicts.push_back(judge(cell, name, options));
      std::vector<long long> sizes;  // the sizes the library was judged at, and their verdicts
      std::vector<const Verdict*> judged;
      std::size_t i = 0;
      for (const auto& [size, cell] : cells) {
        const Verdict& verdict = verdicts[i++];
        if (!verdict.judged) continue;
        sizes.push_back(size);
        judged.push_back(&verdict);
        ++(cell.predicted ? result.predicted_cells : result.cells);
      }
      synthesize_sweep(key, sizes, judged, library, options, of_library);
    }
    widen_rules(of_library, sweeps, verdict_of, library, options);
    for (SynthesizedRule& rule : of_library) {
      if (!name.empty()) rule.when.library = std::vector{library.range};
      rules.push_back(std::move(rule));
    }
    result.libraries.push_back(library.text());
  }

  // The same rule in several libraries' sets (the same conditions and algorithm) becomes one rule for
  // the list of them, with each one's evidence: fewer rules, and each library sees exactly its own set.
  for (std::size_t i = 0; i < rules.size(); ++i) {
    for (std::size_t j = i + 1; j < rules.size();) {
      RuleConditions a = rules[i].when, b = rules[j].when;
      a.library.reset();
      b.library.reset();
      if (rules[i].collective != rules[j].collective || rules[i].algorithm != rules[j].algorithm ||
          !rules[i].when.library || !rules[j].when.library || a.text() != b.text()) {
        ++j;
        continue;
      }
      rules[i].when.library->insert(rules[i].when.library->end(), rules[j].when.library->begin(),
                                    rules[j].when.library->end());
      rules[i].evidence.insert(rules[i].evidence.end(), rules[j].evidence.begin(), rules[j].evidence.end());
      rules[i].cells += rules[j].cells;
      rules[i].predicted_cells += rules[j].predicted_cells;
      rules.erase(rules.begin() + static_cast<std::ptrdiff_t>(j));
    }
  }

  // Never emit a rule that can never match: one an earlier rule of the collective always takes first
  // (the same test as RuleTable::check_shadowed). Libraries are disjoint, sweeps keyed exactly and
  // their ranges disjoint, so this drops nothing today; it guards the invariant.
  std::vector<SynthesizedRule> kept;
  for (SynthesizedRule& rule : rules) {
    const bool shadowed = std::any_of(kept.begin(), kept.end(), [&](const SynthesizedRule& earlier) {
      return earlier.collective == rule.collective && earlier.when.covers(rule.when);
    });
    if (!shadowed) kept.push_back(std::move(rule));
  }

  std::ostringstream yaml;
  std::string inputs;
  for (const std::string& input : options.inputs) inputs += (inputs.empty() ? "" : ", ") + input;
  const std::string tolerance = percent_text(options.tolerance);
  yaml << "# Written by collshim-tune rules" << (inputs.empty() ? "" : " from " + one_line(inputs)) << ".\n"
       << "# Rules per MPI library: each set is judged against that library's own native only and says so with\n"
       << "# `library:` (the versions measured). Tolerance " << tolerance << " of each cell's best: a rule starts\n"
       << "# where an algorithm beats native by more than the measured spread"
       << (options.robust ? " (--robust: ratios are the worst over platforms, none below " +
                                ratio_text(options.robust_minimum) + ")"
                          : std::string())
       << ", and covers every\n# cell where its algorithm is within the tolerance of the best and never below native.\n"
       << "# Calls that no rule matches run native. Ratios are native time / algorithm time.\n";
  if (!options.predicted_inputs.empty()) {
    std::string predicted;
    for (const std::string& input : options.predicted_inputs) predicted += (predicted.empty() ? "" : ", ") + input;
    const std::string margin = percent_text(options.prediction_margin);
    yaml << "# Cells nobody measured are filled with the cost model's predictions from " << one_line(predicted)
         << "\n# (a rule's evidence says how many of its cells were predicted); a prediction never overrides a\n"
         << "# measurement, and a predicted win counts only beyond " << margin << ".\n";
  }
  yaml << "version: 1\n";
  if (kept.empty()) {
    yaml << "rules: []\n";
  } else {
    yaml << "rules:\n";
    for (const SynthesizedRule& rule : kept) {
      yaml << rule_yaml(rule.collective, rule.when, rule.algorithm, rule.comments());
      result.cells_with_rule += rule.cells;
      result.predicted_cells_with_rule += rule.predicted_cells;
    }
  }
  result.yaml = yaml.str();
  result.rules = static_cast<int>(kept.size());

  // The output goes through the shim's own parser: anything it would reject is a bug here.
  RuleTable table;
  std::vector<RuleDiagnostic> diagnostics;
  table.add_file_text(result.yaml, "(generated rules)", diagnostics);
  table.check_shadowed(diagnostics);
  for (const RuleDiagnostic& diagnostic : diagnostics)
    result.errors.push_back("internal error: the generated table does not parse cleanly: " + diagnostic.text());
  return result;
}

}  // namespace collshim::tune
