// collshim-config: offline companion of the rule tables.
//   collshim-config check [--library NAME[ VERSION]] FILE...
//                                      validate files; exit 1 on any error (warnings exit 0); say how
//                                      many rules apply under the library
//   collshim-config explain --collective allgather --procs 96 --block-bytes 4KiB --mapping sequential
//                   --nodes 12 [--library NAME[ VERSION]] [--platform FILE [--margin F]] [FILE...]
//                                      show, rule by rule, which one a call matches and why; with a
//                                      platform (--platform, else COLLSHIM_PLATFORM or the site
//                                      default, as a job: which one and why is printed), what the cost
//                                      model decides where no rule does;
//                                      an Alltoallv with --pattern NAME as collshim-bench sends it;
//                                      --json: all of it as one JSON object
// --library: the MPI library the call runs on, as COLLSHIM_MPI_LIBRARY names it (default: the one
// collshim-config runs on).
//   collshim-config list [--collective NAME]
//                                      the collectives and their algorithms, parameters and summaries
//   collshim-config list --json [--spec COLLECTIVE=SPEC]...
//                                      the same as JSON, with where each algorithm (and each --spec)
//                                      is not eligible and what runs instead (the MPI tests read it)
// FILE "default" (or no FILE for explain) is the shipped rule table.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iomanip>
#include <limits>
#include <iostream>
#include <string>
#include <vector>

#include "algorithms/engine/algorithm_spec.hpp"
#include "alltoallv_model_call.hpp"
#include "bench_case.hpp"
#include "decide/decision_policy.hpp"
#include "profile/json_writer.hpp"
#include "selector/environment_impl.hpp"

using namespace collshim;

