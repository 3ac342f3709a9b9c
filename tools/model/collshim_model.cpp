// collshim-model: the cost model's predictions from the command line.
//   collshim-model predict --platform config/platforms/X.yaml --procs 256 --ppn 16 --mapping sequential
//       --collective allgather --bytes 8 1KiB 64KiB
// prints, per size, every candidate algorithm's predicted time and the winner (no MPI is started).
// Without --platform, the description a job would use: COLLSHIM_PLATFORM, else the site default.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "algorithms/engine/algorithm_spec.hpp"
#include "bench_case.hpp"
#include "algorithms/engine/call_layout.hpp"
#include "algorithms/engine/collective.hpp"
#include "model/cost/call_prediction.hpp"
#include "model/cost/cost_model.hpp"
#include "model/cost/alltoall_profiles.hpp"
#include "model/platform/host_file.hpp"
#include "model/library/library_decisions.hpp"
#include "model/library/native_decision.hpp"
#include "profile/json_writer.hpp"
#include "selector/environment.hpp"
#include "selector/mapping.hpp"
#include "decide/online_tuning.hpp"
#include "selector/rule_table.hpp"
#include "selector/tuning_candidates.hpp"

namespace {

using namespace collshim;

struct PredictOptions {
  std::string platform;
  std::vector<int> procs;
  int ppn = 1;
  std::string mapping = "sequential";
  std::string collective = "allgather";
  std::vector<std::string> sizes{"8", "1KiB", "64KiB"};
  std::vector<std::string> algorithms;
  bool csv = false;
  bool json = false;
  bool after_barrier = false;
  int exact_up_to = model::ModelCall{}.exact_up_to_p;
  std::string pattern = "uniform";  // Alltoallv: which pairs send (collshim-bench's --pattern)
  std::uint64_t seed = 1;
  std::vector<std::string> natives;    // libraries whose own decision is costed too (library_decisions.hpp)
  int library_ranks_per_node = 0;      // > 0: the ranks per node the libraries' decisions see
  std::string hostfile, node_pattern;  // a placement from a host file instead of --ppn and --mapping
  std::string steps_csv;               // where to write every prediction step by step
};

int column_width(const std::string& label) { return std::max(12, static_cast<int>(label.size())); }

int run_predict(const PredictOptions& options) {
  const std::optional<Collective> collective = find_collective(options.collective);
  if (!collective) {
    std::cerr << "collshim-model: unknown --collective '" << options.collective << "', expected " << collective_names()
              << "\n";
    return 2;
  }
  if (collective_info(*collective).shape == CallShape::rooted) {
    std::cerr << "collshim-model: --collective " << options.collective
              << " is not modelled yet (rooted schedules depend on the root's counts)\n";
    return 2;
  }
  const std::vector<std::string>& patterns = bench::find_bench_case(Collective::alltoallv)->variants;
  if (std::find(patterns.begin(), patterns.end(), options.pattern) == patterns.end()) {
    std::cerr << "collshim-model: unknown --pattern '" << options.pattern << "', expected "
              << alternatives_text(patterns) << "\n";
    return 2;
  }
  if (options.pattern != "uniform" && *collective != Collective::alltoallv) {
    std::cerr << "collshim-model: --pattern applies to --collective alltoallv only\n";
    return 2;
  }
  const std::optional<MappingClass> mapping = parse_mapping(options.mapping);
  if (!mapping) {
    std::cerr << "collshim-model: unknown --mapping '" << options.mapping
              << "', expected single_node, sequential, cyclic or irregular\n";
    return 2;
  }
  std::vector<long long> sizes;
  for (const std::string& text : options.sizes) {
    const std::optional<long long> bytes = parse_byte_size(text);
    if (!bytes) {
      std::cerr << "collshim-model: bad --bytes value '" << text << "', expected a size like 8, 4KiB or 1MiB\n";
      return 2;
    }
    sizes.push_back(*bytes);
  }
  std::vector<std::string> host_slots;
  if (!options.hostfile.empty()) {
    try {
      host_slots = model::read_host_file(options.hostfile, options.node_pattern);
    } catch (const model::HostFileError& e) {
      std::cerr << "collshim-model: " << e.what() << "\n";
      return 2;
    }
  }
  // Without --platform, the description a job here would use (COLLSHIM_PLATFORM, else the site default).
  std::string platform_file = options.platform;
  if (platform_file.empty()) {
    const EnvironmentSettings job = read_process_platform();
    for (const std::string& error : job.errors) std::cerr << "collshim-model: " << error << "\n";
    if (!job.errors.empty()) return 2;
    if (!job.platform) {
      std::cerr << "collshim-model: predict needs a platform description: --platform FILE, COLLSHIM_PLATFORM, "
                   "or the site default (collshim-tune calibrate --install); here: "
                << platform_origin(job) << "\n";
      return 2;
    }
    platform_file = *job.platform;
    std::cerr << "collshim-model: platform " << platform_origin(job) << "\n";
  }
  model::Platform platform;
  try {
    platform = model::load_platform(platform_file);
  } catch (const model::PlatformError& e) {
    for (const Diagnostic& problem : e.problems()) std::cerr << "collshim-model: " << problem.text() << "\n";
    return 2;
  }
  std::vector<AlgorithmChoice> choices;
  const std::vector<std::string> specs =
      options.algorithms.empty() ? tuning_candidates(*collective) : options.algorithms;
  for (const std::string& spec : specs) {
    if (spec == "native") continue;  // the library's own choice is measured, not modelled
    const SpecParseResult parsed = parse_algorithm_spec(spec, *collective);
    if (!parsed.choice) {
      std::cerr << "collshim-model: --algorithms '" << spec << "': " << parsed.error << "\n";
      return 2;
    }
    if (!parsed.choice->algorithm->make_schedule) continue;  // builds its schedule per call, from MPI state
    choices.push_back(*parsed.choice);
  }
  // Each library's tables, under the name it was given (the row label keeps it: "native:ompi").
  std::vector<std::pair<std::string, const model::LibraryDecisions*>> natives;
  for (const std::string& name : options.natives) {
    const model::LibraryDecisions* tables = model::library_decisions(model::library_decisions_alias(name));
    if (tables == nullptr) {
      std::vector<std::string_view> names = model::library_decisions_aliases();
      for (const std::string_view table : model::library_decisions_names()) names.push_back(table);
      std::cerr << "collshim-model: unknown --native '" << name << "', expected " << alternatives_text(names) << "\n";
      return 2;
    }
    natives.emplace_back(name, tables);
  }

  std::set<std::string> not_costed_said;  // each reason once
  const bool table = !options.csv && !options.json;
  // --json: the header's facts per process count, every row per size, the notes.
  using Layout = JsonWriter::Layout;
  JsonWriter json;
  std::vector<std::string> notes;
  const auto note = [&](const std::string& text) {
    std::cerr << "collshim-model: note: " << text << "\n";
    notes.push_back(text);
  };
  if (options.json) {
    json.begin_object()
        .member("format", "collshim-model-predict")
        .member("version", 1)
        .member("platform", platform.name)
        .member("collective", options.collective)
        .member("pattern", *collective == Collective::alltoallv ? options.pattern : std::string())
        .member("after_barrier", options.after_barrier);
    json.key("natives").begin_array(Layout::one_line);
    for (const auto& [name, tables] : natives) json.value(model::native_label(name));
    json.end_array();
    json.key("predictions").begin_array();
  }
  std::ofstream steps;
  if (!options.steps_csv.empty()) {
    steps.open(options.steps_csv);
    if (!steps) {
      std::cerr << "collshim-model: cannot write --steps file '" << options.steps_csv << "'\n";
      return 2;
    }
    steps << "procs,bytes,algorithm,step,step_us,slowest_rank,opaque\n";
  }
  if (options.csv)
    std::printf(
        "platform,collective,pattern,procs,ppn,mapping,bytes,algorithm,predicted_us,approximated,model_seconds,"
        "nodes,block_bytes,library_algorithm\n");
  for (const int p : options.procs) {
    std::vector<int> node_of_rank;
    if (options.hostfile.empty()) {
      const TopologyOverride topology{std::max(1, (p + options.ppn - 1) / options.ppn), *mapping, std::nullopt};
      for (int r = 0; r < p; ++r) node_of_rank.push_back(topology.node_of_world_rank(r, p));
    } else {
      try {
        node_of_rank = model::node_of_rank_from_slots(host_slots, p, options.hostfile);
      } catch (const model::HostFileError& e) {
        std::cerr << "collshim-model: " << e.what() << "\n";
        return 2;
      }
    }
    // What the rows report: the placement's class, nodes and most ranks on a node, as the shim's
    // selector sees them.
    const CommMapping placement = classify_mapping(node_of_rank, false);
    const std::string mapping_text(mapping_name(placement.mapping));
    // Alltoallv: the pattern's pairs, per origin (ascending, each once); none for `uniform` (every
    // pair, as an Alltoall).
    const bool patterned = *collective == Collective::alltoallv;
    std::vector<std::vector<int>> destinations;
    long long sending_pairs = static_cast<long long>(p) * p;
    if (patterned && options.pattern != "uniform") {
      sending_pairs = 0;
      for (int origin = 0; origin < p; ++origin) {
        std::vector<int> to = bench::alltoallv_destinations(options.pattern, origin, p, options.seed);
        std::sort(to.begin(), to.end());
        to.erase(std::unique(to.begin(), to.end()), to.end());
        sending_pairs += static_cast<long long>(to.size());
        destinations.push_back(std::move(to));
      }
    }
    model::LibraryPlacement library_view = model::library_placement(node_of_rank);
    if (options.library_ranks_per_node > 0) {
      // As the library would see that many ranks on every node (SMPI on a host per core: 1 per node).
      library_view.ranks_per_node = options.library_ranks_per_node;
      library_view.nodes = 0;
    }
    const std::vector<double> start_us =
        options.after_barrier ? model::dissemination_barrier_exit_us(platform, node_of_rank) : std::vector<double>{};
    std::vector<const AlgorithmChoice*> eligible;
    for (const AlgorithmChoice& choice : choices) {
      const auto& rule = choice.algorithm->eligible;
      if (!rule || rule(p, choice.params)) eligible.push_back(&choice);
    }
    if (options.json) {
      json.begin_object()
          .member("procs", p)
          .member("nodes", placement.nodes)
          .member("ppn", placement.ppn)
          .member("mapping", mapping_text);
      json.key("algorithms").begin_array(Layout::one_line);
      for (const AlgorithmChoice* choice : eligible) json.value(choice->text());
      json.end_array();
      json.key("sizes").begin_array();
    }
    if (table) {
      std::printf(
          "# collshim-model: %s%s, p = %d (%d nodes x %d, %s), platform %s; predicted microseconds per call%s\n",
          options.collective.c_str(), patterned ? (" (" + options.pattern + ")").c_str() : "", p, placement.nodes,
          placement.ppn, mapping_text.c_str(), platform.name.c_str(),
          options.after_barrier ? ", each rank timed from its exit of a dissemination barrier" : "");
      std::printf("%10s", "bytes");
      for (const AlgorithmChoice* choice : eligible)
        std::printf(" %*s", column_width(choice->text()), choice->text().c_str());
      for (const auto& [name, tables] : natives) {
        const std::string label = model::native_label(name);
        std::printf(" %*s", column_width(label), label.c_str());
      }
      std::printf("  best\n");
    }
    for (const long long bytes : sizes) {
      // The call's data: Alltoallv's pattern gives each sending pair `bytes`.
      model::ModelCall call{*collective, p, bytes};
      call.exact_up_to_p = options.exact_up_to;
      for (const std::vector<int>& to : destinations) {
        call.pairs.sending.emplace_back();
        for (const int destination : to) call.pairs.sending.back().emplace_back(destination, bytes);
      }
      // The size rules test, as collshim-bench's CSV has it: an Alltoallv's average over all p² pairs.
      long long block_bytes = bytes;
      if (!destinations.empty()) block_bytes = bytes * sending_pairs / (static_cast<long long>(p) * p);
      double best = -1;
      std::string best_name;
      if (table) std::printf("%10lld", bytes);
      if (options.json) {
        json.begin_object().member("bytes", bytes).member("block_bytes", block_bytes);
        json.key("rows").begin_array();
      }
      // The rows of this size: collshim's algorithms, then each library's own decision, costed by
      // its stand-in (library_decisions.hpp; not costed where it has none).
      struct Row {
        std::string label;
        const AlgorithmChoice* choice = nullptr;  // collshim's algorithms; null for a library's decision
        std::optional<model::NativeDecision> decision;
      };
      std::vector<Row> rows;
      for (const AlgorithmChoice* choice : eligible) rows.push_back({choice->text(), choice, std::nullopt});
      for (const auto& [name, tables] : natives) {
        model::LibraryFacts facts{p, bytes, library_view};
        // The model's Allreduce vector is int64 (a library counts elements); its other calls are bytes.
        if (collective_info(*collective).shape == CallShape::reduction) facts.element_bytes = 8;
        // An Alltoallv pattern: the library sees the average block, the total and the largest.
        if (!destinations.empty()) {
          facts.bytes = block_bytes;
          facts.total_bytes = bytes * sending_pairs;
          facts.max_bytes = bytes;
        }
        Row row{model::native_label(name), nullptr, model::native_decision(*tables, *collective, facts)};
        if (row.decision->stand_in.empty() && not_costed_said.insert(row.label + ": " + row.decision->why_not).second)
          note(row.label + " from " + std::to_string(bytes) + " B: not costed: " + row.decision->why_not);
        rows.push_back(std::move(row));
      }
      for (const Row& row : rows) {
        const auto start = std::chrono::steady_clock::now();
        const std::optional<model::CallPrediction> costed =
            row.choice ? model::predict_algorithm(platform, call, node_of_rank, *row.choice, start_us)
                       : model::predict_library(platform, call, node_of_rank, *row.decision, start_us);
        if (!costed) {
          if (table) std::printf(" %*s", column_width(row.label), "n/a");
          if (options.json) {
            json.begin_object(Layout::one_line).member("algorithm", row.label).key("predicted_us").null();
            if (row.decision) json.member("library_algorithm", row.decision->library_algorithm);
            if (row.decision) json.member("not_costed", row.decision->why_not);
            json.end_object();
          }
          continue;
        }
        if (!costed->note.empty() && not_costed_said.insert(row.label + ": rounded").second) note(costed->note);
        const model::Prediction& prediction = costed->prediction;
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const std::string library_algorithm = row.decision ? row.decision->library_algorithm : "";
        if (options.csv) {
          std::printf("%s,%s,%s,%d,%d,%s,%lld,%s,%.3f,%d,%.3f,%d,%lld,%s\n", bench::csv_field(platform.name).c_str(),
                      options.collective.c_str(), patterned ? options.pattern.c_str() : "", p, placement.ppn,
                      mapping_text.c_str(), bytes, bench::csv_field(row.label).c_str(), prediction.us,
                      prediction.approximated ? 1 : 0, seconds, placement.nodes, block_bytes,
                      bench::csv_field(library_algorithm).c_str());
        } else if (table) {
          std::printf(" %*.2f%s", column_width(row.label) - 1, prediction.us, prediction.approximated ? "~" : " ");
        } else {
          json.begin_object(Layout::one_line)
              .member("algorithm", row.label)
              .member("predicted_us", prediction.us)
              .member("approximated", prediction.approximated);
          if (row.decision) json.member("library_algorithm", library_algorithm);
          json.end_object();
        }
        for (std::size_t i = 0; steps.is_open() && i < prediction.steps.size(); ++i) {
          const model::StepPrediction& step = prediction.steps[i];
          steps << p << ',' << bytes << ',' << bench::csv_field(row.label) << ',' << i << ',' << step.us << ','
                << step.slowest_rank << ',' << (step.opaque ? 1 : 0) << '\n';
        }
        if (best < 0 || prediction.us < best) best = prediction.us, best_name = row.label;
      }
      if (table) std::printf("  %s\n", best_name.c_str());
      if (options.json) {
        json.end_array().key("best");
        best < 0 ? json.null() : json.value(best_name);
        json.end_object();
      }
    }
    if (options.json) json.end_array().end_object();
  }
  if (options.json) {
    json.end_array().key("notes").begin_array();
    for (const std::string& text : notes) json.value(text);
    std::fputs(json.end_array().end_object().text().c_str(), stdout);
  }
  if (table) {
    std::printf("# ~: contains an opaque phase (library collective or shared memory), costed approximately\n");
    if (!natives.empty())
      std::printf(
          "# native:LIBRARY: the library's own decision, costed by a stand-in schedule with its messages "
          "(--csv names it per size); n/a: not modelled there\n");
  }
  return 0;
}

// The constants that scripts need, from the code that uses them (bench/sim reads them instead of
// copying them).
int run_constants() {
  const TuningPolicy policy;
  const EnvironmentSettings settings;
  JsonWriter json;
  json.begin_object().member("format", "collshim-constants").member("version", 1);
  json.key("online_tuning")
      .begin_object()
      .member("warmup_calls", policy.warmup_calls)
      .member("timed_calls", policy.timed_calls)
      .member("drop_factor", policy.drop_factor)
      .member("first_margin", policy.first_margin)
      .member("timed_seconds", policy.timed_seconds)
      .member("max_timed_calls", policy.max_timed_calls)
      .member("recheck_after_calls", policy.recheck_after_calls)
      .end_object();
  json.key("model").begin_object().member("margin", settings.model_margin).end_object();
  std::fputs(json.end_object().text().c_str(), stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Predicts collective times from schedules with the tau-Lop cost model.", "collshim-model"};
  app.require_subcommand(1);
  PredictOptions predict;
  CLI::App* predict_command =
      app.add_subcommand("predict", "predicted time of every algorithm and the winner, per size");
  predict_command
      ->add_option("--platform", predict.platform,
                   "platform description (YAML); default: the one a job would use, COLLSHIM_PLATFORM or the site "
                   "default " +
                       site_platform_file())
      ->check(CLI::ExistingFile);
  predict_command->add_option("--procs", predict.procs, "process counts")->required()->check(CLI::Range(1, 1 << 20));
  CLI::Option* ppn = predict_command->add_option("--ppn", predict.ppn, "ranks per node")
                         ->check(CLI::Range(1, 1 << 16))
                         ->capture_default_str();
  CLI::Option* mapping = predict_command
                             ->add_option("--mapping", predict.mapping,
                                          "placement of ranks on nodes: sequential, cyclic, irregular or single_node")
                             ->capture_default_str();
  CLI::Option* hostfile =
      predict_command
          ->add_option("--hostfile", predict.hostfile,
                       "placement from a host file instead (host slots=N, host:N or a host per line; ranks fill the "
                       "slots in order)")
          ->check(CLI::ExistingFile)
          ->excludes(ppn)
          ->excludes(mapping);
  predict_command
      ->add_option("--node-pattern", predict.node_pattern,
                   "with --hostfile: a regular expression whose first group names a host's node, for platforms with "
                   "a host per core, e.g. '(.*)-c[0-9]+'")
      ->needs(hostfile);
  predict_command
      ->add_option("--collective", predict.collective, "allgather, allgatherv, alltoall, alltoallv or allreduce")
      ->capture_default_str();
  predict_command->add_option("--bytes", predict.sizes,
                              "sizes: the block per rank (allgathers), per pair (alltoall), the vector (allreduce)");
  predict_command->add_option("--algorithms", predict.algorithms, "algorithm specs (default: the tuning candidates)");
  predict_command->add_option("--pattern", predict.pattern, "Alltoallv: which pairs send, as collshim-bench --pattern")
      ->capture_default_str();
  predict_command->add_option("--seed", predict.seed, "seed of the random patterns, as collshim-bench --seed")
      ->capture_default_str();
  predict_command->add_option("--native", predict.natives,
                              "also cost these MPI libraries' own choice, as rows native:NAME: tables of "
                              "config/libraries (ompi-4.1, ompi-5.0, mpich-4, mpich-4-ch3, smpi-3.32-ompi, ...), or "
                              "ompi, mpich, mvapich2, impi for SMPI 3.32's selectors");
  predict_command
      ->add_option("--library-ranks-per-node", predict.library_ranks_per_node,
                   "the ranks per node the libraries' decisions see (mvapich2 and impi pick their tables by it, "
                   "ompi-5.0 and mpich-4 their node-aware algorithms; default: the placement's). SMPI on a "
                   "platform with a host per core shows them 1")
      ->check(CLI::PositiveNumber);
  CLI::Option* csv =
      predict_command->add_flag("--csv", predict.csv, "one CSV row per prediction, with the time the model took");
  predict_command
      ->add_flag("--json", predict.json,
                 "one JSON object (collshim-model-predict, version 1): per process count the placement, per size "
                 "every row and the winner, and the notes")
      ->excludes(csv);
  predict_command->add_flag("--after-barrier", predict.after_barrier,
                            "time every rank from its exit of a dissemination barrier (MPICH's), as collshim-bench "
                            "under smpi/barrier:mpich measures: the barrier's skew counts");
  predict_command
      ->add_option("--exact-up-to", predict.exact_up_to,
                   "beyond this many ranks, an algorithm whose symmetry leaves many ranks to cost is costed by a "
                   "sample of them, approximated (docs/cost-model.md); 1 samples wherever it applies")
      ->capture_default_str();
  predict_command->add_option("--steps", predict.steps_csv,
                              "also write every prediction step by step to this CSV file (per step: the longest "
                              "any rank spent in it, that rank, whether an opaque phase)");
  CLI::App* constants_command = app.add_subcommand(
      "constants", "the constants scripts need (the online tuning policy, the model's margin), as JSON");
  bool constants_json = true;  // JSON is the only form; the flag says so on the command line
  constants_command->add_flag("--json", constants_json, "JSON (the only form)");
  CLI11_PARSE(app, argc, argv);
  if (constants_command->parsed()) return run_constants();
  return run_predict(predict);
}
