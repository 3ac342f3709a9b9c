// decision_cost: how long the shim's cost-model decision takes per key (collective, size), on one
// core, as the shim makes it: a Selector from an EnvironmentSettings with a platform, its
// tuning_candidates(facts), Open MPI's own choice as native (library_decisions_for), the call built
// as entry_points.cpp's model_call builds it, and model::model_decision timed around. Per key: the
// median and the spread of --repeat runs (wall clock), the median CPU time of the thread, the
// candidates costed whole and pruned, and the slowest one to cost.
//
//   build/bench/decision_cost --platform config/platforms/fattree-contending.yaml --procs 1024
//       --placement sequential:16 cyclic:16 sequential:1 --bytes 8 1KiB 64KiB --repeat 5
//
// Times are wall-clock: pin it to one core (taskset -c 1) on a quiet machine. Nothing here is a
// threshold; docs/cost-model.md ("The cost of deciding") says what the targets are.
//
// An Alltoallv's pattern is costed as the shim sees it, rebuilt from every rank's summary
// (alltoall_summary.hpp); --pattern-form exact costs every pair's block as it is. --compare-summary
// decides every Alltoallv key both ways and prints, per key, both picks and the summary's pick
// costed on the exact pattern (docs/results.md, "The Alltoallv pattern from a summary"):
//
//   build/bench/decision_cost --compare-summary --collective alltoallv --platform ... --procs 64 256
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "algorithms/engine/collective.hpp"
#include "alltoallv_model_call.hpp"
#include "bench_case.hpp"
#include "model/cost/model_decision.hpp"
#include "model/platform/model_settings.hpp"
#include "decide/model_step.hpp"
#include "selector/environment.hpp"
#include "selector/mapping.hpp"
#include "selector/rule_table.hpp"
#include "selector/selector.hpp"