namespace {

RuleTable load(const std::vector<std::string>& files, std::vector<RuleDiagnostic>& diagnostics) {
  RuleTable table;
  for (const std::string& file : files) {
    if (file == "none") continue;
    if (file == "default") {
      table.add_file_text(default_rules_yaml, "default.yaml (shipped)", diagnostics);
    } else {
      table.add_file(file, diagnostics);
    }
  }
  return table;
}

bool print_diagnostics(const std::vector<RuleDiagnostic>& diagnostics) {
  bool errors = false;
  for (const RuleDiagnostic& d : diagnostics) {
    std::cerr << d.where.text() << ": " << (d.error ? "error: " : "warning: ") << d.message << "\n";
    errors = errors || d.error;
  }
  return errors;
}

// The selector's own decision, with every rule it tries and why it does not match.
void explain(const Selector& selector, const CallFacts& facts) {
  const Decision decision = selector.decide(facts, [&](const Rule& rule, bool matched) {
    std::cout << "  " << rule.where.text() << "  when " << rule.when.text() << "  use " << rule.use.text() << ": "
              << (matched ? "MATCHES" : "skipped, " + rule.when.mismatch(facts, selector.job())) << "\n";
  });
  std::cout << "=> " << decision.requested->text();
  if (decision.choice != decision.requested) {
    std::cout << ", which needs " << decision.substitution << ", so " << decision.choice->text() << " runs instead";
  }
  if (decision.rule_index >= 0) {
    std::cout << " (first matching rule)\n";
  } else {
    std::cout << " (" << decision.reason
              << (decision.choice->algorithm->passes_through ? "; the call passes through to the MPI library" : "")
              << ")\n";
  }
}

// Where no rule decides and a platform is given: the cost model's decision and what a job's key then
// runs, from the shim's own decision policy (one process standing for rank 0 of the call), with
// every candidate's prediction.
void explain_model(const Selector& selector, const model::ModelSettings& settings, const Outcome& outcome) {
  const model::ModelVerdict& verdict = *outcome.costed;
  std::cout << "cost model: platform " << settings.platform_file << " (" << settings.platform.name << "), library "
            << settings.library_name << ", margin " << settings.margin * 100 << "%\n";
  const bool native_costed = verdict.why_native.empty();
  if (native_costed)
    std::cout << "  native (" << verdict.native_algorithm << "): " << std::fixed << std::setprecision(2)
              << verdict.native_us << " us predicted\n";
  else
    std::cout << "  native: not costed: " << verdict.why_native << "\n";
  for (const model::CandidateCost& c : verdict.ranked) {
    std::cout << "  " << c.choice->text() << ": " << std::fixed << std::setprecision(2) << c.us << " us predicted"
              << (c.approximated ? " (approximated)" : "");
    if (native_costed) std::cout << ", " << verdict.native_us / c.us << "x native";
    std::cout << "\n";
  }
  // What a job's key would try: its session's candidates.
  const std::vector<const AlgorithmChoice*>& trial = outcome.key->session.candidates();
  std::cout << "=> " << verdict.pick->text();
  if (!native_costed)
    std::cout << " (the model never leaves native on its own word here)";
  else
    std::cout << (verdict.pick == selector.native_choice()
                      ? " (model, kept native: no candidate beats it by the margin)"
                      : " (model)");
  if (trial.size() > 1) {
    std::cout << "; in a job, timed calls of";
    for (std::size_t i = 0; i < trial.size(); ++i)
      std::cout << (i == 0 ? " " : i + 1 == trial.size() ? " and " : ", ") << trial[i]->text();
    std::cout << " decide first";
  }
  // Where the description may be wrong: what a widened trial adds (model_step.hpp, check_predictions).
  if (!outcome.key->widen_to.empty()) {
    std::cout << "; if their measured / predicted times are more than " << std::fixed << std::setprecision(2)
              << model::widen_ratio_spread << "x apart, also";
    for (std::size_t i = 0; i < outcome.key->widen_to.size(); ++i)
      std::cout << (i == 0 ? " " : ", ") << outcome.key->widen_to[i]->text();
  }
  std::cout << "\n";
}

// A text member that is null when empty.
void optional_member(JsonWriter& json, std::string_view name, const std::string& text) {
  json.key(name);
  if (text.empty())
    json.null();
  else
    json.value(text);
}

// explain --json: the call's facts, each rule tried and why it matched or not, the rules' decision,
// which platform description and why, and where the model decides its verdict, predictions and the
// key's trial plan, as one object.
std::string explain_json(const Selector& selector, const CallFacts& facts, const std::string& mapping,
                         const std::string& pattern, std::uint64_t seed, const Outcome& outcome,
                         const model::ModelSettings* model, const std::optional<std::string>& platform_file,
                         const std::string& platform) {
  using Layout = JsonWriter::Layout;
  JsonWriter json;
  json.begin_object().member("format", "collshim-explain").member("version", 1);
  json.key("call").begin_object(Layout::one_line);
  json.member("collective", collective_name(facts.collective))
      .member("procs", facts.procs)
      .member("block_bytes", facts.block_bytes)
      .member("mapping", mapping)
      .member("nodes", facts.nodes)
      .member("ppn", facts.ppn)
      .member("oversubscribed", facts.oversubscribed)
      .member("commutative", facts.commutative)
      .member("floating_point", facts.order_changes_rounding);
  optional_member(json, "pattern", pattern);
  json.member("seed", seed).member("mpi_library", selector.job().library.text()).end_object();
  json.key("rules").begin_array();
  const Decision decision = selector.decide(facts, [&](const Rule& rule, bool matched) {
    json.begin_object(Layout::one_line)
        .member("where", rule.where.text())
        .member("when", rule.when.text())
        .member("use", rule.use.text())
        .member("matched", matched)
        .key("why_not");
    if (matched)
      json.null();
    else
      json.value(rule.when.mismatch(facts, selector.job()));
    json.end_object();
  });
  json.end_array();
  json.key("decision").begin_object(Layout::one_line);
  json.member("requested", decision.requested->text()).member("runs", decision.choice->text());
  json.key("needs");
  if (decision.choice != decision.requested)
    json.value(decision.substitution);
  else
    json.null();
  json.member("reason", decision.reason).key("rule");
  if (decision.rule_index >= 0)
    json.value(selector.rules().rules()[decision.rule_index].where.text());
  else
    json.null();
  json.member("passes_through", decision.choice->algorithm->passes_through).end_object();
  // Which description a job (or --platform) gives the model, and why: the text's platform: line.
  json.key("platform").begin_object(Layout::one_line);
  optional_member(json, "file", platform_file.value_or(""));
  json.member("origin", platform).end_object();
  json.key("model");
  if (outcome.key == nullptr || model == nullptr) return json.null().end_object().text();
  // The model's step, as a job's first call of the key takes it.
  json.begin_object(Layout::one_line)
      .member("platform_file", model->platform_file)
      .member("platform", model->platform.name)
      .member("library", model->library_name)
      .member("margin", model->margin)
      .key("native");
  if (outcome.costed) {
    const model::ModelVerdict& v = *outcome.costed;
    json.begin_object(Layout::one_line);
    optional_member(json, "algorithm", v.native_algorithm);
    json.member("costed", v.why_native.empty()).key("us").fixed(v.native_us, 3).member("at_least", v.native_at_least);
    optional_member(json, "why_not", v.why_native);
    json.end_object();
  } else {
    json.null();
  }
  json.key("predictions").begin_array(Layout::one_line);
  if (outcome.costed) {
    for (const model::CandidateCost& c : outcome.costed->ranked)
      json.begin_object(Layout::one_line)
          .member("algorithm", c.choice->text())
          .key("us")
          .fixed(c.us, 3)
          .member("approximated", c.approximated)
          .end_object();
  }
  json.end_array().member("pick", outcome.costed ? outcome.costed->pick->text() : std::string("native"));
  json.key("trial").begin_array(Layout::one_line);
  for (const AlgorithmChoice* choice : outcome.key->session.candidates()) json.value(choice->text());
  json.end_array();
  // Confirmation: each trial candidate's prediction (null: none exact), and what a trial whose measured
  // times disagree with them beyond the model's error adds (model_step.hpp, check_predictions).
  json.key("trial_predicted_us").begin_array(Layout::one_line);
  for (const double us : outcome.key->predicted_us) {
    if (us > 0)
      json.fixed(us, 3);
    else
      json.null();
  }
  json.end_array().key("widen").begin_object(Layout::one_line).key("ratio_spread").fixed(model::widen_ratio_spread, 4);
  json.key("candidates").begin_array(Layout::one_line);
  for (const AlgorithmChoice* choice : outcome.key->widen_to) json.value(choice->text());
  json.end_array().key("predicted_us").begin_array(Layout::one_line);
  for (const double us : outcome.key->widen_to_us) json.fixed(us, 3);
  json.end_array().end_object();
  if (outcome.decision)
    json.member("runs", outcome.decision->choice->text()).member("reason", outcome.decision->reason);
  else
    json.key("runs").null().key("reason").null();
  return json.end_object().end_object().text();
}

// The library rules see: --library's, else the one this program runs on (MPI allows asking before
// MPI_Init). nullopt after saying why when --library names none.
std::optional<ProcessLibrary> library_of(const std::string& name) {
  std::string error;
  if (!name.empty() && !mpi_library_from_name(name, error)) {
    std::cerr << "collshim-config: error: --library " << name << ": " << error << "\n";
    return std::nullopt;
  }
  return process_library(name.empty() ? std::nullopt : std::optional(name));
}

// Every algorithm of `info`'s collective: name, summary, parameters and eligibility.
void list_algorithms(const CollectiveInfo& info) {
  std::cout << info.name << " (" << info.mpi_function << "; force with " << info.forcing_variable << "=NAME)\n";
  constexpr int name_width = 24;
  const std::string indent(2 + name_width, ' ');
  for (const Algorithm& algorithm : algorithms()) {
    if (!algorithm.supports(info.collective)) continue;
    std::cout << "  " << std::left << std::setw(name_width) << algorithm.name << algorithm.summary << "\n";
    for (const ParamSpec& param : algorithm.params)
      std::cout << indent << param.name << ": " << param.expected << " (default " << param.default_value << ")\n";
    if (algorithm.eligible || algorithm.needs_commutative)
      std::cout << indent << "needs " << algorithm.eligibility << "; otherwise " << algorithm.fallback
                << " runs, with its default parameters\n";
  }
}

// One choice's facts as the MPI tests need them, as members of the object `json` is in: its canonical
// text (as logged), the process counts up to 128 where it is not eligible, what runs then, and
// whether a non-commutative operation makes it fall back.
void choice_members(JsonWriter& json, const AlgorithmChoice& choice) {
  const Algorithm& algorithm = *choice.algorithm;
  json.member("spec", choice.text()).member("name", algorithm.name);
  json.key("ineligible_procs").begin_array(JsonWriter::Layout::one_line);
  for (int p = 1; algorithm.eligible && p <= 128; ++p) {
    if (!algorithm.eligible(p, choice.params)) json.value(p);
  }
  json.end_array()
      .member("needs_commutative", algorithm.needs_commutative && algorithm.needs_commutative(choice.params))
      .member("fallback", algorithm.fallback)
      .member("eligibility", algorithm.eligibility);
  // Nonblocking and persistent calls: why this choice cannot run in those forms, and what runs then.
  const bool blocking_only = algorithm.blocking_only && !algorithm.blocking_only(choice.params).empty();
  json.member("blocking_only", blocking_only ? std::string(algorithm.blocking_only(choice.params)) : std::string())
      .member("nonblocking_fallback", blocking_only ? algorithm.nonblocking_fallback(choice.params) : std::string());
}

// `list --json`: every collective's algorithms in registry order, each with its default choice's
// facts, parameters and properties, then each of `specs` (COLLECTIVE=SPEC) the same way. Returns
// the exit status.
int list_algorithms_json(const std::vector<std::string>& specs) {
  using Layout = JsonWriter::Layout;
  JsonWriter json;
  json.begin_object().key("collectives").begin_array();
  for (const CollectiveInfo& info : collectives) {
    json.begin_object()
        .member("name", info.name)
        .member("mpi_function", info.mpi_function)
        .member("forcing_variable", info.forcing_variable);
    json.key("algorithms").begin_array();
    for (const Algorithm& algorithm : algorithms()) {
      if (!algorithm.supports(info.collective)) continue;
      json.begin_object(Layout::one_line);
      choice_members(json, *make_choice(algorithm.name, {}, info.collective).choice);
      json.member("summary", algorithm.summary)
          .member("passes_through", algorithm.passes_through)
          .member("node_aware", static_cast<bool>(algorithm.one_rank_per_node_runs_as));
      json.key("params").begin_array(Layout::one_line);
      for (const ParamSpec& param : algorithm.params) {
        json.begin_object(Layout::one_line)
            .member("name", param.name)
            .member("expected", param.expected)
            .member("default", param.default_value);
        // A parameter that names algorithms (hierarchical's inter=): the registry's names it accepts.
        json.key("accepts_algorithms").begin_array(Layout::one_line);
        std::vector<std::string> names;
        for (const Algorithm& named : algorithms()) {
          const std::string name(named.name);
          if (param.accepts(name) && std::find(names.begin(), names.end(), name) == names.end()) {
            names.push_back(name);
            json.value(name);
          }
        }
        json.end_array().end_object();
      }
      json.end_array().end_object();
    }
    json.end_array().end_object();
  }
  json.end_array().key("specs").begin_array();
  for (const std::string& spec : specs) {
    const auto equals = spec.find('=');
    const auto collective = find_collective(spec.substr(0, equals == std::string::npos ? 0 : equals));
    if (!collective) {
      std::cerr << "collshim-config: error: --spec " << spec << ": expected COLLECTIVE=SPEC, COLLECTIVE one of "
                << collective_names() << "\n";
      return 2;
    }
    const SpecParseResult parsed = parse_algorithm_spec(spec.substr(equals + 1), *collective);
    if (!parsed.choice) {
      std::cerr << "collshim-config: error: --spec " << spec << ": " << parsed.error << "\n";
      return 2;
    }
    json.begin_object(Layout::one_line)
        .member("collective", collective_name(*collective))
        .member("given", spec.substr(equals + 1));
    choice_members(json, *parsed.choice);
    json.end_object();
  }
  std::cout << json.end_array().end_object().text();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Validate and explain collshim rule tables"};
  app.require_subcommand(1);
  std::vector<std::string> collective_choices;
  for (const CollectiveInfo& info : collectives) collective_choices.emplace_back(info.name);

  const std::string library_help =
      "the MPI library, as COLLSHIM_MPI_LIBRARY names it: NAME[ VERSION] as rules do (\"ompi 4.1.6\", "
      "smpi-mpich) or a decisions table (ompi-4.1); default: the MPI library collshim-config runs on";
  std::vector<std::string> check_files;
  std::string check_library;
  CLI::App* check = app.add_subcommand("check", "validate rule files (exit 1 on errors)");
  check->add_option("files", check_files, "rule files; 'default' is the shipped table")->required();
  check->add_option("--library", check_library, library_help + ": how many rules apply under it");

  std::vector<std::string> explain_files;
  std::string collective_text, block_bytes_text = "0", mapping_text = "single_node";
  int procs = 1, nodes = 1, ppn = 0;
  bool oversubscribed = false;
  bool non_commutative = false, floating_point = false, reorder = false;
  CLI::App* explain_command = app.add_subcommand("explain", "show which rule a call matches, and why");
  explain_command->add_option("--collective", collective_text, collective_names())
      ->required()
      ->check(CLI::IsMember(collective_choices));
  explain_command->add_option("--procs", procs, "communicator size")->check(CLI::PositiveNumber);
  explain_command->add_option("--block-bytes", block_bytes_text,
                              "average bytes per block, e.g. 4KiB; with --pattern, each listed block's");
  std::string pattern;
  std::uint64_t seed = 1;
  const bench::CaseInfo alltoallv = bench::alltoallv_case();
  explain_command
      ->add_option("--pattern", pattern,
                   "Alltoallv only: every rank sends --block-bytes to each destination of this collshim-bench "
                   "pattern; the call is keyed on the average block, and the model costs the pattern as the shim "
                   "does, rebuilt from every rank's summary of its counts")
      ->check(CLI::IsMember(alltoallv.variants));
  explain_command->add_option("--seed", seed, "seed of the random patterns, as collshim-bench --seed")
      ->capture_default_str();
  explain_command->add_option("--mapping", mapping_text, "single_node, sequential, cyclic or irregular")
      ->check(CLI::IsMember({"single_node", "sequential", "cyclic", "irregular"}));
  explain_command->add_option("--nodes", nodes, "number of nodes")->check(CLI::PositiveNumber);
  explain_command->add_option("--ppn", ppn, "most ranks on a node (default: procs/nodes rounded up)");
  explain_command->add_flag("--oversubscribed", oversubscribed, "more ranks than cores on some node");
  explain_command->add_flag("--non-commutative", non_commutative, "a reduction with a non-commutative operation");
  explain_command->add_flag("--floating-point", floating_point,
                            "a reduction whose rounding depends on order (floating-point sum or product)");
  explain_command->add_flag("--reorder", reorder, "as with COLLSHIM_ALLREDUCE_REORDER=1");
  explain_command->add_option("files", explain_files,
                              "rule files, later ones tried first (default: the shipped table)");
  std::string platform_file, library_name;
  double margin = 0.10;
  explain_command
      ->add_option("--platform", platform_file,
                   "a platform description: show what the cost model decides where no rule does (default: "
                   "the one a job would use, COLLSHIM_PLATFORM or the site default " +
                       site_platform_file() + ")")
      ->check(CLI::ExistingFile);
  explain_command->add_option("--library", library_name,
                              library_help + ": which rules apply, and with --platform whose decisions native runs");
  explain_command->add_option("--margin", margin, "how much faster than native a pick must be predicted")
      ->check(CLI::Range(0.0, 10.0))
      ->capture_default_str();
  std::string tune_text = "confirm";
  explain_command
      ->add_option("--tune", tune_text, "as COLLSHIM_TUNE with --platform: which timed calls a job's key would run")
      ->check(CLI::IsMember({"off", "confirm", "online"}))
      ->capture_default_str();
  bool json = false;
  explain_command->add_flag("--json", json,
                            "print one JSON object (format collshim-explain): the call, every rule tried and why, "
                            "the decision, and with --platform the model's verdict, predictions and trial plan");
  std::string exclude;
  explain_command->add_option("--exclude", exclude,
                              "as COLLSHIM_TUNE_EXCLUDE: leave out the candidates whose spec contains any of these "
                              "';'-separated texts");

  std::string list_collective;
  CLI::App* list = app.add_subcommand("list", "list the collectives and their algorithms, parameters and summaries");
  list->add_option("--collective", list_collective, "only this one: " + collective_names())
      ->check(CLI::IsMember(collective_choices));
  bool list_json = false;
  std::vector<std::string> list_specs;
  list->add_flag("--json", list_json, "as JSON, with each algorithm's eligibility by process count");
  list->add_option("--spec", list_specs, "with --json: also COLLECTIVE=SPEC (e.g. allgather=bruck:radix=3)");

  CLI11_PARSE(app, argc, argv);

  if (list->parsed() && list_json) return list_algorithms_json(list_specs);
  if (list->parsed()) {
    for (const CollectiveInfo& info : collectives) {
      if (list_collective.empty() || info.name == list_collective) list_algorithms(info);
    }
    return 0;
  }

  if (check->parsed()) {
    const std::optional<ProcessLibrary> library = library_of(check_library);
    if (!library) return 2;
    std::vector<RuleDiagnostic> diagnostics;
    const Selector selector(EnvironmentSettings{}, load(check_files, diagnostics), diagnostics, {library->library});
    const bool errors = print_diagnostics(diagnostics);
    std::size_t applying = 0;
    for (std::size_t i = 0; i < selector.rules().rules().size(); ++i) applying += selector.applies(i) ? 1 : 0;
    std::cout << (errors ? "invalid: " : "ok: ") << selector.rules().rules().size() << " rules in "
              << check_files.size() << " file(s); " << applying << " apply under MPI library "
              << library->library.text() << "\n";
    return errors ? 1 : 0;
  }

  const auto block_bytes = parse_byte_size(block_bytes_text);
  if (!block_bytes) {
    std::cerr << "--block-bytes: bad size '" << block_bytes_text << "', expected e.g. 512, 4KiB, 1MiB\n";
    return 2;
  }
  const Collective collective = *find_collective(collective_text);
  if (!pattern.empty() && collective != Collective::alltoallv) {
    std::cerr << "--pattern " << pattern << ": only Alltoallv takes a pattern, not " << collective_text << "\n";
    return 2;
  }
  // The job's node map, as the shim would see it (an Alltoallv's pattern is summarized by node).
  const TopologyOverride topology{nodes, *parse_mapping(mapping_text), std::nullopt};
  std::vector<int> node_of_rank(procs);
  for (int r = 0; r < procs; ++r) node_of_rank[r] = topology.node_of_world_rank(r, procs);
  bench::PatternCall call{{collective, procs, *block_bytes}, *block_bytes};
  if (!pattern.empty()) call = bench::alltoallv_model_call(pattern, procs, *block_bytes, seed, node_of_rank);
  const CallFacts facts{collective,
                        procs,
                        call.average_block_bytes,
                        *parse_mapping(mapping_text),
                        nodes,
                        ppn > 0 ? ppn : (procs + nodes - 1) / nodes,
                        oversubscribed,
                        !non_commutative,
                        floating_point};
  if (explain_files.empty()) explain_files.push_back("default");
  std::vector<RuleDiagnostic> diagnostics;
  // No forcing variables: explain shows what the rule files decide.
  EnvironmentSettings settings;
  settings.allreduce_reorder = reorder;
  if (!library_name.empty()) settings.mpi_library = library_name;
  settings.model_margin = margin;
  // --tune and --exclude read as the shim reads COLLSHIM_TUNE and COLLSHIM_TUNE_EXCLUDE (only the mode
  // and the exclusions are taken: explain shows rules as a job without online tuning sees them), and
  // the platform as a job here would find it (COLLSHIM_PLATFORM, else the site default) unless
  // --platform names one.
  const EnvironmentSettings as_job = read_environment(
      [&](const char* name) -> const char* {
        const std::string variable = name;
        return variable == "COLLSHIM_TUNE"           ? tune_text.c_str()
               : variable == "COLLSHIM_TUNE_EXCLUDE" ? exclude.c_str()
               : variable == "COLLSHIM_PLATFORM"     ? std::getenv(name)
                                                     : nullptr;
      },
      site_platform_file());
  for (const std::string& error : as_job.errors) std::cerr << "collshim-config: error: " << error << "\n";
  if (!as_job.errors.empty()) return 1;
  std::string platform_line;
  if (!platform_file.empty()) {
    settings.platform = platform_file;
    platform_line = platform_file + " (--platform)";
  } else {
    settings.platform = as_job.platform;
    settings.platform_source = as_job.platform_source;
    settings.site_platform = as_job.site_platform;
    platform_line = platform_origin(as_job);
  }
  if (settings.platform) settings.tune = as_job.tune;
  settings.tune_exclude = as_job.tune_exclude;
  const std::optional<ProcessLibrary> library = library_of(library_name);
  if (!library) return 2;
  std::vector<std::string> errors;
  DecisionPolicy policy(settings, load(explain_files, diagnostics), *library, diagnostics, errors);
  if (print_diagnostics(diagnostics)) return 1;
  for (const std::string& error : errors) std::cerr << "collshim-config: error: " << error << "\n";
  if (!errors.empty()) return 1;
  policy.rank_every_candidate();  // to list every candidate's prediction; the pick and plan are the same
  const Selector& selector = policy.selector();

  // The job's decision of this call's first call, through the shim's policy: the model's verdict and
  // the key's plan where the model decides.
  CommDecisions decisions;
  SoloSteps steps(facts.procs);
  const Outcome outcome =
      policy.decide(decisions, {facts, 0, node_of_rank, [&](CollectiveSteps&) { return call.call; }}, steps);
  if (json) {
    std::cout << explain_json(selector, facts, mapping_text, pattern, seed, outcome, policy.model(), settings.platform,
                              platform_line);
    return 0;
  }

  std::cout << "call: " << collective_text;
  if (!pattern.empty())
    std::cout << ", pattern " << pattern << " (seed " << seed << ") of " << *block_bytes << " B blocks";
  std::cout << ", procs " << facts.procs << ", block_bytes " << facts.block_bytes << ", mapping " << mapping_text
            << ", nodes " << facts.nodes << ", ppn " << facts.ppn << (facts.oversubscribed ? ", oversubscribed" : "")
            << "; MPI library " << library->library.text() << "\n";
  explain(selector, facts);
  std::cout << "platform: " << platform_line << "\n";
  if (outcome.costed) {
    explain_model(selector, *policy.model(), outcome);
  } else if (outcome.key != nullptr && policy.model() != nullptr) {
    std::cout << "=> native (only native may run for this call: the cost model has nothing to cost)\n";
  }
  return 0;
}
