#pragma once
// The end-of-run report: rows of every rank merged, formatted as an aligned text table or as JSON
// (format documented in docs/rules-and-tuning.md, "Report"). Pure functions; the exchange between ranks is in
// report_exchange.hpp.
#include <string>
#include <vector>

#include "profile/profile.hpp"

namespace collshim {

struct ReportHeader {
  int ranks = 1;
  int nodes = 1;
  int ppn = 1;
  std::string mapping;
  bool oversubscribed = false;
  std::string mpi_library;
  std::vector<std::string> rule_files;
  // The cost model's confirmations widened on rank 0 (DecisionPolicy::run_trial): per key, where, why
  // (the measured / predicted ratios) and what the trial added. Every rank widens alike, so rank 0's
  // own keys speak for theirs; keys of communicators without rank 0 are in the ranks' info logs.
  std::vector<std::string> widened_trials;
};

// How to name what the keys refer to.
struct ReportNames {
  std::vector<std::string> choices;  // by AlgorithmChoice::id
  std::vector<std::string> rules;    // by rule index: "file:line:column"
};

struct MergedRow {
  ProfileKey key;
  long long calls_max = 0;    // most calls any one rank made: for one communicator, the number of operations
  long long calls_total = 0;  // summed over ranks
  long long bytes = 0;        // bytes received, summed over ranks
  double seconds_total = 0;   // time inside the calls, summed over ranks
  double seconds_max = 0;     // the largest per-rank total
};

// A nonblocking or persistent collective the shim passed on unhandled, over every rank.
struct MergedUnhandled {
  std::string function;       // "MPI_Iallgatherv"
  long long calls_max = 0;    // most calls any one rank made
  long long calls_total = 0;  // summed over ranks
  long long bytes = 0;        // bytes received, summed over ranks
};

// Merges the rows of every rank (index = rank), sorted by communicator size, collective, bucket.
std::vector<MergedRow> merge_rows(const std::vector<std::vector<ProfileRow>>& per_rank);
// The same for unhandled calls, in the order of `functions` (names by UnhandledRow::function).
std::vector<MergedUnhandled> merge_unhandled(const std::vector<std::vector<UnhandledRow>>& per_rank,
                                             const std::vector<std::string>& functions);

std::string format_text_report(const ReportHeader& header, const std::vector<MergedRow>& rows, const ReportNames& names,
                               const std::vector<MergedUnhandled>& unhandled = {});
std::string format_json_report(const ReportHeader& header, const std::vector<MergedRow>& rows, const ReportNames& names,
                               const std::vector<MergedUnhandled>& unhandled = {});

}  // namespace collshim
