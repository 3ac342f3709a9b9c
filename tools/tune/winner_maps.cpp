#include "winner_maps.hpp"

#include "profile/json_writer.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>

namespace collshim::tune {
namespace {

// Letters, digits, '-', '_' and '.': safe in a file name.
std::string file_part(const std::string& text) {
  std::string part;
  for (char ch : text) part += std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' ? ch : '_';
  return part;
}

}  // namespace

std::vector<WinnerMap> winner_maps(const std::vector<Measurement>& measurements) {
  using SweepKey = std::tuple<std::string, Collective, std::string, MappingClass, int>;
  struct Best {
    double native = std::numeric_limits<double>::infinity(), time = std::numeric_limits<double>::infinity();
    double runner_up = std::numeric_limits<double>::infinity();
    std::string algorithm;
  };
  std::map<SweepKey, std::map<std::pair<int, long long>, Best>> sweeps;
  std::set<SweepKey> predicted;  // sweeps with cost-model predictions in them
  for (const Measurement& m : measurements) {
    if (m.table) continue;
    const SweepKey key{m.platform, m.collective, m.variant, m.mapping, m.ppn};
    if (m.predicted) predicted.insert(key);
    Best& best = sweeps[key][{m.procs, m.block_bytes}];
    if (m.native) best.native = std::min(best.native, m.time_us);
    if (m.time_us < best.time) {
      best.runner_up = best.time;
      best.time = m.time_us;
      best.algorithm = m.native ? "native" : m.algorithm;
    } else {
      best.runner_up = std::min(best.runner_up, m.time_us);
    }
  }
  std::vector<WinnerMap> maps;
  for (const auto& [key, cells] : sweeps) {
    const auto& [platform, collective, variant, mapping, ppn] = key;
    WinnerMap map;
    std::set<int> procs;
    std::set<long long> sizes;
    for (const auto& [cell, best] : cells) {
      procs.insert(cell.first);
      sizes.insert(cell.second);
    }
    map.procs.assign(procs.begin(), procs.end());
    map.block_bytes.assign(sizes.begin(), sizes.end());
    map.winner.assign(sizes.size(), std::vector<std::string>(procs.size()));
    map.speedup.assign(sizes.size(), std::vector<std::optional<double>>(procs.size()));
    for (const auto& [cell, best] : cells) {
      const auto row = std::distance(sizes.begin(), sizes.find(cell.second));
      const auto column = std::distance(procs.begin(), procs.find(cell.first));
      map.winner[row][column] = best.algorithm;
      if (std::isfinite(best.native))
        map.speedup[row][column] = best.native / best.time;
      else if (predicted.count(key) && std::isfinite(best.runner_up))
        map.speedup[row][column] = best.runner_up / best.time;
    }
    if (predicted.count(key)) map.speedup_title = "its lead, where there is no native (runner-up's time / its time)";
    const std::string name(collective_name(collective));
    const std::string what = variant.empty() ? name : name + " (" + variant + ")";
    map.title = what + " on " + platform + ", " + std::string(mapping_name(mapping)) + ", " + std::to_string(ppn) +
                " per node" + (predicted.count(key) ? " (predicted by collshim-model)" : "");
    map.file = "winners-" + file_part(platform) + "-" + name + (variant.empty() ? "" : "-" + file_part(variant)) + "-" +
               std::string(mapping_name(mapping)) + "-ppn" + std::to_string(ppn) + ".png";
    maps.push_back(std::move(map));
  }
  return maps;
}

std::string winner_maps_json(const std::vector<WinnerMap>& maps) {
  using Layout = JsonWriter::Layout;
  JsonWriter json(0);  // a map a line
  json.begin_array();
  for (const WinnerMap& map : maps) {
    json.begin_object(Layout::one_line)
        .member("title", map.title)
        .member("file", map.file)
        .member("speedup_title", map.speedup_title);
    json.key("procs").begin_array(Layout::one_line);
    for (const int procs : map.procs) json.value(procs);
    json.end_array().key("block_bytes").begin_array(Layout::one_line);
    for (const long long bytes : map.block_bytes) json.value(bytes);
    json.end_array().key("winner").begin_array(Layout::one_line);
    for (const auto& row : map.winner) {
      json.begin_array(Layout::one_line);
      for (const std::string& winner : row) json.value(winner);
      json.end_array();
    }
    json.end_array().key("speedup").begin_array(Layout::one_line);
    for (const auto& row : map.speedup) {
      json.begin_array(Layout::one_line);
      for (const std::optional<double>& speedup : row) speedup ? json.significant(*speedup, 6) : json.null();
      json.end_array();
    }
    json.end_array().end_object();
  }
  return json.end_array().text();
}

}  // namespace collshim::tune
