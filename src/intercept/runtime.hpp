#pragma once
// The shim's process-wide state between MPI_Init and MPI_Finalize.
#include <spdlog/logger.h>

#include <array>
#include <memory>
#include <mutex>
#include <optional>

#include "decide/decision_policy.hpp"
#include "intercept/comm_cache.hpp"
#include "intercept/device_memory.hpp"
#include "intercept/nonblocking_requests.hpp"
#include "profile/profile.hpp"

namespace collshim {

class Runtime {
 public:
  // Problems of the rules go to `diagnostics`, the cost model's to `model_errors`.
  Runtime(const EnvironmentSettings& settings, std::vector<RuleDiagnostic>& diagnostics,
          std::vector<std::string>& model_errors);

  // Null before MPI_Init, after MPI_Finalize, and when COLLSHIM_DISABLE=1: then every call passes through.
  // Inline: every intercepted call reads it first.
  static Runtime* active() { return active_; }
  // Called right after PMPI_Init*. On a configuration error the job stops here: the first rank with
  // an error prints it, every rank finalizes MPI and exits with status 1. Warnings are printed once.
  static void start();
  // Called right before PMPI_Finalize.
  static void stop();

  // True when every `collective` call passes straight through: nothing can route it to an algorithm
  // (Selector::always_native) and there is no report to count it for.
  bool passes_through(Collective collective) const { return passes_through_[static_cast<int>(collective)]; }
  // The same for the nonblocking and persistent forms, which COLLSHIM_NONBLOCKING=native also sends on.
  bool started_forms_pass(Collective collective) const {
    return passes_through(collective) || (nonblocking_native && !profile);
  }

  // Counts one call for the report (callers check `profile` first): the one place a row's key is made.
  void record_call(int procs, Collective collective, int choice_id, int rule_index, long long block_bytes,
                   CallForm form, long long received_bytes, double seconds) const {
    profile->record(
        {procs, static_cast<int>(collective), choice_id, rule_index, size_bucket(block_bytes), static_cast<int>(form)},
        received_bytes, seconds);
  }

  // Online tuning or the cost model settled a key on a communicator: logged, and kept for
  // COLLSHIM_TUNE_OUT; a key settled again (its pick's second look) replaces what it kept. Any thread.
  void learned(MPI_Comm comm, const CommMapping& mapping, int procs, long long block_bytes, CommTuning::Key& key);

  // The MPI library the job runs on, read once (COLLSHIM_MPI_LIBRARY's where given): rules' `library`
  // conditions are resolved against it when the selector is built, and the model takes its decisions.
  ProcessLibrary library;
  // How every call is decided: forcing variables, rules, with COLLSHIM_PLATFORM the cost model where
  // no rule decides (Selector::model_decides), confirmation or online tuning.
  DecisionPolicy policy;
  DeviceMemory device;
  // Whether calls about to run the shim's algorithms check their buffers for device memory: agreed at
  // MPI_Init, on where some rank's MPI library says it is device-aware or some rank has already
  // loaded a GPU runtime. Elsewhere device buffers could not reach the MPI library either.
  bool device_checks = false;
  ProcessPlacement placement;
  CommCache comms;
  std::shared_ptr<spdlog::logger> log;
  std::unique_ptr<Profile> profile;                 // only with COLLSHIM_REPORT
  std::string report_target;                        // "stderr" or a path; ".json" means JSON
  bool nonblocking_native = false;                  // COLLSHIM_NONBLOCKING=native
  std::unique_ptr<ProgressThread> progress_thread;  // COLLSHIM_PROGRESS_THREAD=1 under MPI_THREAD_MULTIPLE

 private:
  void write_report();
  void write_learned_rules();  // collective over MPI_COMM_WORLD

  std::optional<std::string> tune_out_;  // COLLSHIM_TUNE_OUT
  std::mutex learned_mutex_;             // communicators of several threads may finish tuning at once
  std::vector<LearnedChoice> learned_;
  std::vector<std::string> widened_trials_;  // this rank's widened keys, for the report (ReportHeader)

  static inline Runtime* active_ = nullptr;  // owned by runtime.cpp between start() and stop()
  std::array<bool, collective_count> passes_through_{};
};

}  // namespace collshim
