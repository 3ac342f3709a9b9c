// collshim-model: the cost model's predictions from the command line.
//   collshim-model predict --platform config/platforms/X.yaml --procs 256 --ppn 16 --mapping sequential
//       --collective allgather --bytes 8 1KiB 64KiB
// prints, per size, every candidate algorithm's predicted time and the winner (no MPI is started).
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

#include "algorithms/algorithm_spec.hpp"
#include "bench_case.hpp"
#include "algorithms/call_layout.hpp"
#include "algorithms/collective.hpp"
#include "model/cost_model.hpp"
#include "model/alltoall_profiles.hpp"
#include "model/host_file.hpp"
#include "model/library_decisions.hpp"
#include "model/native_decision.hpp"
#include "selector/mapping.hpp"
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
  bool after_barrier = false;
  std::string pattern = "uniform";  // Alltoallv: which pairs send (collshim-bench's --pattern)
  std::uint64_t seed = 1;
  std::vector<std::string> natives;  // libraries whose own decision is costed too (library_decisions.hpp)
  int library_ranks_per_node = 0;     // > 0: the ranks per node the libraries' decisions see
  std::string hostfile, node_pattern;  // a placement from a host file instead of --ppn and --mapping
  std::string steps_csv;               // where to write every prediction step by step
};

BlockNaming naming_of(Collective collective) {
  switch (collective_info(collective).shape) {
    case CallShape::allgather_like: return BlockNaming::allgather;
    case CallShape::alltoallv_like: return BlockNaming::alltoall;
    case CallShape::reduction: return BlockNaming::reduction;
    case CallShape::rooted: break;
  }
  return BlockNaming::gather;
}

// The data of a call of `bytes`: the allgathers' block per rank, Alltoall's block per pair,
// Alltoallv's per sending pair of the pattern (`sends`: p*p flags, origin-major; summed datum by
// datum), a reduction's vector cut into p segments of whole 8-byte elements (as the layout cuts it).
CheckSetup call_setup(Collective collective, int p, long long bytes,
                      const std::shared_ptr<const std::vector<bool>>& sends) {
  const BlockNaming naming = naming_of(collective);
  if (sends)
    return {naming, p, [bytes, sends](std::int64_t datum) { return (*sends)[static_cast<std::size_t>(datum)] ? bytes : 0LL; }};
  if (collective_info(collective).shape != CallShape::reduction) return uniform_setup(naming, p, bytes);
  const long long elements = bytes / 8;
  CheckSetup setup{naming, p, [elements, p](std::int64_t segment) {
                     return 8 * segment_elements(elements, p, static_cast<int>(segment));
                   }};
  setup.datum_run_bytes = [elements, p](std::int64_t first, std::int64_t count) {
    return 8 * segments_elements(elements, p, first, count);
  };
  return setup;
}

int column_width(const std::string& label) { return std::max(12, static_cast<int>(label.size())); }