namespace {

using namespace collshim;

struct Placement {
  std::string name;
  MappingClass mapping = MappingClass::sequential;
  int ppn = 1;
};

std::optional<Placement> parse_placement(const std::string& text) {
  const std::size_t colon = text.find(':');
  if (colon == std::string::npos) return std::nullopt;
  const std::optional<MappingClass> mapping = parse_mapping(text.substr(0, colon));
  int ppn = 0;
  try {
    ppn = std::stoi(text.substr(colon + 1));
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (!mapping || ppn < 1) return std::nullopt;
  return Placement{text, *mapping, ppn};
}

struct Options {
  std::vector<std::string> platforms;
  std::vector<int> procs{1024};
  std::vector<std::string> placements{"sequential:16", "cyclic:16", "sequential:1"};
  std::vector<std::string> collectives{"allgather", "allgatherv", "alltoall", "alltoallv", "allreduce"};
  std::vector<std::string> patterns{"uniform", "sparse_8", "power_law"};
  std::vector<std::string> sizes{"8", "1KiB", "64KiB"};
  std::uint64_t seed = 1;
  std::string library = "ompi";  // COLLSHIM_MPI_LIBRARY's value: an alias or a table's name
  int repeat = 3;
  bool csv = false;
  bool assume_native = true;
  bool detail = false;
  // As the shim asks to confirm, with the candidates a widened trial adds (candidates_to_rank).
  std::size_t ranked_exactly =
      model::candidates_to_rank(TuneMode::confirm, static_cast<std::size_t>(TuningPolicy{}.widen_candidates));
  bench::PatternForm pattern_form = bench::PatternForm::summary;
  bool compare_summary = false;
  int exact_up_to = model::ModelCall{}.exact_up_to_p;
};

// Where the library's decision is not modelled (SMPI's Open MPI selector here: its Allgatherv, its
// XOR pair Alltoallv at a p that is not a power of two, its reduce-then-broadcast Allreduce for small
// vectors), the shim costs no native. To time what costing one takes, assume what Open MPI 4.1
// would run there: its Allgather decision for Allgatherv (its Allgatherv rules pick among the same
// algorithms), collshim's `linear` for Alltoallv, recursive doubling for Allreduce.
model::LibraryDecision assuming_native(model::LibraryDecision library) {
  return [library = std::move(library)](Collective collective, const model::LibraryFacts& facts) {
    model::NativeDecision decision = library(collective, facts);
    if (!decision.stand_in.empty()) return decision;
    if (collective == Collective::allgatherv) {
      decision = library(Collective::allgather, facts);
      if (decision.costed_as == Collective::allgather) decision.costed_as = Collective::allgatherv;
    } else {
      const std::string stand_in = collective == Collective::allreduce   ? "recursive_doubling"
                                   : collective == Collective::allgather ? "bruck"
                                                                         : "linear";
      decision = {stand_in, collective, stand_in, ""};
    }
    decision.library_algorithm = "assumed " + decision.library_algorithm;
    return decision;
  };
}

// This thread's CPU time: what the decision costs one core, whatever else the machine runs (its wall
// time grows with the load; this does much less).
double thread_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// One key's call as the shim's model_call builds it (an Alltoallv: bench::alltoallv_model_call), and
// the block it is keyed on.
model::ModelCall shim_call(Collective collective, int p, long long bytes, const std::string& pattern,
                           std::uint64_t seed, const std::vector<int>& node_of_rank, bench::PatternForm form,
                           long long& block_bytes) {
  block_bytes = bytes;
  if (collective != Collective::alltoallv) return {collective, p, bytes};
  bench::PatternCall patterned = bench::alltoallv_model_call(pattern, p, bytes, seed, node_of_rank, form);
  block_bytes = patterned.average_block_bytes;
  return std::move(patterned.call);
}

// A verdict's prediction of `choice` (native: the library's), where it costed it whole; else costed
// now, on `call`.
double predicted_us(const model::ModelSettings& settings, const model::ModelCall& call,
                    const std::vector<int>& node_of_rank, const model::ModelVerdict& verdict,
                    const AlgorithmChoice* choice, const AlgorithmChoice* native) {
  if (choice == native) {
    if (!verdict.native_at_least && verdict.why_native.empty()) return verdict.native_us;
    const std::optional<model::CallPrediction> library =
        model::predict_library(settings.platform, call, node_of_rank,
                               settings.library(call.collective, model::library_facts(call, node_of_rank, true)));
    return library ? library->prediction.us : 0;
  }
  for (const model::CandidateCost& c : verdict.ranked)
    if (c.choice == choice) return c.us;
  return model::predict_algorithm(settings.platform, call, node_of_rank, *choice).prediction.us;
}

// One Alltoallv key decided from the exact pattern and from its summary: a CSV row.
void compare_summary(const model::ModelSettings& settings, const std::string& platform_file, int p,
                     const Placement& placement, const std::vector<int>& node_of_rank, const Selector& selector,
                     const CallFacts& facts, const std::string& pattern, long long bytes, const Options& options) {
  const std::vector<const AlgorithmChoice*> candidates = selector.tuning_candidates(facts);
  const AlgorithmChoice* native = selector.native_choice();
  // The decision's processor time (the call built beforehand); for the summary also rebuilding the
  // pattern from the ranks' records, rank 0's other work.
  const auto decide = [&](bench::PatternForm form, model::ModelCall& call, double& cpu_seconds,
                          double& rebuild_seconds) {
    bench::PatternCall built = bench::alltoallv_model_call(pattern, p, bytes, options.seed, node_of_rank, form);
    call = std::move(built.call);
    if (form == bench::PatternForm::summary && !built.summaries.empty()) {
      const double rebuild_start = thread_cpu_seconds();
      const model::AlltoallBlocks rebuilt =
          model::blocks_from_summaries(built.summaries, node_of_rank, built.average_block_bytes);
      rebuild_seconds = thread_cpu_seconds() - rebuild_start;
      if (rebuilt.sending != call.pairs.sending) throw std::logic_error("the rebuilt pattern is not deterministic");
    }
    const double cpu_start = thread_cpu_seconds();
    model::ModelVerdict verdict = model::model_decision(settings, call, node_of_rank, candidates, native,
                                                        facts.commutative, options.ranked_exactly);
    cpu_seconds = thread_cpu_seconds() - cpu_start;
    return verdict;
  };
  model::ModelCall exact_call, summary_call;
  double exact_cpu = 0, summary_cpu = 0, rebuild_cpu = 0;
  const model::ModelVerdict exact = decide(bench::PatternForm::exact, exact_call, exact_cpu, rebuild_cpu);
  const model::ModelVerdict summary = decide(bench::PatternForm::summary, summary_call, summary_cpu, rebuild_cpu);
  const double exact_us = predicted_us(settings, exact_call, node_of_rank, exact, exact.pick, native);
  const double summary_us = predicted_us(settings, summary_call, node_of_rank, summary, summary.pick, native);
  // The summary's pick as the exact pattern costs it: what choosing it from the summary costs the job.
  const double summary_pick_exact_us = predicted_us(settings, exact_call, node_of_rank, exact, summary.pick, native);
  const double ratio = exact_us > 0 ? summary_pick_exact_us / exact_us : 1.0;
  const bool same = exact.pick == summary.pick;
  const auto name = [&](const AlgorithmChoice* choice) { return choice == native ? "native" : choice->text(); };
  std::printf("%s,%d,%s,%s,%lld,%s,%s,%.3f,%.3f,%.3f,%.4f,%d,%d,%.4f,%.4f,%.4f\n",
              bench::csv_field(platform_file).c_str(), p, placement.name.c_str(), pattern.c_str(), bytes,
              bench::csv_field(name(exact.pick)).c_str(), bench::csv_field(name(summary.pick)).c_str(), exact_us,
              summary_us, summary_pick_exact_us, ratio, same ? 1 : 0, same || ratio <= 1.05 ? 1 : 0, exact_cpu,
              summary_cpu, rebuild_cpu);
  std::fflush(stdout);
}

int run(const Options& options) {
  std::vector<Placement> placements;
  for (const std::string& text : options.placements) {
    const std::optional<Placement> placement = parse_placement(text);
    if (!placement) {
      std::cerr << "decision_cost: bad --placement '" << text << "', expected MAPPING:PPN, e.g. sequential:16\n";
      return 2;
    }
    placements.push_back(*placement);
  }
  std::vector<long long> sizes;
  for (const std::string& text : options.sizes) {
    const std::optional<long long> bytes = parse_byte_size(text);
    if (!bytes) {
      std::cerr << "decision_cost: bad --bytes '" << text << "'\n";
      return 2;
    }
    sizes.push_back(*bytes);
  }
  // Resolved once, before any output, so that an unknown name prints only its error.
  std::string library_name;
  model::LibraryDecision library =
      model::library_decisions_for(ProcessLibrary{"Open MPI (decision_cost)", "", {}}, options.library, library_name);
  if (!library) {
    std::cerr << "decision_cost: --library: " << library_name << "\n";
    return 2;
  }
  if (options.assume_native) library = assuming_native(std::move(library));
  if (options.compare_summary)
    std::printf(
        "platform,procs,placement,pattern,bytes,exact_pick,summary_pick,exact_pick_us,summary_pick_us,"
        "summary_pick_exact_us,ratio,same_pick,within_5pct,exact_cpu_s,summary_cpu_s,rebuild_cpu_s\n");
  else if (options.csv)
    std::printf(
        "platform,procs,placement,mapping,collective,pattern,bytes,candidates,exact,pruned,median_s,min_s,max_s,cpu_s,"
        "slowest,slowest_s,native_s,pick,native_algorithm,native_bounded\n");
  else
    std::printf("%-20s %6s %-14s %-10s %-9s %7s %4s %5s %6s %9s %9s %9s %9s  %-34s %9s  %s\n", "platform", "p",
                "placement", "collective", "pattern", "bytes", "cand", "exact", "pruned", "median_s", "min_s", "max_s",
                "cpu_s", "slowest candidate", "its_s", "pick");
  for (const std::string& platform_file : options.platforms) {
    // The shim's settings (load_model_settings) with the library's decisions as native, as
    // COLLSHIM_MPI_LIBRARY=--library gives them, without asking an MPI library for its version.
    EnvironmentSettings environment;
    environment.platform = platform_file;
    std::optional<model::ModelSettings> settings{std::in_place};
    try {
      settings->platform = model::load_platform(platform_file);
    } catch (const model::PlatformError& e) {
      std::cerr << "decision_cost: " << e.what() << "\n";
      return 2;
    }
    settings->platform_file = platform_file;
    settings->margin = environment.model_margin;
    settings->library = library;
    settings->library_name = library_name;
    std::vector<RuleDiagnostic> diagnostics;
    const Selector selector(environment, diagnostics);
    for (const int p : options.procs) {
      for (const Placement& placement : placements) {
        const TopologyOverride topology{std::max(1, (p + placement.ppn - 1) / placement.ppn), placement.mapping,
                                        std::nullopt};
        std::vector<int> node_of_rank;
        for (int r = 0; r < p; ++r) node_of_rank.push_back(topology.node_of_world_rank(r, p));
        const CommMapping mapping = classify_mapping(node_of_rank, false);
        for (const std::string& collective_name : options.collectives) {
          const std::optional<Collective> collective = find_collective(collective_name);
          if (!collective || !selector.model_decides(*collective)) {
            std::cerr << "decision_cost: --collective " << collective_name << " is not one the model decides\n";
            return 2;
          }
          const std::vector<std::string> patterns =
              *collective == Collective::alltoallv ? options.patterns : std::vector<std::string>{""};
          for (const std::string& pattern : patterns) {
            for (const long long bytes : sizes) {
              long long block_bytes = 0;
              model::ModelCall call = shim_call(*collective, p, bytes, pattern, options.seed, node_of_rank,
                                                options.pattern_form, block_bytes);
              call.exact_up_to_p = options.exact_up_to;
              // An integer sum for Allreduce: commutative, and every candidate may reorder it.
              const CallFacts facts{*collective, p, block_bytes, mapping.mapping, mapping.nodes, mapping.ppn};
              if (options.compare_summary) {
                if (*collective == Collective::alltoallv)
                  compare_summary(*settings, platform_file, p, placement, node_of_rank, selector, facts, pattern, bytes,
                                  options);
                continue;
              }
              const std::vector<const AlgorithmChoice*> candidates = selector.tuning_candidates(facts);
              std::vector<double> seconds, cpu_seconds;
              model::ModelVerdict verdict;
              for (int i = 0; i < options.repeat; ++i) {
                const double cpu_start = thread_cpu_seconds();
                const auto start = std::chrono::steady_clock::now();
                verdict = model::model_decision(*settings, call, node_of_rank, candidates, selector.native_choice(),
                                                facts.commutative, options.ranked_exactly);
                seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
                cpu_seconds.push_back(thread_cpu_seconds() - cpu_start);
              }
              // The last run's slowest candidate (each run costs the same candidates), whole or pruned.
              std::vector<const model::CandidateCost*> costed;
              for (const auto* list : {&verdict.ranked, &verdict.pruned})
                for (const model::CandidateCost& c : *list) costed.push_back(&c);
              std::sort(costed.begin(), costed.end(),
                        [](const auto* a, const auto* b) { return a->seconds > b->seconds; });
              const model::CandidateCost* slowest = costed.empty() ? nullptr : costed.front();
              const std::string slowest_name = slowest ? slowest->choice->text() : "-";
              const double slowest_seconds = slowest ? slowest->seconds : 0;
              const std::string shown_pattern = pattern.empty()                                     ? "-"
                                                : options.pattern_form == bench::PatternForm::exact ? pattern + "=exact"
                                                                                                    : pattern;
              const auto [low, high] = std::minmax_element(seconds.begin(), seconds.end());
              if (options.csv) {
                std::printf("%s,%d,%s,%s,%s,%s,%lld,%zu,%zu,%zu,%.4f,%.4f,%.4f,%.4f,%s,%.4f,%.4f,%s,%s,%d\n",
                            bench::csv_field(platform_file).c_str(), p, placement.name.c_str(),
                            std::string(mapping_name(mapping.mapping)).c_str(), collective_name.c_str(),
                            shown_pattern.c_str(), bytes, candidates.size(), verdict.ranked.size(),
                            verdict.pruned.size(), median(seconds), *low, *high, median(cpu_seconds),
                            bench::csv_field(slowest_name).c_str(), slowest_seconds, verdict.native_seconds,
                            bench::csv_field(verdict.pick->text()).c_str(),
                            bench::csv_field(verdict.native_algorithm).c_str(), verdict.native_at_least ? 1 : 0);
              } else {
                const std::string pick =
                    verdict.pick == selector.native_choice()
                        ? "native (" + (verdict.why_native.empty() ? verdict.native_algorithm : "not costed") + ")"
                        : verdict.pick->text();
                std::printf(
                    "%-20s %6d %-14s %-10s %-9s %7lld %4zu %5zu %6zu %9.4f %9.4f %9.4f %9.4f  %-34s %9.4f  %s\n",
                    settings->platform.name.c_str(), p, placement.name.c_str(), collective_name.c_str(),
                    shown_pattern.c_str(), bytes, candidates.size(), verdict.ranked.size(), verdict.pruned.size(),
                    median(seconds), *low, *high, median(cpu_seconds), slowest_name.c_str(), slowest_seconds,
                    pick.c_str());
              }
              if (options.detail) {  // every candidate of the last run, slowest to cost first
                std::printf("#   native %s: %.4f s, %s%.2f us\n", verdict.native_algorithm.c_str(),
                            verdict.native_seconds, verdict.native_at_least ? "bounded, at least " : "",
                            verdict.native_us);
                for (const model::CandidateCost* c : costed) {
                  const bool pruned = c >= verdict.pruned.data() && c < verdict.pruned.data() + verdict.pruned.size();
                  std::printf("#   %-50s %.4f s, %s%.2f us%s\n", c->choice->text().c_str(), c->seconds,
                              pruned ? "pruned, at least " : "", c->us, c->approximated ? "~" : "");
                }
              }
              std::fflush(stdout);
            }
          }
        }
      }
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Times the shim's cost-model decision per key (model_decision with the selector's candidates)",
               "decision_cost"};
  Options options;
  app.add_option("--platform", options.platforms, "platform descriptions (YAML)")->required()->check(CLI::ExistingFile);
  app.add_option("--procs", options.procs, "process counts")->check(CLI::Range(2, 1 << 20))->capture_default_str();
  app.add_option("--placement", options.placements, "MAPPING:PPN, e.g. sequential:16 cyclic:16 sequential:1")
      ->capture_default_str();
  app.add_option("--collective", options.collectives, "allgather, allgatherv, alltoall, alltoallv, allreduce")
      ->capture_default_str();
  app.add_option("--pattern", options.patterns, "Alltoallv patterns, as collshim-bench --pattern")
      ->capture_default_str();
  app.add_option("--bytes", options.sizes, "block per rank / per pair, Allreduce's vector")->capture_default_str();
  app.add_option("--seed", options.seed, "seed of the random patterns")->capture_default_str();
  app.add_option("--library", options.library,
                 "the library whose decisions are native, as COLLSHIM_MPI_LIBRARY names it: ompi (SMPI's Open MPI "
                 "selector), ompi-4.1, mpich-4, ...")
      ->capture_default_str();
  app.add_option("--repeat", options.repeat, "decisions per key (the median is reported)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_flag("--csv", options.csv, "CSV rows instead of the table");
  app.add_option("--ranked-exactly", options.ranked_exactly,
                 "how many of the fastest candidates the decision must cost exactly (the shim: 6 to confirm, its "
                 "three best and three for a widened trial (3 with COLLSHIM_TUNE_WIDEN=0), 5 under "
                 "COLLSHIM_TUNE=online; a large number costs all)")
      ->capture_default_str();
  app.add_option("--pattern-form", options.pattern_form,
                 "an Alltoallv's pattern as the model costs it: summary (as the shim gathers it) or exact (every "
                 "pair's block)")
      ->transform(CLI::CheckedTransformer(std::map<std::string, bench::PatternForm>{
          {"summary", bench::PatternForm::summary}, {"exact", bench::PatternForm::exact}}))
      ->capture_default_str();
  app.add_flag("--compare-summary", options.compare_summary,
               "for each Alltoallv key, decide from the exact pattern and from its summary, and print both picks "
               "and the summary's pick costed on the exact pattern (CSV); other collectives are skipped");
  app.add_flag("--detail", options.detail, "after each key, every candidate's time (lines starting with #)");
  app.add_option("--exact-up-to", options.exact_up_to,
                 "beyond this many ranks, candidates whose symmetry leaves many ranks to cost are costed by a sample "
                 "of them, approximated (a large number: exact everywhere)")
      ->capture_default_str();
  app.add_flag("!--shim-natives-only", options.assume_native,
               "cost only where the library's decision is modelled, as the shim does today (Allgatherv and "
               "Alltoallv then cost nothing); by default native is assumed for them (docs/cost-model.md)");
  CLI11_PARSE(app, argc, argv);
  return run(options);
}
