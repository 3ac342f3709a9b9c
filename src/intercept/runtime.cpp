#include "intercept/runtime.hpp"

#include "profile/report.hpp"
#include "profile/report_exchange.hpp"

#include <spdlog/sinks/stdout_sinks.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <fstream>
#include <cstdio>
#include <cstdlib>

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

}  // namespace

Runtime::Runtime(const EnvironmentSettings& settings, std::vector<RuleDiagnostic>& diagnostics)
    : selector(settings, diagnostics), log(make_logger(settings.log_level)) {
  if (settings.report && !settings.report->empty()) {
    profile = std::make_unique<Profile>();
    report_target = *settings.report;
  }
  for (int c = 0; c < collective_count; ++c)
    passes_through_[c] = selector.always_native(static_cast<Collective>(c)) && !profile;
}

void Runtime::write_report() {
  CommState* world = comms.state(MPI_COMM_WORLD, placement);
  if (world == nullptr) return;
  const auto per_rank = gather_profile_rows(profile->rows(), world->context.comm());
  if (world->context.rank() != 0) return;

  ReportHeader header;
  header.ranks = world->context.size();
  header.nodes = world->mapping.nodes;
  header.ppn = world->mapping.ppn;
  header.mapping = std::string(mapping_name(world->mapping.mapping));
  header.oversubscribed = world->mapping.oversubscribed;
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  PMPI_Get_library_version(version, &length);
  (void)length;
  header.mpi_library = version;  // the returned length may count the terminating NUL
  while (!header.mpi_library.empty() && std::isspace(static_cast<unsigned char>(header.mpi_library.back())))
    header.mpi_library.pop_back();
  header.mpi_library = header.mpi_library.substr(0, header.mpi_library.find('\n'));
  header.rule_files = selector.rule_files();
  ReportNames names;
  for (const AlgorithmChoice& choice : selector.choices()) names.choices.push_back(choice.text());
  for (const Rule& rule : selector.rules().rules()) names.rules.push_back(rule.where.text());

  const bool json = report_target.size() >= 5 && report_target.ends_with(".json");
  const std::vector<MergedRow> rows = merge_rows(per_rank);
  const std::string text = json ? format_json_report(header, rows, names) : format_text_report(header, rows, names);
  if (report_target == "stderr") {
    std::fputs(text.c_str(), stderr);
    std::fflush(stderr);
    return;
  }
  std::ofstream out(report_target);
  out << text;
  if (!out) std::fprintf(stderr, "collshim: warning: COLLSHIM_REPORT=%s: cannot write the report there\n", report_target.c_str());
}

void Runtime::start() {
  EnvironmentSettings settings = read_process_environment();
  if (settings.disabled) return;
  std::vector<RuleDiagnostic> diagnostics;
  for (const std::string& error : settings.errors) diagnostics.push_back({{error, 0, 0}, {}, true});
  auto runtime = std::make_unique<Runtime>(settings, diagnostics);
  const bool has_error =
      std::any_of(diagnostics.begin(), diagnostics.end(), [](const RuleDiagnostic& d) { return d.error; });

  // Ranks normally share one environment, but a rank must never run on while another stops: agree.
  int world_rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  int first_rank_with_error = has_error ? world_rank : INT_MAX;
  PMPI_Allreduce(MPI_IN_PLACE, &first_rank_with_error, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
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
    current_runtime = std::move(runtime);
    active_ = current_runtime.get();
    current_runtime->log->info("started; {} algorithms registered, {} rules", algorithms().size(),
                               current_runtime->selector.rules().rules().size());
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
  if (current_runtime->profile) current_runtime->write_report();
  // States of communicators the application never freed; a leak check reads this line.
  current_runtime->log->info("communicator states live at MPI_Finalize: {}", CommCache::live_states());
  active_ = nullptr;
  current_runtime.reset();
}

}  // namespace collshim