int run_predict(const PredictOptions& options) {
  const std::optional<Collective> collective = find_collective(options.collective);
  if (!collective) {
    std::cerr << "collshim-model: unknown --collective '" << options.collective << "', expected " << collective_names() << "\n";
    return 2;
  }
  if (collective_info(*collective).shape == CallShape::rooted) {
    std::cerr << "collshim-model: --collective " << options.collective
              << " is not modelled yet (rooted schedules depend on the root's counts)\n";
    return 2;
  }
  const std::vector<std::string>& patterns = bench::find_bench_case(Collective::alltoallv)->variants;
  if (std::find(patterns.begin(), patterns.end(), options.pattern) == patterns.end()) {
    std::cerr << "collshim-model: unknown --pattern '" << options.pattern << "', expected " << alternatives_text(patterns) << "\n";
    return 2;
  }
  if (options.pattern != "uniform" && *collective != Collective::alltoallv) {
    std::cerr << "collshim-model: --pattern applies to --collective alltoallv only\n";
    return 2;
  }
  const std::optional<MappingClass> mapping = parse_mapping(options.mapping);
  if (!mapping) {
    std::cerr << "collshim-model: unknown --mapping '" << options.mapping << "', expected single_node, sequential, cyclic or irregular\n";
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
  model::Platform platform;
  try {
    platform = model::load_platform(options.platform);
  } catch (const model::PlatformError& e) {
    std::cerr << "collshim-model: " << e.what() << "\n";
    return 2;
  }
  std::vector<AlgorithmChoice> choices;
  const std::vector<std::string> specs = options.algorithms.empty() ? tuning_candidates(*collective) : options.algorithms;
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
    std::printf("platform,collective,pattern,procs,ppn,mapping,bytes,algorithm,predicted_us,approximated,model_seconds,"
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
    // Alltoallv: the pattern's pairs; none for `uniform` (every pair, as an Alltoall: the p² flags
    // alone took seconds at p = 16384).
    const bool patterned = *collective == Collective::alltoallv;
    std::shared_ptr<const std::vector<bool>> sends;
    std::vector<std::vector<int>> destinations;  // per origin, ascending
    if (patterned && options.pattern != "uniform") {
      auto flags = std::make_shared<std::vector<bool>>(static_cast<std::size_t>(p) * p, false);
      for (int origin = 0; origin < p; ++origin) {
        destinations.push_back(bench::alltoallv_destinations(options.pattern, origin, p, options.seed));
        std::sort(destinations.back().begin(), destinations.back().end());
        for (const int to : destinations.back()) (*flags)[static_cast<std::size_t>(origin) * p + to] = true;
      }
      sends = std::move(flags);
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
    if (!options.csv) {
      std::printf("# collshim-model: %s%s, p = %d (%d nodes x %d, %s), platform %s; predicted microseconds per call%s\n",
                  options.collective.c_str(), patterned ? (" (" + options.pattern + ")").c_str() : "", p, placement.nodes, placement.ppn, mapping_text.c_str(), platform.name.c_str(),
                  options.after_barrier ? ", each rank timed from its exit of a dissemination barrier" : "");
      std::printf("%10s", "bytes");
      for (const AlgorithmChoice* choice : eligible) std::printf(" %*s", column_width(choice->text()), choice->text().c_str());
      for (const auto& [name, tables] : natives) {
        const std::string label = model::native_label(name);
        std::printf(" %*s", column_width(label), label.c_str());
      }
      std::printf("  best\n");
    }
    for (const long long bytes : sizes) {
      const CheckSetup call = call_setup(*collective, p, bytes, sends);
      // The size rules test, as collshim-bench's CSV has it: an Alltoallv's average over all p² pairs.
      long long block_bytes = bytes;
      if (sends) block_bytes = bytes * std::count(sends->begin(), sends->end(), true) / (static_cast<long long>(p) * p);
      double best = -1;
      std::string best_name;
      if (!options.csv) std::printf("%10lld", bytes);
      // Data of one size everywhere keeps the algorithms' rank symmetries (the model then costs one
      // rank per orbit); Alltoallv's patterns and a vector that does not split evenly break them.
      const bool one_size = !sends && (collective_info(*collective).shape != CallShape::reduction || bytes / 8 % p == 0);
      // An Alltoall(v)'s blocks, for the profiles that come from counts (alltoall_profiles.hpp).
      const bool pairs = naming_of(*collective) == BlockNaming::alltoall;
      model::AlltoallBlocks blocks{bytes, {}};
      for (const std::vector<int>& to : destinations) {
        blocks.sending.emplace_back();
        for (const int destination : to) blocks.sending.back().emplace_back(destination, bytes);
      }
      // The rows of this size: collshim's algorithms, then each library's own decision, costed by
      // its stand-in (library_decisions.hpp; not costed where it has none).
      struct Row {
        std::string label;
        std::function<Schedule(int rank)> schedule_of;  // empty: not costed
        RankSymmetry symmetry;
        std::string library_algorithm;
        Collective collective;  // of the schedule
        const AlgorithmChoice* choice = nullptr;  // collshim's algorithms; null for a library's decision
        long long stand_in_bytes = 0;  // a library's decision: the stand-in's block (NativeDecision::whole_buffers)
      };
      std::vector<Row> rows;
      for (const AlgorithmChoice* choice : eligible) {
        rows.push_back({choice->text(),
                        [choice, &node_of_rank](int rank) { return generate_schedule(*choice, node_of_rank, rank); },
                        rank_symmetry(*choice, node_of_rank), "", *collective, choice});
      }
      for (const auto& [name, tables] : natives) {
        model::LibraryFacts facts{p, bytes, library_view};
        // The model's Allreduce vector is int64 (a library counts elements); its other calls are bytes.
        if (collective_info(*collective).shape == CallShape::reduction) facts.element_bytes = 8;
        const model::NativeDecision decision = model::native_decision(*tables, *collective, facts);
        Row row{model::native_label(name), {}, {}, decision.library_algorithm, decision.costed_as};
        row.stand_in_bytes = decision.whole_buffers ? bytes * p : bytes;
        if (decision.stand_in.empty()) {
          if (not_costed_said.insert(row.label + ": " + decision.why_not).second)
            std::cerr << "collshim-model: note: " << row.label << " from " << bytes
                      << " B: not costed: " << decision.why_not << "\n";
        } else {
          model::NativeStandIn stand_in = model::native_stand_in(decision, node_of_rank);
          row.schedule_of = std::move(stand_in.schedule_of);
          row.symmetry = stand_in.symmetry;
        }
        rows.push_back(std::move(row));
      }
      for (const Row& row : rows) {
        if (!row.schedule_of) {
          if (!options.csv) std::printf(" %*s", column_width(row.label), "n/a");
          continue;
        }
        // A library's decision is costed by its stand-in (NativeDecision), perhaps another
        // collective's schedule, over blocks of the call's size; the library knows every block's size.
        CheckSetup stand_in = call_setup(row.collective, p, row.stand_in_bytes, nullptr);
        stand_in.every_size_known = true;
        const auto start = std::chrono::steady_clock::now();
        const CheckSetup& costed_call = row.choice ? call : stand_in;
        std::function<std::vector<model::RankProfile>()> counted;  // profiles from counts, where the algorithm has them
        if (row.choice && pairs) counted = [&] { return model::counted_alltoall_profiles(*row.choice, node_of_rank, blocks); };
        // An Allreduce vector that does not split into p equal segments breaks the rank symmetry, and
        // costing every rank of a schedule with many steps (the ring's 2(p - 1)) is O(p²): 116 s at
        // p = 16384. Beyond a few million rank-steps the vector is costed as the next one that splits
        // evenly (less than p elements more) and the prediction is marked approximated.
        constexpr long long exact_rank_steps = 1LL << 22;
        const bool rounded = !one_size && !sends && costed_call.naming == BlockNaming::reduction &&
                             row.symmetry.kind != RankSymmetry::Kind::none &&
                             static_cast<long long>(row.schedule_of(0).steps.size()) * p > exact_rank_steps;
        const long long elements = bytes / 8, even_elements = (elements + p - 1) / p * p;
        const CheckSetup even_call = call_setup(row.collective, p, even_elements * 8, nullptr);
        if (rounded && not_costed_said.insert(row.label + ": rounded").second)
          std::cerr << "collshim-model: note: " << row.label << " at p = " << p << ": a vector of " << elements
                    << " elements is costed as " << even_elements << " (p equal segments), approximated\n";
        const CheckSetup& exact_or_even = rounded ? even_call : costed_call;
        model::Prediction prediction = model::predict(
            platform, exact_or_even, node_of_rank,
            [&](int rank) { return model::rank_profile(exact_or_even, rank, row.schedule_of(rank)); }, start_us,
            one_size || rounded ? row.symmetry : RankSymmetry{}, counted);
        prediction.approximated = prediction.approximated || rounded;
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (options.csv) {
          std::printf("%s,%s,%s,%d,%d,%s,%lld,%s,%.3f,%d,%.3f,%d,%lld,%s\n", bench::csv_field(platform.name).c_str(),
                      options.collective.c_str(), patterned ? options.pattern.c_str() : "", p, placement.ppn,
                      mapping_text.c_str(), bytes, bench::csv_field(row.label).c_str(), prediction.us,
                      prediction.approximated ? 1 : 0, seconds, placement.nodes, block_bytes,
                      bench::csv_field(row.library_algorithm).c_str());
        } else {
          std::printf(" %*.2f%s", column_width(row.label) - 1, prediction.us, prediction.approximated ? "~" : " ");
        }
        for (std::size_t i = 0; steps.is_open() && i < prediction.steps.size(); ++i) {
          const model::StepPrediction& step = prediction.steps[i];
          steps << p << ',' << bytes << ',' << bench::csv_field(row.label) << ',' << i << ',' << step.us << ','
                << step.slowest_rank << ',' << (step.opaque ? 1 : 0) << '\n';
        }
        if (best < 0 || prediction.us < best) best = prediction.us, best_name = row.label;
      }
      if (!options.csv) std::printf("  %s\n", best_name.c_str());
    }
  }
  if (!options.csv) {
    std::printf("# ~: contains an opaque phase (library collective or shared memory), costed approximately\n");
    if (!natives.empty())
      std::printf("# native:LIBRARY: the library's own decision, costed by a stand-in schedule with its messages "
                  "(--csv names it per size); n/a: not modelled there\n");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Predicts collective times from schedules with the tau-Lop cost model.", "collshim-model"};
  app.require_subcommand(1);
  PredictOptions predict;
  CLI::App* predict_command = app.add_subcommand("predict", "predicted time of every algorithm and the winner, per size");
  predict_command->add_option("--platform", predict.platform, "platform description (YAML)")->required()->check(CLI::ExistingFile);
  predict_command->add_option("--procs", predict.procs, "process counts")->required()->check(CLI::Range(1, 1 << 20));
  CLI::Option* ppn =
      predict_command->add_option("--ppn", predict.ppn, "ranks per node")->check(CLI::Range(1, 1 << 16))->capture_default_str();
  CLI::Option* mapping = predict_command->add_option("--mapping", predict.mapping, "placement of ranks on nodes: sequential, cyclic, irregular or single_node")->capture_default_str();
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
  predict_command->add_option("--collective", predict.collective, "allgather, allgatherv, alltoall, alltoallv or allreduce")
      ->capture_default_str();
  predict_command->add_option("--bytes", predict.sizes,
                              "sizes: the block per rank (allgathers), per pair (alltoall), the vector (allreduce)");
  predict_command->add_option("--algorithms", predict.algorithms, "algorithm specs (default: the tuning candidates)");
  predict_command->add_option("--pattern", predict.pattern, "Alltoallv: which pairs send, as collshim-bench --pattern")
      ->capture_default_str();
  predict_command->add_option("--seed", predict.seed, "seed of the random patterns, as collshim-bench --seed")->capture_default_str();
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
  predict_command->add_flag("--csv", predict.csv, "one CSV row per prediction, with the time the model took");
  predict_command->add_flag("--after-barrier", predict.after_barrier,
                            "time every rank from its exit of a dissemination barrier (MPICH's), as collshim-bench "
                            "under smpi/barrier:mpich measures: the barrier's skew counts");
  predict_command->add_option("--steps", predict.steps_csv,
                              "also write every prediction step by step to this CSV file (per step: the longest "
                              "any rank spent in it, that rank, whether an opaque phase)");
  CLI11_PARSE(app, argc, argv);
  return run_predict(predict);
}
