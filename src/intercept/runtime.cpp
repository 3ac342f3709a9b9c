#include "intercept/runtime.hpp"

#include <spdlog/sinks/stdout_sinks.h>

#include <climits>
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

Runtime::Runtime(const EnvironmentSettings& settings, std::vector<std::string>& errors)
    : selector(settings, errors), log(make_logger(settings.log_level)) {}

Runtime* Runtime::active() { return current_runtime.get(); }

void Runtime::start() {
  EnvironmentSettings settings = read_process_environment();
  if (settings.disabled) return;
  std::vector<std::string> errors = settings.errors;
  auto runtime = std::make_unique<Runtime>(settings, errors);

  // Ranks normally share one environment, but a rank must never run on while another stops: agree.
  int world_rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  int first_rank_with_error = errors.empty() ? INT_MAX : world_rank;
  PMPI_Allreduce(MPI_IN_PLACE, &first_rank_with_error, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (first_rank_with_error == INT_MAX) {
    current_runtime = std::move(runtime);
    current_runtime->log->info("started; {} algorithms registered", algorithms().size());
    return;
  }
  if (world_rank == first_rank_with_error) {
    for (const std::string& error : errors) std::fprintf(stderr, "collshim: error: %s\n", error.c_str());
    std::fprintf(stderr, "collshim: stopping the job at MPI_Init; fix the configuration above or unset it\n");
    std::fflush(stderr);
  }
  runtime.reset();
  PMPI_Finalize();
  std::exit(1);
}

void Runtime::stop() { current_runtime.reset(); }

}  // namespace collshim
