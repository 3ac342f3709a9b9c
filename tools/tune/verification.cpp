#include "verification.hpp"

#include "profile/json_writer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <tuple>

namespace collshim::tune {
namespace {

using CellKey = std::tuple<std::string, Collective, std::string, int, int, int, MappingClass, long long>;

CellKey key_of(const Measurement& m) {
  return {m.platform, m.collective, m.variant, m.procs, m.nodes, m.ppn, m.mapping, m.block_bytes};
}

// The rows of one cell that stand for one library: its natives, and what was measured beside them
// (the rows of the same runs: the same mpi_library text).
struct LibraryRows {
  MpiLibrary library;
  std::vector<const Measurement*> natives;
  std::set<std::string> sites;  // mpi_library texts of its natives
};

}  // namespace

VerifyResult verify_table(const std::vector<Measurement>& measurements, const DecideCell& decide, double threshold) {
  std::map<CellKey, std::vector<const Measurement*>> cells;
  for (const Measurement& m : measurements) cells[key_of(m)].push_back(&m);

  VerifyResult result;
  double log_sum = 0;
  for (const auto& [key, rows] : cells) {
    const std::string where = rows.front()->source;
    // Each library is judged apart, with the rules it sees, against its own native.
    std::map<std::string, LibraryRows> libraries;               // by library text: each version apart
    std::map<std::string, std::set<std::string>> libraries_at;  // site -> libraries with natives there
    for (const Measurement* m : rows) {
      if (!m->native) continue;
      const MpiLibrary library = native_library(*m);
      LibraryRows& of = libraries.try_emplace(library.text(), LibraryRows{library, {}, {}}).first->second;
      of.natives.push_back(m);
      of.sites.insert(m->mpi_library);
      libraries_at[m->mpi_library].insert(library.text());
    }
    if (libraries.empty()) {
      result.errors.push_back(where + ": cell without a native row, nothing to compare with");
      continue;
    }
    for (const auto& [text, of] : libraries) {
      VerifiedCell cell;
      std::tie(cell.platform, cell.collective, cell.variant, cell.procs, cell.nodes, cell.ppn, cell.mapping,
               cell.block_bytes) = key;
      cell.library = text;
      const auto beside = [&](const Measurement* m) { return of.sites.contains(m->mpi_library); };
      double native = std::numeric_limits<double>::infinity(), best = native;
      const Measurement* table_row = nullptr;
      bool shared = false;  // a table row at a site where several libraries ran native
      for (const Measurement* m : rows) {
        if (!beside(m)) continue;
        if (m->table) {
          table_row = m;
          shared |= libraries_at[m->mpi_library].size() > 1;
          continue;
        }
        if (m->native && std::find(of.natives.begin(), of.natives.end(), m) == of.natives.end()) continue;
        if (m->native) native = std::min(native, m->time_us);
        if (m->time_us < best) {
          best = m->time_us;
          cell.best = m->algorithm;
        }
      }
      cell.native_us = native;
      cell.best_us = best;
      if (decide) {
        const std::string decision = decide(
            CallFacts{cell.collective, cell.procs, cell.block_bytes, cell.mapping, cell.nodes, cell.ppn}, of.library);
        cell.decision = decision.empty() ? "native" : decision;
        if (cell.decision == "native") {
          cell.table_us = native;
        } else {
          cell.measured = false;
          // The decision's own rows, or a verify run's table rows that ran it (the same algorithm, run
          // by the shim's selector): a table checked again against natives measured in other runs.
          for (const Measurement* m : rows) {
            const bool ran_decision = m->table ? m->decision == cell.decision : m->algorithm == cell.decision;
            if (!m->native && beside(m) && ran_decision) {
              cell.table_us = cell.measured ? std::min(cell.table_us, m->time_us) : m->time_us;
              cell.measured = true;
            }
          }
        }
      } else {
        if (table_row == nullptr) {
          result.errors.push_back(where + ": cell without a \"" + std::string(table_label) + "\" row for " + text +
                                  " (run collshim-bench with --rules)");
          continue;
        }
        if (shared) {
          // Its decision is that of the run's library, which the row does not name.
          result.errors.push_back(table_row->source + ": a \"" + std::string(table_label) +
                                  "\" row beside the natives of several libraries (" + text +
                                  " and others): which one's rules it ran is unknown; verify each run's file "
                                  "apart, or give the files with --measured");
          continue;
        }
        cell.decision = table_row->decision.empty() ? "native" : table_row->decision;
        cell.table_us = table_row->time_us;
      }
      if (!cell.measured) {
        ++result.unmeasured;
        continue;
      }
      const bool passes_through = cell.decision == "native" || is_native_label(cell.decision);
      cell.measured_speedup = cell.native_us / cell.table_us;
      // Passing through runs the library's own collective: the same code as native, so any measured
      // difference is noise (and would fail a table for rules it does not have).
      cell.speedup = passes_through ? 1.0 : cell.measured_speedup;
      if (passes_through) cell.table_us = cell.native_us;
      if (cell.best_us > cell.table_us) {  // the table's row may be the cell's fastest
        cell.best_us = cell.table_us;
        cell.best = cell.decision;
      }
      result.cells.push_back(std::move(cell));
    }
  }
  for (const VerifiedCell& cell : result.cells) {
    log_sum += std::log(cell.speedup);
    if (cell.speedup < threshold) ++result.below;
    if (cell.table_us <= within_best_factor * cell.best_us) ++result.within_5_percent;
    if (result.worst == nullptr || cell.speedup < result.worst->speedup) result.worst = &cell;
  }
  if (!result.cells.empty()) result.geometric_mean = std::exp(log_sum / static_cast<double>(result.cells.size()));
  return result;
}

std::string verify_report(const VerifyResult& result, double threshold) {
  std::string text;
  char line[640];
  std::snprintf(line, sizeof line, "%-12s %-18s %-10s %-12s %6s %5s %4s %-11s %10s  %-34s %10s %10s %8s  %s\n",
                "platform", "library", "collective", "variant", "procs", "nodes", "ppn", "mapping", "block",
                "table runs", "native_us", "table_us", "speedup", "best");
  text += line;
  auto cell_line = [&](const VerifiedCell& c) {
    std::snprintf(line, sizeof line,
                  "%-12s %-18s %-10s %-12s %6d %5d %4d %-11s %10lld  %-34s %10.2f %10.2f %7.3fx%s  %s\n",
                  c.platform.c_str(), c.library.c_str(), std::string(collective_name(c.collective)).c_str(),
                  c.variant.empty() ? "-" : c.variant.c_str(), c.procs, c.nodes, c.ppn,
                  std::string(mapping_name(c.mapping)).c_str(), c.block_bytes, c.decision.c_str(), c.native_us,
                  c.table_us, c.speedup, c.speedup < threshold ? "!" : " ", c.best.c_str());
    return std::string(line);
  };
  for (const VerifiedCell& cell : result.cells) text += cell_line(cell);
  const std::size_t n = result.cells.size();
  std::snprintf(line, sizeof line,
                "%zu cells: geometric mean speedup over native %.3fx; %d of %zu (%.0f%%) within 5%% of the cell's "
                "best; %d below %.2fx\n",
                n, result.geometric_mean, result.within_5_percent, n,
                n ? 100.0 * result.within_5_percent / static_cast<double>(n) : 0.0, result.below, threshold);
  text += line;
  if (result.worst != nullptr) text += "worst cell: " + cell_line(*result.worst);
  if (result.unmeasured > 0)
    text += std::to_string(result.unmeasured) + " cell(s) left out: the table's decision was not measured there\n";
  return text;
}

std::string verify_json(const VerifyResult& result, double threshold) {
  using Layout = JsonWriter::Layout;
  JsonWriter json;
  json.begin_object()
      .member("format", "collshim-tune-verify")
      .member("version", 1)
      .member("threshold", threshold)
      .member("within_best_factor", within_best_factor);
  json.key("cells").begin_array();
  int worst = -1;
  for (std::size_t i = 0; i < result.cells.size(); ++i) {
    const VerifiedCell& c = result.cells[i];
    if (&c == result.worst) worst = static_cast<int>(i);
    json.begin_object(Layout::one_line)
        .member("platform", c.platform)
        .member("library", c.library)
        .member("collective", collective_name(c.collective))
        .member("variant", c.variant)
        .member("procs", c.procs)
        .member("nodes", c.nodes)
        .member("ppn", c.ppn)
        .member("mapping", mapping_name(c.mapping))
        .member("block_bytes", c.block_bytes)
        .member("decision", c.decision)
        .member("native_us", c.native_us)
        .member("table_us", c.table_us)
        .member("speedup", c.speedup)
        .member("below_threshold", c.speedup < threshold)
        .member("measured_speedup", c.measured_speedup)
        .member("best", c.best)
        .member("best_us", c.best_us)
        .end_object();
  }
  json.end_array();
  json.key("summary")
      .begin_object()
      .member("cells", result.cells.size())
      .member("geometric_mean_speedup", result.geometric_mean)
      .member("within_best", result.within_5_percent)
      .member("below_threshold", result.below)
      .member("unmeasured", result.unmeasured);
  json.key("worst_cell");
  worst < 0 ? json.null() : json.value(worst);
  json.end_object();
  json.key("errors").begin_array();
  for (const std::string& error : result.errors) json.value(error);
  json.end_array();
  return json.end_object().text();
}

}  // namespace collshim::tune
