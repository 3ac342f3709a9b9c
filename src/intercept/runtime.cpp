#include "intercept/runtime.hpp"

#include "intercept/entry_point_table.hpp"
#include "profile/report.hpp"
#include "profile/report_exchange.hpp"

#include <spdlog/sinks/stdout_sinks.h>

#include <spdlog/fmt/chrono.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <climits>
#include <fstream>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iterator>

namespace collshim {
namespace {

std::unique_ptr<Runtime> current_runtime;

spdlog::level::level_enum to_spdlog(LogLevel level) {
  switch (level) {
    case LogLevel::off: return spdlog::level::off;
    case LogLevel::warn: return spdlog::level::warn;
    case LogLevel::info: return spdlog::level::info;
    case LogLevel::debug: return spdlog::level::debug;
    case LogLevel::trace: return spdlog::level::trace;
  }
  return spdlog::level::off;
}

std::shared_ptr<spdlog::logger> make_logger(LogLevel level) {
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // Not registered in spdlog's global registry, so an application using spdlog cannot collide with it.
  auto logger = std::make_shared<spdlog::logger>("collshim", std::make_shared<spdlog::sinks::stderr_sink_mt>());
  logger->set_pattern("[collshim %l rank " + std::to_string(rank) + "] %v");
  logger->set_level(to_spdlog(level));
  logger->flush_on(spdlog::level::trace);
  return logger;
}

// The first line of the MPI library's version string.
std::string mpi_library_name(const ProcessLibrary& library) {
  std::string name = library.first_line();
  while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.pop_back();
  return name;
}

}  // namespace

Runtime::Runtime(const EnvironmentSettings& settings, std::vector<RuleDiagnostic>& diagnostics,
                 std::vector<std::string>& model_errors)
    : library(process_library(settings.mpi_library)),
      policy(settings, library, diagnostics, model_errors),
      log(make_logger(settings.log_level)),
      tune_out_(settings.tune_out) {
  policy.set_log(log);
  if (settings.report && !settings.report->empty()) {
    profile = std::make_unique<Profile>(static_cast<int>(StartedFunction::count));
    report_target = *settings.report;
  }
  const Selector& selector = policy.selector();
  for (int c = 0; c < collective_count; ++c)
    passes_through_[c] = selector.always_native(static_cast<Collective>(c)) && !profile;
}

void Runtime::write_report() {
  CommState* world = comms.state(MPI_COMM_WORLD, placement);
  if (world == nullptr) return;
  const auto per_rank = gather_records(profile->rows(), world->context.comm());
  const auto unhandled_per_rank = gather_records(profile->unhandled(), world->context.comm());
  if (world->context.rank() != 0) return;

  ReportHeader header;
  header.ranks = world->context.size();
  header.nodes = world->mapping.nodes;
  header.ppn = world->mapping.ppn;
  header.mapping = std::string(mapping_name(world->mapping.mapping));
  header.oversubscribed = world->mapping.oversubscribed;
  header.mpi_library = mpi_library_name(library);
  const Selector& selector = policy.selector();
  header.rule_files = selector.rule_files();
  {
    const std::lock_guard lock(learned_mutex_);
    header.widened_trials = widened_trials_;
  }
  ReportNames names;
  for (const AlgorithmChoice& choice : selector.choices()) names.choices.push_back(choice.text());
  for (const Rule& rule : selector.rules().rules()) names.rules.push_back(rule.where.text());

  const bool json = report_target.size() >= 5 && report_target.ends_with(".json");
  const std::vector<MergedRow> rows = merge_rows(per_rank);
  const std::vector<MergedUnhandled> unhandled =
      merge_unhandled(unhandled_per_rank, {std::begin(started_function_names), std::end(started_function_names)});
  const std::string text =
      json ? format_json_report(header, rows, names, unhandled) : format_text_report(header, rows, names, unhandled);
  if (report_target == "stderr") {
    std::fputs(text.c_str(), stderr);
    std::fflush(stderr);
    return;
  }
  std::ofstream out(report_target);
  out << text;
  if (!out)
    std::fprintf(stderr, "collshim: warning: COLLSHIM_REPORT=%s: cannot write the report there\n",
                 report_target.c_str());
}

void Runtime::learned(MPI_Comm comm, const CommMapping& mapping, int procs, long long block_bytes,
                      CommTuning::Key& key) {
  const TuningSession& session = key.session;
  char name[MPI_MAX_OBJECT_NAME] = {};
  int length = 0;
  PMPI_Comm_get_name(comm, name, &length);
  if (key.source == KeySource::online || session.trial_calls() > 0) {
    log->info(
        "{}{}: {} on {} p={} mapping={} nodes={} block {}: {} after {} trial calls ({} dropped early); "
        "best {:.1f} us, native {:.1f} us{}{}",
        key.source == KeySource::online ? "tuned online" : "model's pick timed against native",
        session.rechecked() ? ", second look once warm" : "", mpi_function_name(key.collective),
        length > 0 ? name : "(unnamed)", procs, mapping_name(mapping.mapping), mapping.nodes,
        bucket_text(size_bucket(block_bytes)), session.best()->text(), session.trial_calls(), session.dropped(),
        session.best_seconds() * 1e6, session.first_candidate_seconds() * 1e6,
        session.done() ? "" : "; timed against native again after its next calls",
        key.widened.empty() ? "" : "; the trial was widened: " + key.widened);
    log->debug("{}: {} block {}: trial calls measured {}", mpi_function_name(key.collective),
               length > 0 ? name : "(unnamed)", bucket_text(size_bucket(block_bytes)), measured_text(session));
  }
  LearnedChoice choice{static_cast<int>(key.collective),
                       procs,
                       mapping.nodes,
                       mapping.ppn,
                       static_cast<int>(mapping.mapping),
                       size_bucket(block_bytes),
                       key.properties,
                       session.best()->id,
                       session.trial_calls(),
                       session.best_seconds(),
                       session.first_candidate_seconds(),
                       static_cast<int>(key.source),
                       key.evidence.pick_us,
                       key.evidence.native_us,
                       key.evidence.native_at_least ? 1 : 0,
                       key.evidence.pick != nullptr ? key.evidence.pick->id : -1};
  if (!key.widened.empty()) {
    choice.widened_candidates = static_cast<int>(key.widen_to.size());
    choice.widened_spread = key.widened_spread;
  }
  const std::lock_guard lock(learned_mutex_);
  if (key.learned_index < 0 && !key.widened.empty())
    widened_trials_.push_back(fmt::format("{} on {} p={} block {}: {}; kept {}", mpi_function_name(key.collective),
                                          length > 0 ? name : "(unnamed)", procs, bucket_text(size_bucket(block_bytes)),
                                          key.widened, session.best()->text()));
  if (key.learned_index < 0) {
    key.learned_index = static_cast<int>(learned_.size());
    learned_.push_back(choice);
  } else {
    learned_[static_cast<std::size_t>(key.learned_index)] = choice;
  }
}

void Runtime::write_learned_rules() {
  CommState* world = comms.state(MPI_COMM_WORLD, placement);
  if (world == nullptr) return;
  std::vector<LearnedChoice> mine;
  {
    const std::lock_guard lock(learned_mutex_);
    mine = learned_;
  }
  const auto per_rank = gather_records(mine, world->context.comm());
  if (world->context.rank() != 0) return;
  std::vector<LearnedChoice> all;
  for (const auto& rows : per_rank) all.insert(all.end(), rows.begin(), rows.end());
  const Selector& selector = policy.selector();
  std::vector<std::string> choice_text;
  for (const AlgorithmChoice& choice : selector.choices()) choice_text.push_back(choice.text());
  const LearnedRulesHeader header{mpi_library_name(library), library.library,
                                  fmt::format("{:%Y-%m-%d}", fmt::localtime(std::time(nullptr))), selector.rule_files(),
                                  policy.model() ? policy.model()->platform_file : ""};
  const std::string learned_yaml = learned_rules_yaml(all, choice_text, header);
  std::string existing;
  if (std::ifstream in(*tune_out_); in) existing.assign(std::istreambuf_iterator<char>(in), {});
  std::string merged = merge_rule_files(existing, learned_yaml);
  std::string target = *tune_out_;
  if (merged.empty()) {
    // Not a rule file this can merge into: keep it, and write what was learned next to it.
    target += ".learned.yaml";
    merged = learned_yaml;
    std::fprintf(stderr,
                 "collshim: warning: COLLSHIM_TUNE_OUT=%s has no top-level 'rules:' line to merge into; "
                 "the learned rules go to %s\n",
                 tune_out_->c_str(), target.c_str());
  }
  std::ofstream out(target);
  out << merged;
  if (!out)
    std::fprintf(stderr, "collshim: warning: COLLSHIM_TUNE_OUT=%s: cannot write the learned rules there\n",
                 target.c_str());
}

void Runtime::start() {
  EnvironmentSettings settings = read_process_environment();
  if (settings.disabled) return;
  std::vector<RuleDiagnostic> diagnostics;
  for (const std::string& error : settings.errors) diagnostics.push_back({{error, 0, 0}, {}, true});
  for (const std::string& warning : settings.warnings) diagnostics.push_back({{warning, 0, 0}, {}, false});
  std::vector<std::string> model_errors;
  auto runtime = std::make_unique<Runtime>(settings, diagnostics, model_errors);
  // The model's problems (a bad platform file) stop the job as the rules' do.
  for (const std::string& error : model_errors) diagnostics.push_back({{error, 0, 0}, {}, true});
  const bool has_error =
      std::any_of(diagnostics.begin(), diagnostics.end(), [](const RuleDiagnostic& d) { return d.error; });

  // Ranks normally share one environment, but a rank must never run on while another stops: agree.
  int world_rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  // One agreement for both: the first rank with an error, and (0 where any) whether some rank's
  // calls may carry device buffers.
  const bool device_possible = runtime->device.runtime_loaded() || mpi_library_device_aware();
  std::array<int, 2> agreed{has_error ? world_rank : INT_MAX, device_possible ? 0 : 1};
  PMPI_Allreduce(MPI_IN_PLACE, agreed.data(), 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  const int first_rank_with_error = agreed[0];
  runtime->device_checks = agreed[1] == 0;
  const int reporting_rank = first_rank_with_error == INT_MAX ? 0 : first_rank_with_error;
  if (world_rank == reporting_rank) {
    for (const RuleDiagnostic& d : diagnostics) {
      const std::string text = d.message.empty() ? d.where.text() : d.text();
      std::fprintf(stderr, "collshim: %s: %s\n", d.error ? "error" : "warning", text.c_str());
    }
    std::fflush(stderr);
  }
  if (first_rank_with_error == INT_MAX) {
    runtime->placement = detect_process_placement(settings.topology);
    runtime->nonblocking_native = settings.nonblocking_native;
    void* tag_ub = nullptr;
    int found = 0;
    PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &found);
    if (found) NonblockingLane::tag_slots = std::max(0, *static_cast<int*>(tag_ub) / tags_per_schedule - 1);
    current_runtime = std::move(runtime);
    active_ = current_runtime.get();
    const Selector& selector = current_runtime->policy.selector();
    std::size_t applying = 0;
    for (std::size_t i = 0; i < selector.rules().rules().size(); ++i) applying += selector.applies(i) ? 1 : 0;
    current_runtime->log->info(
        "started; {} algorithms registered, {} rules, {} of which apply under MPI library {} ({})", algorithms().size(),
        selector.rules().rules().size(), applying, selector.job().library.text(),
        settings.mpi_library ? "COLLSHIM_MPI_LIBRARY" : selector.job().library.description);
    if (const model::ModelSettings* model = current_runtime->policy.model()) {
      const char* mode = selector.tune_mode() == TuneMode::online ? "online over its best few"
                         : selector.confirms()                    ? "confirmed by timed calls"
                                                                  : "its pick alone";
      current_runtime->log->info(
          "cost model decides where no rule does ({}): platform {} ({}), library {}, "
          "margin {:.0f}%",
          mode, model->platform_file, model->platform.name, model->library_name, model->margin * 100);
    }
    // MPI_COMM_WORLD's state now, while every rank is here: a nonblocking call can only use a state
    // that exists (making one is collective), and many programs use only MPI_COMM_WORLD.
    if (!settings.nonblocking_native) current_runtime->comms.state(MPI_COMM_WORLD, current_runtime->placement);
    int level = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&level);
    OperationTable::set_waits_block(level != MPI_THREAD_MULTIPLE);
    if (settings.progress_thread && !settings.nonblocking_native) {
      if (level == MPI_THREAD_MULTIPLE) {
        current_runtime->progress_thread = std::make_unique<ProgressThread>();
        current_runtime->log->info("a progress thread advances nonblocking collectives (COLLSHIM_PROGRESS_THREAD=1)");
      } else if (world_rank == 0) {
        std::fprintf(stderr,
                     "collshim: warning: COLLSHIM_PROGRESS_THREAD=1 needs MPI_THREAD_MULTIPLE; this job initialized "
                     "MPI with a lower thread level, so no progress thread runs\n");
      }
    }
    if (current_runtime->device_checks) {
      const std::string found = current_runtime->device.runtimes();
      current_runtime->log->info(
          "GPU buffers possible ({}): a call the shim would run with its own algorithm "
          "first agrees whether any rank's buffers are device memory, which passes through",
          found.empty() ? "the MPI library is device-aware" : found + " loaded");
    }
    return;
  }
  if (world_rank == first_rank_with_error) {
    std::fprintf(stderr, "collshim: stopping the job at MPI_Init; fix the configuration above or unset it\n");
    std::fflush(stderr);
  }
  runtime.reset();
  PMPI_Finalize();
  std::exit(1);
}

void Runtime::stop() {
  if (!current_runtime) return;
  current_runtime->progress_thread.reset();  // joined before anything else finishes
  if (current_runtime->profile) current_runtime->write_report();
  if (current_runtime->tune_out_) current_runtime->write_learned_rules();
  current_runtime->comms.release_predefined_states();
  // States of communicators the application never freed; a leak check reads this line.
  current_runtime->log->info("communicator states live at MPI_Finalize: {}", CommCache::live_states());
  active_ = nullptr;
  current_runtime.reset();
}

}  // namespace collshim
