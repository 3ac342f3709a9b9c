#include "profile/report.hpp"

#include <cctype>

#include "profile/json_writer.hpp"

#include "selector/selector.hpp"  // Decision::no_rule, forced_rule: what a key's rule_index can say

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <map>
#include <tuple>

namespace collshim {
namespace {

std::string rule_name(int index, const ReportNames& names) {
  if (index == Decision::no_rule) return "none matched";
  if (index == Decision::forced_rule) return "forced";
  if (index == Decision::tuned_online) return "tuned online";
  if (index == Decision::tuning_trial) return "tuning trial";
  if (index == Decision::device_memory) return "device memory";
  if (index == Decision::model_pick) return "model";
  if (index == Decision::model_confirmed) return "model, confirmed";
  if (index == Decision::model_kept_native) return "model, kept native";
  if (index == Decision::model_widened) return "model, widened";
  return index >= 0 && index < static_cast<int>(names.rules.size()) ? names.rules[index] : "?";
}

std::string choice_name(int id, const ReportNames& names) {
  return id >= 0 && id < static_cast<int>(names.choices.size()) ? names.choices[id] : "?";
}

// What online tuning cost: its trial calls (per rank, the most any rank made) and the time inside
// them (the slowest rank's), summed over the rows of trials.
struct TuningCost {
  long long calls = 0;
  double seconds = 0;
};
TuningCost tuning_cost(const std::vector<MergedRow>& rows) {
  TuningCost cost;
  for (const MergedRow& r : rows) {
    if (r.key.rule_index != Decision::tuning_trial) continue;
    cost.calls += r.calls_max;
    cost.seconds += r.seconds_max;
  }
  return cost;
}

}  // namespace

namespace {

// A row's collective as the text report names it: "Allgather", and the nonblocking and persistent
// forms by their MPI names without the prefix, in the same case ("iallgather", "allgather_init").
std::string row_collective(const ProfileKey& key) {
  const auto collective = static_cast<Collective>(key.collective);
  if (key.form == static_cast<int>(CallForm::blocking)) return std::string(collective_name(collective));
  std::string name = form_function_name(mpi_function_name(collective), static_cast<CallForm>(key.form)).substr(4);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

}  // namespace

std::vector<MergedRow> merge_rows(const std::vector<std::vector<ProfileRow>>& per_rank) {
  auto order = [](const ProfileKey& k) {
    return std::tuple(k.comm_size, k.collective, k.form, k.bucket, k.choice_id, k.rule_index);
  };
  std::map<decltype(order(ProfileKey{})), MergedRow> merged;
  for (const auto& rows : per_rank) {
    for (const ProfileRow& row : rows) {
      MergedRow& m = merged[order(row.key)];
      m.key = row.key;
      m.calls_max = std::max(m.calls_max, row.counts.calls);
      m.calls_total += row.counts.calls;
      m.bytes += row.counts.bytes;
      m.seconds_total += row.counts.seconds;
      m.seconds_max = std::max(m.seconds_max, row.counts.seconds);
    }
  }
  std::vector<MergedRow> result;
  for (auto& [order_key, row] : merged) result.push_back(row);
  return result;
}

std::vector<MergedUnhandled> merge_unhandled(const std::vector<std::vector<UnhandledRow>>& per_rank,
                                             const std::vector<std::string>& functions) {
  std::vector<MergedUnhandled> merged(functions.size());
  for (std::size_t f = 0; f < functions.size(); ++f) merged[f].function = functions[f];
  for (const auto& rows : per_rank) {
    for (const UnhandledRow& row : rows) {
      if (row.function < 0 || row.function >= static_cast<int>(merged.size())) continue;
      MergedUnhandled& m = merged[row.function];
      m.calls_max = std::max(m.calls_max, row.calls);
      m.calls_total += row.calls;
      m.bytes += row.bytes;
    }
  }
  std::erase_if(merged, [](const MergedUnhandled& m) { return m.calls_total == 0; });
  return merged;
}

std::string format_text_report(const ReportHeader& h, const std::vector<MergedRow>& rows, const ReportNames& names,
                               const std::vector<MergedUnhandled>& unhandled) {
  std::string files;
  for (const auto& f : h.rule_files) files += (files.empty() ? "" : ", ") + f;
  std::string out = fmt::format(
      "collshim report: {} ranks, {} node(s), up to {} per node, mapping {}, {}\n"
      "MPI library: {}\nrule files: {}\n",
      h.ranks, h.nodes, h.ppn, h.mapping, h.oversubscribed ? "oversubscribed" : "not oversubscribed", h.mpi_library,
      files.empty() ? "(none)" : files);
  const std::vector<std::string> titles = {"ranks", "collective", "block size",   "algorithm", "rule",
                                           "calls", "bytes",      "time total s", "time max s"};
  std::vector<std::vector<std::string>> table;
  for (const MergedRow& r : rows) {
    table.push_back({std::to_string(r.key.comm_size), row_collective(r.key), bucket_text(r.key.bucket),
                     choice_name(r.key.choice_id, names), rule_name(r.key.rule_index, names),
                     std::to_string(r.calls_max), std::to_string(r.bytes), fmt::format("{:.6f}", r.seconds_total),
                     fmt::format("{:.6f}", r.seconds_max)});
  }
  std::vector<std::size_t> width(titles.size());
  for (std::size_t c = 0; c < titles.size(); ++c) {
    width[c] = titles[c].size();
    for (const auto& line : table) width[c] = std::max(width[c], line[c].size());
  }
  auto emit = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const bool numeric = c == 0 || c >= 5;
      line += (c ? "  " : "") +
              (numeric ? fmt::format("{:>{}}", cells[c], width[c]) : fmt::format("{:<{}}", cells[c], width[c]));
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  };
  emit(titles);
  for (const auto& line : table) emit(line);
  if (rows.empty()) out += "(no intercepted calls)\n";
  if (const TuningCost cost = tuning_cost(rows); cost.calls > 0)
    out += fmt::format(
        "trial calls (online tuning, the cost model's confirmation): {}, {:.6f} s inside them (rule "
        "'tuning trial'); rows with rule 'tuned online', 'model, confirmed' or 'model, kept native' run "
        "what they settled on\n",
        cost.calls, cost.seconds);
  if (!h.widened_trials.empty()) {
    out += "widened trials (rule 'model, widened'; as rank 0 saw them):\n";
    for (const std::string& widened : h.widened_trials) out += "  " + widened + "\n";
  }
  out +=
      "calls: per rank (the most any rank made); bytes: received, summed over ranks; "
      "time: inside the calls, summed over ranks and the largest single rank\n";
  if (!unhandled.empty()) {
    out +=
        "passed through, not handled (nonblocking and persistent calls on a communicator the shim has no state for "
        "yet, with arguments it does not take, or with COLLSHIM_NONBLOCKING=native, go to the MPI library as they "
        "are):\n";
    std::size_t name_width = 0;
    for (const MergedUnhandled& u : unhandled) name_width = std::max(name_width, u.function.size());
    for (const MergedUnhandled& u : unhandled)
      out += fmt::format("  {:<{}}  calls {}  bytes {}\n", u.function, name_width, u.calls_max, u.bytes);
  }
  return out;
}

std::string format_json_report(const ReportHeader& h, const std::vector<MergedRow>& rows, const ReportNames& names,
                               const std::vector<MergedUnhandled>& unhandled) {
  using Layout = JsonWriter::Layout;
  JsonWriter out;
  out.begin_object()
      .member("format", "collshim-report")
      .member("version", 1)
      .member("ranks", h.ranks)
      .member("nodes", h.nodes)
      .member("ppn", h.ppn)
      .member("mapping", h.mapping)
      .member("oversubscribed", h.oversubscribed)
      .member("mpi_library", h.mpi_library);
  out.key("rule_files").begin_array(Layout::one_line);
  for (const std::string& file : h.rule_files) out.value(file);
  out.end_array();
  out.key("rows").begin_array();
  for (const MergedRow& r : rows) {
    out.begin_object(Layout::one_line)
        .member("comm_size", r.key.comm_size)
        .member("collective", collective_name(static_cast<Collective>(r.key.collective)))
        .member("form", form_name(static_cast<CallForm>(r.key.form)))
        .member("algorithm", choice_name(r.key.choice_id, names))
        .member("rule", rule_name(r.key.rule_index, names))
        .member("bucket_low_bytes", r.key.bucket < 0 ? 0 : (1LL << r.key.bucket))
        .member("bucket", bucket_text(r.key.bucket))
        .member("calls", r.calls_max)
        .member("calls_total", r.calls_total)
        .member("bytes", r.bytes);
    out.key("time_total_s").fixed(r.seconds_total, 9);
    out.key("time_max_s").fixed(r.seconds_max, 9);
    out.end_object();
  }
  out.end_array();
  const TuningCost cost = tuning_cost(rows);
  out.key("tuning").begin_object(Layout::one_line).member("trial_calls", cost.calls);
  out.key("trial_time_s").fixed(cost.seconds, 9);
  out.end_object();
  if (!h.widened_trials.empty()) {
    out.key("widened_trials").begin_array();
    for (const std::string& widened : h.widened_trials) out.value(widened);
    out.end_array();
  }
  out.key("not_handled").begin_array();
  for (const MergedUnhandled& u : unhandled)
    out.begin_object(Layout::one_line)
        .member("function", u.function)
        .member("calls", u.calls_max)
        .member("calls_total", u.calls_total)
        .member("bytes", u.bytes)
        .end_object();
  out.end_array();
  return out.end_object().text();
}

}  // namespace collshim
