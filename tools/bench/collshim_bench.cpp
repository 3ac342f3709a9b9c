// collshim-bench: times one collective natively and with collshim's algorithms, side by side in one
// run, over a sweep of block sizes, the way the OSU micro-benchmarks do (warm-up calls,
// then timed calls each preceded by a barrier; time per call averaged over the calls, then min/avg/max
// over ranks). The CSV form adds, per call, the time of the slowest rank, and its median and
// interquartile range over the timed calls: the input of `collshim-tune rules` (docs/rules-and-tuning.md).
//
// What is timed for each collective is a case (bench_case.hpp, one file per collective). Native is
// the PMPI_ function, so a preloaded shim cannot intercept it. The algorithms run in this
// process through the shim's own executor on a CommContext over a duplicate of MPI_COMM_WORLD, exactly
// the code path libcollshim.so takes, so no environment variables or restarts are needed. Timed calls
// interleave the implementations (call i of every implementation before call i+1 of any), so a noisy
// machine's drift hits all of them alike and the ratios stay meaningful.
//
// Every algorithm's result is compared bit for bit with native's once per size; a mismatch is an
// error (exit status 1), since the time of a wrong answer means nothing.
//
// Under SimGrid SMPI (built with COLLSHIM_MPI=smpi, run by smpirun) native is SMPI's own collective as
// chosen by --cfg=smpi/coll-selector (ompi and mpich mimic Open MPI's and MPICH's decisions) and is
// labelled with the selector, e.g. smpi_ompi. Every simulated rank lives in the one simulator process,
// so sizes whose buffers summed over all ranks exceed --verify-limit run on SMPI_SHARED_MALLOC buffers
// (one physical copy for all ranks): they are timed but their results cannot be verified.
//
// --overlap times the nonblocking form instead, as IMB-NBC defines overlap: per implementation and
// size, t_pure (start, then wait), then t_ovrlp (start, t_cpu = t_pure of CPU work with a test every
// --test-every microseconds of it, then wait), and overlap = (t_pure + t_cpu - t_ovrlp) / t_cpu,
// clamped to [0, 1]. Native is the library's MPI_I<collective>; an algorithm is its schedule run
// without blocking as libcollshim.so runs a nonblocking call (NonblockingRun). The blocking call's
// time and, for the algorithms, a persistent start's (the schedule and layout made once) are timed
// alongside, interleaved the same way.
#include <mpi.h>
#ifdef COLLSHIM_SMPI
#include <simgrid/host.h>
#include <xbt/config.hpp>
#endif

#include <CLI/CLI.hpp>
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "algorithms/engine/algorithm_spec.hpp"
#include "algorithms/engine/comm_context.hpp"
#include "algorithms/engine/registry.hpp"
#include "algorithms/engine/schedule_engine.hpp"
#include "decide/decision_policy.hpp"
#include "decide/shadow_steps.hpp"
#include "profile/profile.hpp"
#include "selector/mapping_detection.hpp"
#include "bench_case.hpp"
#include "calibration.hpp"
#include "calibration_output.hpp"

namespace {

using collshim::AlgorithmChoice;
using collshim::Collective;

struct Options {
  std::string collective = "allgather";
  std::vector<std::string> algorithms;
  std::int64_t min_bytes = 1;
  std::int64_t max_bytes = 1 << 20;
  int iterations = 100;
  int warmup = 10;
  std::string distribution, pattern;  // the case's variant (--distribution: allgatherv, --pattern: alltoallv)
  bool csv = false;
  std::string native_label;   // empty: "native", or under SMPI "smpi_<coll-selector>"
  std::string platform;       // CSV column `platform`: what the user calls the machine
  std::string rules;          // --rules: rule files (COLLSHIM_CONFIG syntax) the "collshim" row decides by
  std::string calibrate;      // --calibrate: write a cost-model platform description here instead
  bool overlap = false;       // --overlap: time the nonblocking form (IMB-NBC's overlap)
  double test_every_us = 10;  // --test-every: microseconds of CPU work between two tests (0: none)
  collshim::bench::CaseOptions case_options;
};

// Splits the --algorithms values into specs. Specs contain commas themselves ("bruck:radix=4,x=1"),
// so a comma-separated item with '=' but no ':' continues the previous spec's parameters.
std::vector<std::string> split_specs(const std::vector<std::string>& values) {
  std::vector<std::string> specs;
  for (const std::string& value : values) {
    std::stringstream items(value);
    std::string item;
    while (std::getline(items, item, ',')) {
      if (item.empty()) continue;
      const bool continues = item.find('=') != std::string::npos && item.find(':') == std::string::npos;
      if (continues && !specs.empty())
        specs.back() += "," + item;
      else
        specs.push_back(item);
    }
  }
  return specs;
}

// The label of the MPI library's own collective: --native-label, else "native", or under SMPI the
// collective selector SMPI runs (smpi_ompi, smpi_mpich, smpi_default, ...).
std::string native_label(const Options& options) {
  if (!options.native_label.empty()) return options.native_label;
#ifdef COLLSHIM_SMPI
  return "smpi_" + simgrid::config::get_value<std::string>("smpi/coll-selector");
#else
  return "native";
#endif
}

struct Implementation {
  std::string label;
  const AlgorithmChoice* choice = nullptr;  // null: native
  double seconds = 0;                       // this rank's total over the timed calls
  std::vector<double> call_seconds;         // this rank's time of each timed call
  bool mismatch = false;                    // on any rank, this size
  bool decided = false;                     // "collshim": `choice` is the rule table's decision per size
  std::string decision;                     // "collshim": what it ran at this size (CSV column `decision`)
  // "collshim" where the cost model or online tuning settled the size (0 and "" elsewhere): the
  // report's rule label, the trial calls run first and the slowest rank's total time in them, the
  // model's pick and its predictions.
  std::string source;
  int trial_calls = 0;
  double trial_us = 0;
  std::string model_pick;
  double predicted_us = 0, predicted_native_us = 0;
  std::string trials;  // what each candidate measured in the trial calls, for the size's comment line
};

// COLLSHIM_TOPOLOGY, as the shim reads it; a bad value stops the run.
std::optional<collshim::TopologyOverride> topology_override() {
  const char* text = std::getenv("COLLSHIM_TOPOLOGY");
  if (text == nullptr || *text == '\0') return std::nullopt;
  auto parsed = collshim::parse_topology_override(text);
  if (!parsed.topology) {
    std::fprintf(stderr, "collshim-bench: error: COLLSHIM_TOPOLOGY=%s: %s\n", text, parsed.error.c_str());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return parsed.topology;
}

// The run's date (UTC), for the evidence comments of tuned rules and calibrated descriptions.
std::string today() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[16];
  std::strftime(text, sizeof text, "%Y-%m-%d", &utc);
  return text;
}

// The first line of MPI_Get_library_version, for CSV rows and calibrated descriptions.
std::string library_version_line() {
  char library[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(library, &length);
  // Open MPI counts the terminating NUL in `length`; a NUL inside the string would cut the CSV field.
  return std::string(library,
                     std::find_if(library, library + length, [](char ch) { return ch == '\n' || ch == '\0'; }));
}

// Which two nodes --calibrate measures, for its output and the description's comments: their place
// in the job's node order and their host names (MPI_Get_processor_name of their first rank), and how
// B was chosen. Collective over `comm`.
std::string calibrated_nodes_text(MPI_Comm comm, const std::vector<int>& node_of_rank,
                                  const collshim::bench::CalibrationRanks& ranks,
                                  const collshim::bench::FarNodeChoice& far) {
  int p = 0;
  MPI_Comm_size(comm, &p);
  std::vector<char> mine(MPI_MAX_PROCESSOR_NAME, '\0'), names(static_cast<std::size_t>(p) * MPI_MAX_PROCESSOR_NAME);
  int length = 0;
  MPI_Get_processor_name(mine.data(), &length);
  MPI_Allgather(mine.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, comm);
  std::vector<int> node_ids(node_of_rank);
  std::sort(node_ids.begin(), node_ids.end());
  node_ids.erase(std::unique(node_ids.begin(), node_ids.end()), node_ids.end());
  const auto node_text = [&](int rank) {
    const auto place = std::lower_bound(node_ids.begin(), node_ids.end(), node_of_rank[rank]) - node_ids.begin();
    return "node " + std::to_string(place) + " (" +
           std::string(names.data() + static_cast<std::ptrdiff_t>(rank) * MPI_MAX_PROCESSOR_NAME) + ")";
  };
  std::string text = "between " + node_text(ranks.first_node.front()) + " and " + node_text(ranks.second_node.front()) +
                     " of " + std::to_string(node_ids.size()) + " nodes: ";
  if (far.probe_us.empty())
    return text +
           (ranks.second_candidates.size() == 1 ? "the fullest of the other nodes" : "the last node of the allocation");
  const double nearest = *std::min_element(far.probe_us.begin(), far.probe_us.end());
  char line[200];
  std::snprintf(line, sizeof line,
                "the farthest of %zu candidate nodes by a 1 B ping-pong from the first (%.2f us; the nearest %.2f us)",
                far.probe_us.size(), far.probe_us[far.chosen], nearest);
  return text + line;
}

// A duplicate of a communicator, freed with this object (before MPI_Finalize).
class DuplicateComm {
 public:
  explicit DuplicateComm(MPI_Comm comm) { MPI_Comm_dup(comm, &comm_); }
  ~DuplicateComm() { MPI_Comm_free(&comm_); }
  DuplicateComm(const DuplicateComm&) = delete;
  DuplicateComm& operator=(const DuplicateComm&) = delete;
  MPI_Comm get() const { return comm_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

// One implementation's nonblocking call, as libcollshim.so runs it (CollectiveOperation in
// src/intercept/entry_points.cpp, without the decision): native is the library's MPI_I<collective>;
// an algorithm takes the call's layout and the choice's schedule (a copy where its state may remake
// it), and runs it with the engine's ScheduleRun on `lane` (the shim's second duplicate, where
// nonblocking runs keep off the blocking calls' traffic) with storage of its own, advanced by
// progress(). start() does all of that, as each MPI_I<collective> does; restart() only starts the
// run made last again, as MPI_Start of a persistent operation does.
class NonblockingRun {
 public:
  NonblockingRun(collshim::bench::BenchCase& bench_case, const AlgorithmChoice* choice, collshim::CommContext& context,
                 MPI_Comm lane)
      : case_(bench_case), choice_(choice), context_(context), lane_(lane) {}
  NonblockingRun(const NonblockingRun&) = delete;
  NonblockingRun& operator=(const NonblockingRun&) = delete;

  int start() {
    if (choice_ == nullptr) return case_.start_native(&request_);
    const int rc = make_run(own_schedule_, run_, collshim::tags_per_schedule);
    current_ = run_.get();
    return rc != MPI_SUCCESS ? rc : begin();
  }
  // As the shim's persistent operation: its run made at the first start (for these buffers, on tags
  // of its own) and planned, then only started again.
  int restart() {
    if (choice_ == nullptr) return start();
    if (persistent_run_ == nullptr) {
      if (const int rc = make_run(persistent_schedule_, persistent_run_, 2 * collshim::tags_per_schedule);
          rc != MPI_SUCCESS)
        return rc;
      persistent_run_->keep_plan();
    } else if (const int rc = case_.call_layout(context_, layout_storage_, layout_); rc != MPI_SUCCESS) {
      return rc;  // (made again at every start, as the shim does: an in-place call stages its data then)
    }
    current_ = persistent_run_.get();
    return begin();
  }
  // Advances the run once (native: MPI_Test); true once complete, with its error in `rc`.
  bool test(int& rc) {
    if (choice_ != nullptr) {
      if (!current_->progress()) return false;
      rc = current_->error();
      return true;
    }
    int flag = 0;
    rc = PMPI_Test(&request_, &flag, MPI_STATUS_IGNORE);
    return rc != MPI_SUCCESS || flag != 0;
  }
  // As the shim's waits: between passes, blocks in the library on what the run waits for
  // (OperationTable::wait_for_any).
  int wait() {
    if (choice_ == nullptr) return PMPI_Wait(&request_, MPI_STATUS_IGNORE);
    int rc = MPI_SUCCESS;
    while (!test(rc)) {
      pending_.clear();
      current_->blocked_on(pending_);
      MPI_Status status;
      int ignored = MPI_SUCCESS;
      collshim::wait_for_any({}, pending_, waited_, &status, ignored);
    }
    return rc;
  }

 private:
  // The call's layout and the choice's schedule (a copy in `own` where its state may remake it), in
  // a new run on `lane` from `tag_base`.
  int make_run(collshim::Schedule& own, std::unique_ptr<collshim::ScheduleRun>& run, int tag_base) {
    collshim::AlgorithmState* algorithm = nullptr;
    int rc = context_.state(*choice_, algorithm);
    if (rc == MPI_SUCCESS) rc = case_.call_layout(context_, layout_storage_, layout_);
    if (rc != MPI_SUCCESS) return rc;
    const collshim::Schedule* schedule = &algorithm->schedule_for(layout_);
    if (!algorithm->keeps_schedules()) {
      own = *schedule;
      schedule = &own;
    }
    run.reset();  // the previous run is complete
    run = std::make_unique<collshim::ScheduleRun>(*schedule, layout_, engine_, lane_, tag_base);
    return MPI_SUCCESS;
  }

  // As the shim's start (OperationTable::start): what can run at once does, the first messages.
  int begin() {
    current_->start();
    current_->progress();
    return MPI_SUCCESS;
  }

  collshim::bench::BenchCase& case_;
  const AlgorithmChoice* choice_;  // null: native
  collshim::CommContext& context_;
  MPI_Comm lane_;
  MPI_Request request_ = MPI_REQUEST_NULL;
  std::vector<collshim::PendingRequest> pending_;
  std::vector<MPI_Request> waited_;
  collshim::LayoutStorage layout_storage_;
  collshim::CallLayout layout_;
  collshim::EngineStorage engine_;
  collshim::Schedule own_schedule_;
  collshim::Schedule persistent_schedule_;
  std::unique_ptr<collshim::ScheduleRun> run_;             // the nonblocking call's
  std::unique_ptr<collshim::ScheduleRun> persistent_run_;  // the persistent operation's
  collshim::ScheduleRun* current_ = nullptr;               // the one running
};

// `seconds` of CPU work with `test` called after every `every` seconds of it (0: never), as
// IMB-NBC's overlap measurement computes. The tests' own time is not counted as work, so the work is
// the same whatever they cost. Under SMPI the work is simulated (smpi_execute_flops), not spun.
template <typename Test>
void compute(double seconds, double every, Test test) {
  double done = 0;
  while (done < seconds) {
    const double chunk = every > 0 ? std::min(every, seconds - done) : seconds - done;
#ifdef COLLSHIM_SMPI
    // Flops at the simulated host's speed: smpi_execute() is ignored under smpi/simulate-computation:no.
    smpi_execute_flops(chunk * sg_host_get_speed(sg_host_self()));
#else
    const double begin = MPI_Wtime();
    while (MPI_Wtime() - begin < chunk) {
    }
#endif
    done += chunk;
    if (every > 0) test();
  }
}

class Bench {
 public:
  Bench(const Options& options, const collshim::bench::CaseInfo& info, std::vector<AlgorithmChoice> choices,
        std::vector<std::string> notes, const collshim::DecisionPolicy* policy, MPI_Comm comm)
      : options_(options),
        policy_(policy),
        info_(info),
        collective_(info.collective),
        choices_(std::move(choices)),
        notes_(std::move(notes)),
        comm_(comm) {
    MPI_Comm_size(comm_, &p_);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm shadow = MPI_COMM_NULL;
    MPI_Comm_dup(comm_, &shadow);
    context_ = std::make_unique<collshim::CommContext>(shadow);
    // Node-aware algorithms see the placement the shim would: nodes from MPI (under SMPI, the
    // simulated hosts), or COLLSHIM_TOPOLOGY's fictitious one.
    mapping_ = collshim::detect_comm_mapping(shadow, collshim::detect_process_placement(topology_override()));
    context_->set_node_of_rank(mapping_.node_of_rank);
    implementations_.push_back(Implementation{.label = native_label(options_)});
    for (const AlgorithmChoice& choice : choices_)
      implementations_.push_back(Implementation{.label = choice.text(), .choice = &choice});
    if (policy_ != nullptr) implementations_.push_back(Implementation{.label = "collshim", .decided = true});
    case_ = info_.make(comm_, options_.case_options);
    if (options_.overlap) {
      lane_ = std::make_unique<DuplicateComm>(comm_);
      for (const Implementation& impl : implementations_)
        runs_.push_back(std::make_unique<NonblockingRun>(*case_, impl.choice, *context_, lane_->get()));
    }
  }

  // Returns the number of mismatches.
  int run() {
    print_header();
    int salt = 0;
    for (long long c = options_.min_bytes; c <= options_.max_bytes; c *= 2) {
      if (options_.overlap)
        run_overlap_size(c, ++salt);
      else
        run_size(c, ++salt);
    }
    if (rank_ == 0)
      std::printf("%scollshim-bench: %d results verified against native, %d mismatches%s\n", options_.csv ? "# " : "",
                  verified_, mismatches_,
                  unverified_ > 0 ? (", " + std::to_string(unverified_) + " unverified (shared buffers)").c_str() : "");
    return mismatches_;
  }

 private:
  int call(const Implementation& impl) {
    return impl.choice == nullptr ? case_->call_native() : case_->call(*impl.choice, *context_);
  }

  void check_rc(int rc, const Implementation& impl) {
    if (rc == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(rc, text, &length);
    std::fprintf(stderr, "collshim-bench: error: %s failed on rank %d: %s\n", impl.label.c_str(), rank_, text);
    MPI_Abort(comm_, 2);
  }

  // The seconds of one call of `body`, the ranks started together by a barrier.
  template <typename Body>
  double timed(const Implementation& impl, Body body) {
    MPI_Barrier(comm_);
    const double start = MPI_Wtime();
    const int rc = body();
    const double elapsed = MPI_Wtime() - start;
    check_rc(rc, impl);
    return elapsed;
  }

  // The case's step for size c, or none where the case skips that size (rank 0 says why).
  std::optional<collshim::bench::SizeStep> prepare(long long c, int salt) {
    std::string skip_reason;
    std::optional<collshim::bench::SizeStep> step = case_->prepare(c, salt, skip_reason);
    if (!step && rank_ == 0) std::printf("# %lld bytes: skipped, %s\n", c, skip_reason.c_str());
    return step;
  }

  // Clears the size's mismatches. False where its results cannot be verified: on SMPI_SHARED_MALLOC
  // buffers, which are counted and noted once instead.
  bool verifiable(long long c) {
    for (Implementation& impl : implementations_) impl.mismatch = false;
    if (!case_->buffers().shared()) return true;
    if (rank_ == 0 && !unverified_note_) {
      std::printf(
          "# from %lld bytes on: SMPI shared buffers (data over all ranks exceeds --verify-limit), "
          "results not verified\n",
          c);
      unverified_note_ = true;
    }
    unverified_ += static_cast<int>(implementations_.size()) - 1;
    return false;
  }

  // One untimed call per implementation into a poisoned buffer: native must produce what the
  // collective defines, every algorithm exactly native's bytes.
  void verify(long long c) {
    collshim::bench::StepBuffers& buffers = case_->buffers();
    buffers.poison();
    check_rc(call(implementations_[0]), implementations_[0]);
    int native_bad = case_->native_result_expected() ? 0 : 1;
    MPI_Allreduce(MPI_IN_PLACE, &native_bad, 1, MPI_INT, MPI_MAX, comm_);
    if (native_bad) {
      if (rank_ == 0) std::fprintf(stderr, "collshim-bench: error: native MPI gave an unexpected result\n");
      MPI_Abort(comm_, 2);
    }
    buffers.keep_reference();
    for (std::size_t i = 1; i < implementations_.size(); ++i) {
      Implementation& impl = implementations_[i];
      buffers.poison();
      check_rc(call(impl), impl);
      int bad_ranks = buffers.matches_reference() ? 0 : 1;
      MPI_Allreduce(MPI_IN_PLACE, &bad_ranks, 1, MPI_INT, MPI_SUM, comm_);
      impl.mismatch = bad_ranks > 0;
      ++verified_;
      if (impl.mismatch) {
        ++mismatches_;
        if (rank_ == 0)
          std::fprintf(stderr,
                       "collshim-bench: error: MISMATCH: %s differs from native at %lld bytes on %d of %d ranks\n",
                       impl.label.c_str(), c, bad_ranks, p_);
      }
    }
  }

  void run_size(long long c, int salt) {
    const std::optional<collshim::bench::SizeStep> step = prepare(c, salt);
    if (!step) return;
    decide(*step);
    if (verifiable(c)) verify(c);
    for (Implementation& impl : implementations_) {
      impl.seconds = 0;
      impl.call_seconds.assign(options_.iterations, 0.0);
      for (int i = 0; i < options_.warmup; ++i) check_rc(call(impl), impl);
    }
    for (int i = 0; i < options_.iterations; ++i) {
      for (Implementation& impl : implementations_) {
        const double elapsed = timed(impl, [&] { return call(impl); });
        impl.seconds += elapsed;
        impl.call_seconds[i] = elapsed;
      }
    }
    // Microseconds per call on this rank, then min/avg/max over ranks at rank 0.
    const std::size_t n = implementations_.size();
    std::vector<double> mine(n), low(n), sum(n), high(n);
    for (std::size_t i = 0; i < n; ++i) mine[i] = implementations_[i].seconds * 1e6 / options_.iterations;
    MPI_Reduce(mine.data(), low.data(), static_cast<int>(n), MPI_DOUBLE, MPI_MIN, 0, comm_);
    MPI_Reduce(mine.data(), sum.data(), static_cast<int>(n), MPI_DOUBLE, MPI_SUM, 0, comm_);
    MPI_Reduce(mine.data(), high.data(), static_cast<int>(n), MPI_DOUBLE, MPI_MAX, 0, comm_);
    // Each timed call's time on its slowest rank (what the application waits for), reduced after the
    // timing so the timed calls stay back to back.
    std::vector<double> per_call(n * options_.iterations), slowest(n * options_.iterations);
    for (std::size_t i = 0; i < n; ++i)
      std::copy(implementations_[i].call_seconds.begin(), implementations_[i].call_seconds.end(),
                per_call.begin() + static_cast<std::ptrdiff_t>(i * options_.iterations));
    MPI_Reduce(per_call.data(), slowest.data(), static_cast<int>(per_call.size()), MPI_DOUBLE, MPI_MAX, 0, comm_);
    if (rank_ == 0) {
      std::vector<CallStatistics> statistics(n);
      for (std::size_t i = 0; i < n; ++i) {
        const auto first = slowest.begin() + static_cast<std::ptrdiff_t>(i * options_.iterations);
        statistics[i] = call_statistics({first, first + options_.iterations});
      }
      print_row(*step, low, sum, high, statistics);
    }
  }

  // A call of implementation k's nonblocking form, started and waited for: a new call (the
  // library's MPI_I<collective>, or the shim's nonblocking call), or a persistent start of the run
  // made last (MPI_Start of a persistent operation). Out of line, so that bench/overhead/
  // persistent_start.py can count the instructions of a persistent start (callgrind --toggle-collect).
  [[gnu::noinline]] int nonblocking_call(std::size_t k) {
    NonblockingRun& run = *runs_[k];
    const int rc = run.start();
    return rc != MPI_SUCCESS ? rc : run.wait();
  }
  [[gnu::noinline]] int persistent_start(std::size_t k) {
    NonblockingRun& run = *runs_[k];
    const int rc = run.restart();
    return rc != MPI_SUCCESS ? rc : run.wait();
  }

  // The same started, then `cpu_seconds` of CPU work with a test every --test-every microseconds of
  // it, then waited for.
  int overlapped(std::size_t k, double cpu_seconds) {
    NonblockingRun& run = *runs_[k];
    int rc = run.start();
    if (rc != MPI_SUCCESS) return rc;
    bool complete = false;
    compute(cpu_seconds, options_.test_every_us * 1e-6, [&] {
      if (!complete) complete = run.test(rc);
    });
    return complete ? rc : run.wait();
  }

  // --overlap: the nonblocking forms' results against native's blocking one (after verify(), which
  // keeps it as the reference): each implementation's new call and a persistent start.
  void verify_nonblocking(long long c) {
    collshim::bench::StepBuffers& buffers = case_->buffers();
    for (std::size_t k = 0; k < implementations_.size(); ++k) {
      Implementation& impl = implementations_[k];
      for (const bool persistent : {false, true}) {
        if (persistent && impl.choice == nullptr) continue;
        buffers.poison();
        check_rc(persistent ? persistent_start(k) : nonblocking_call(k), impl);
        int bad_ranks = buffers.matches_reference() ? 0 : 1;
        MPI_Allreduce(MPI_IN_PLACE, &bad_ranks, 1, MPI_INT, MPI_SUM, comm_);
        ++verified_;
        if (bad_ranks == 0) continue;
        impl.mismatch = true;
        ++mismatches_;
        if (rank_ == 0)
          std::fprintf(stderr,
                       "collshim-bench: error: MISMATCH: %s's %s differs from native at %lld bytes on %d of %d ranks\n",
                       impl.label.c_str(), persistent ? "persistent start" : "nonblocking call", c, bad_ranks, p_);
      }
    }
  }

  // --overlap: one size (see the file's comment). Times are each call's on its slowest rank, their
  // median over the calls; t_cpu is that t_pure, so every rank computes as long.
  void run_overlap_size(long long c, int salt) {
    const std::optional<collshim::bench::SizeStep> step = prepare(c, salt);
    if (!step) return;
    if (verifiable(c)) {
      verify(c);
      verify_nonblocking(c);
    }
    const std::size_t n = implementations_.size();
    const int calls = options_.iterations;
    for (std::size_t k = 0; k < n; ++k) {
      const Implementation& impl = implementations_[k];
      for (int i = 0; i < options_.warmup; ++i) {
        check_rc(call(impl), impl);
        check_rc(nonblocking_call(k), impl);
      }
    }
    // Per implementation: blocking, pure (start + wait), persistent start + wait, overlapped; seconds
    // summed over the calls on this rank.
    enum Column : std::size_t { blocking, pure, persistent, overlap, columns };
    std::vector<double> seconds(n * columns * calls, 0.0);  // this rank's, of each call
    const auto at = [&](std::size_t k, Column column, int i) -> double& {
      return seconds[(k * columns + column) * calls + i];
    };
    for (int i = 0; i < calls; ++i) {
      for (std::size_t k = 0; k < n; ++k) {
        const Implementation& impl = implementations_[k];
        at(k, blocking, i) = timed(impl, [&] { return call(impl); });
        at(k, pure, i) = timed(impl, [&] { return nonblocking_call(k); });
        if (impl.choice != nullptr) at(k, persistent, i) = timed(impl, [&] { return persistent_start(k); });
      }
    }
    // t_cpu: the median over the calls of the slowest rank's t_pure (IMB-NBC takes the mean; on a
    // shared machine one descheduled call would set it), the same on every rank.
    std::vector<double> cpu(n);
    for (std::size_t k = 0; k < n; ++k) {
      std::vector<double> slowest_pure(&at(k, pure, 0), &at(k, pure, 0) + calls);
      MPI_Allreduce(MPI_IN_PLACE, slowest_pure.data(), calls, MPI_DOUBLE, MPI_MAX, comm_);
      cpu[k] = call_statistics(slowest_pure).median_us * 1e-6;
    }
    for (int i = 0; i < calls; ++i) {
      for (std::size_t k = 0; k < n; ++k)
        at(k, overlap, i) = timed(implementations_[k], [&] { return overlapped(k, cpu[k]); });
    }
    // Each call's time on its slowest rank; per column its median and interquartile range.
    std::vector<double> slowest(seconds.size());
    MPI_Reduce(seconds.data(), slowest.data(), static_cast<int>(seconds.size()), MPI_DOUBLE, MPI_MAX, 0, comm_);
    if (rank_ != 0) return;
    std::vector<CallStatistics> statistics(n * columns);
    for (std::size_t i = 0; i < statistics.size(); ++i) {
      const auto first = slowest.begin() + static_cast<std::ptrdiff_t>(i * calls);
      statistics[i] = call_statistics({first, first + calls});
    }
    for (std::size_t k = 0; k < n; ++k) {
      const Implementation& impl = implementations_[k];
      const CallStatistics* column = &statistics[k * columns];
      const double us[columns] = {column[blocking].median_us, column[pure].median_us, column[persistent].median_us,
                                  column[overlap].median_us};
      const double native_pure = statistics[pure].median_us, native_overlap = statistics[overlap].median_us;
      const double cpu_us = cpu[k] * 1e6;
      const double overlap_pct =
          cpu_us > 0 ? 100.0 * std::clamp((us[pure] + cpu_us - us[overlap]) / cpu_us, 0.0, 1.0) : 0.0;
      const double persistent_us = impl.choice != nullptr ? us[persistent] : std::nan("");
      if (options_.csv) {
        std::printf(
            "%s,%s,%d,%lld,%lld,%s,%.3f,%.3f,%.3f,%.3f,%.3f,%.1f,%.4f,%.4f,%.3f,%.3f,%s,%d,%d,%s,%lld,%g,%s,%s,%s\n",
            std::string(collshim::collective_name(collective_)).c_str(), options_.case_options.variant.c_str(), p_,
            step->bytes, step->total_bytes, collshim::bench::csv_field(impl.label).c_str(), us[blocking], us[pure],
            persistent_us, cpu_us, us[overlap], overlap_pct, us[pure] / native_pure, us[overlap] / native_overlap,
            column[pure].spread_us, column[overlap].spread_us, impl.mismatch ? "MISMATCH" : "ok", mapping_.nodes,
            mapping_.ppn, std::string(collshim::mapping_name(mapping_.mapping)).c_str(), step->block_bytes,
            options_.test_every_us, collshim::bench::csv_field(options_.platform).c_str(),
            collshim::bench::csv_field(mpi_library_).c_str(), date_.c_str());
        continue;
      }
      char persistent_cell[32] = "-";
      if (impl.choice != nullptr) std::snprintf(persistent_cell, sizeof persistent_cell, "%.2f", persistent_us);
      std::printf("%10lld  %-*s %10.2f %10.2f %10s %10.2f %10.2f %8.1f%s\n", step->bytes, label_width(),
                  impl.label.c_str(), us[blocking], us[pure], persistent_cell, cpu_us, us[overlap], overlap_pct,
                  impl.mismatch ? "  MISMATCH" : "");
    }
  }

  int label_width() const {
    int width = 9;
    for (const Implementation& impl : implementations_) width = std::max(width, static_cast<int>(impl.label.size()));
    return width;
  }

  // Median and interquartile range, in microseconds, of the calls' slowest-rank times. The IQR is the
  // spread `collshim-tune` requires a win to exceed; one timed call gives 0 (SMPI is deterministic).
  struct CallStatistics {
    double median_us = 0, spread_us = 0;
  };
  static CallStatistics call_statistics(std::vector<double> seconds) {
    std::sort(seconds.begin(), seconds.end());
    // Linear interpolation between order statistics, as numpy's default percentile.
    auto quantile = [&](double q) {
      const double at = q * static_cast<double>(seconds.size() - 1);
      const std::size_t below = static_cast<std::size_t>(at);
      const std::size_t above = std::min(below + 1, seconds.size() - 1);
      return seconds[below] + (at - static_cast<double>(below)) * (seconds[above] - seconds[below]);
    };
    return {quantile(0.5) * 1e6, (quantile(0.75) - quantile(0.25)) * 1e6};
  }

  void print_header() {
    if (rank_ != 0) return;
    const std::string first_line = library_version_line();
    mpi_library_ = first_line;
    const std::string name(collshim::mpi_function_name(collective_));
    const std::string& variant = options_.case_options.variant;
    const std::string what = variant.empty() ? name : name + " (" + variant + ")";
    std::printf("# collshim-bench: %s on %d ranks (%d nodes, %s), %s\n", what.c_str(), p_, mapping_.nodes,
                std::string(collshim::mapping_name(mapping_.mapping)).c_str(), first_line.c_str());
    std::printf("# %d warm-up and %d timed calls per size, barrier before each, implementations interleaved\n",
                options_.warmup, options_.iterations);
    for (const auto& note : notes_) std::printf("# %s\n", note.c_str());
    if (options_.overlap) {
      std::printf(
          "# overlap (IMB-NBC): pure = start + wait; cpu = pure, of CPU work with a test every %g us; overlapped = "
          "start + cpu + wait; overlap %% = 100 (pure + cpu - overlapped) / cpu, in [0, 100]; blocking = the "
          "blocking call; persistent = a start of a schedule run made once (algorithms only)\n",
          options_.test_every_us);
      std::printf(
          "# time: microseconds per call, median over calls of the slowest rank's time (spread: interquartile "
          "range)\n");
      if (options_.csv) {
        std::printf(
            "collective,distribution,ranks,bytes,total_bytes,algorithm,blocking_us,pure_us,persistent_us,cpu_us,"
            "overlapped_us,overlap_pct,pure_ratio_to_native,overlapped_ratio_to_native,pure_spread_us,"
            "overlapped_spread_us,verified,nodes,ppn,mapping,"
            "block_bytes,test_every_us,platform,mpi_library,date\n");
        return;
      }
      std::printf("# bytes: %s\n", info_.size_meaning.c_str());
      std::printf("%10s  %-*s %10s %10s %10s %10s %10s %8s\n", "bytes", label_width(), "algorithm", "blocking", "pure",
                  "persistent", "cpu", "overlapped", "overlap%");
      return;
    }
    if (options_.csv) {
      // The first eleven columns are the original ones (bench/sim/run.py reads them by position); the rest
      // are what `collshim-tune rules` needs.
      std::printf(
          "collective,distribution,ranks,bytes,total_bytes,algorithm,min_us,avg_us,max_us,ratio_to_native,"
          "verified,nodes,ppn,mapping,block_bytes,median_us,spread_us,platform,mpi_library,date,decision,"
          "source,trial_calls,trial_us,model_pick,predicted_us,predicted_native_us\n");
      return;
    }
    std::printf("# time: microseconds per call, average over calls, maximum over ranks; (x) = time / native\n");
    std::printf("# bytes: %s\n", info_.size_meaning.c_str());
    std::printf("%10s", "bytes");
    if (show_total()) std::printf(" %12s", "total");
    for (const Implementation& impl : implementations_) std::printf(" %*s", column_width(impl), impl.label.c_str());
    std::printf("  best\n");
  }

  // Native (the first) has no ratio column.
  int column_width(const Implementation& impl) const {
    return std::max<int>(static_cast<int>(impl.label.size()), &impl == &implementations_.front() ? 10 : 17);
  }

  void print_row(const collshim::bench::SizeStep& step, const std::vector<double>& low, const std::vector<double>& sum,
                 const std::vector<double>& high, const std::vector<CallStatistics>& statistics) {
    const double native = high[0];
    std::size_t best = 0;
    for (std::size_t i = 1; i < implementations_.size(); ++i) {
      if (!implementations_[i].mismatch && high[i] < high[best]) best = i;
    }
    if (options_.csv) {
      for (std::size_t i = 0; i < implementations_.size(); ++i) {
        const Implementation& impl = implementations_[i];
        std::printf(
            "%s,%s,%d,%lld,%lld,%s,%.3f,%.3f,%.3f,%.4f,%s,%d,%d,%s,%lld,%.3f,%.3f,%s,%s,%s,%s,%s,%d,%.3f,%s,%.3f,%."
            "3f\n",
            std::string(collshim::collective_name(collective_)).c_str(), options_.case_options.variant.c_str(), p_,
            step.bytes, step.total_bytes, collshim::bench::csv_field(implementations_[i].label).c_str(), low[i],
            sum[i] / p_, high[i], high[i] / native, implementations_[i].mismatch ? "MISMATCH" : "ok", mapping_.nodes,
            mapping_.ppn, std::string(collshim::mapping_name(mapping_.mapping)).c_str(), step.block_bytes,
            statistics[i].median_us, statistics[i].spread_us, collshim::bench::csv_field(options_.platform).c_str(),
            collshim::bench::csv_field(mpi_library_).c_str(), date_.c_str(),
            collshim::bench::csv_field(impl.decided ? impl.decision : impl.label).c_str(),
            collshim::bench::csv_field(impl.source).c_str(), impl.trial_calls, impl.trial_us,
            collshim::bench::csv_field(impl.model_pick).c_str(), impl.predicted_us, impl.predicted_native_us);
      }
      return;
    }
    std::printf("%10lld", step.bytes);
    if (show_total()) std::printf(" %12lld", step.total_bytes);
    for (std::size_t i = 0; i < implementations_.size(); ++i) {
      const Implementation& impl = implementations_[i];
      char cell[64];
      if (impl.mismatch)
        std::snprintf(cell, sizeof cell, "MISMATCH");
      else if (i == 0)
        std::snprintf(cell, sizeof cell, "%.2f", high[i]);
      else
        std::snprintf(cell, sizeof cell, "%.2f (%.2fx)", high[i], high[i] / native);
      std::printf(" %*s", column_width(impl), cell);
    }
    std::printf("  %s\n", implementations_[best].label.c_str());
  }

 private:
  bool show_total() const { return !info_.variants.empty(); }

  // The "collshim" row runs what the shim decides for this call, through the shim's decision policy:
  // the same selector, facts and fallbacks, and where no rule decides, the same cost model step (one
  // rank costs, all agree) and the same session of trial calls (confirmation, or online tuning), run
  // here before the size is timed, their number and time kept for the CSV. Each size is settled from
  // scratch, as on a new communicator. In a job a repeated call's decision is a cache hit, so the
  // timed calls are what the rest of a job gets.
  void decide(const collshim::bench::SizeStep& step) {
    namespace model = collshim::model;
    for (Implementation& impl : implementations_) {
      if (!impl.decided) continue;
      collshim::CallFacts facts{collective_,    p_,           step.block_bytes,       mapping_.mapping,
                                mapping_.nodes, mapping_.ppn, mapping_.oversubscribed};
      case_->describe(facts);
      impl.source = impl.model_pick = impl.trials = "";
      impl.trial_calls = 0;
      impl.trial_us = impl.predicted_us = impl.predicted_native_us = 0;
      collshim::CommDecisions decisions;
      collshim::ShadowSteps steps(context_->comm(), rank_, p_);
      const collshim::PolicyCall policy_call{
          facts, 0, mapping_.node_of_rank, [&](collshim::CollectiveSteps& on) {
            model::ModelCall costed{collective_, p_, step.block_bytes};
            costed.block_bytes = case_->block_bytes_by_rank();
            if (const long long element = case_->reduction_element_bytes(); element > 0) costed.element_bytes = element;
            if (const std::vector<long long> sent = case_->sent_bytes(); !sent.empty())
              costed.pairs = model::gather_alltoall_pattern(on, sent, case_->received_bytes(), mapping_.node_of_rank,
                                                            step.block_bytes);
            return costed;
          }};
      collshim::Outcome outcome = policy_->decide(decisions, policy_call, steps);
      if (outcome.verdict) {
        if (rank_ == 0)
          std::printf("# %lld bytes: cost model: %s\n", step.bytes, model::verdict_text(*outcome.verdict).c_str());
        impl.model_pick = outcome.verdict->pick->text();
        impl.predicted_us = outcome.key->evidence.pick_us;
        impl.predicted_native_us = outcome.key->evidence.native_us;
      }
      // The key's first calls as a job makes them: trial calls, then where the pick left native its
      // own calls until its second look (not counted as trial calls), and that look's trial calls.
      double trial_seconds = 0;  // this rank's, summed; the slowest rank's total goes to the CSV
      while (outcome.decision == nullptr) {
        const collshim::Trial trial = policy_->trial(*outcome.key);
        const Implementation trying{.label = trial.choice->text(),
                                    .choice = trial.choice->algorithm->passes_through ? nullptr : trial.choice};
        double seconds = 0;
        bool settled_now = false;
        check_rc(policy_->run_trial(
                     *outcome.key, steps, [&] { return call(trying); }, seconds, settled_now),
                 trying);
        if (trial.trial_call) {
          trial_seconds += seconds;
          ++impl.trial_calls;
        }
        outcome = policy_->decide(decisions, policy_call, steps);
      }
      const collshim::Decision& decision = *outcome.decision;
      if (outcome.key != nullptr) {  // settled by the model or online tuning
        MPI_Allreduce(MPI_IN_PLACE, &trial_seconds, 1, MPI_DOUBLE, MPI_MAX, context_->comm());
        impl.trial_us = trial_seconds * 1e6;
        impl.trials = collshim::measured_text(outcome.key->session);
        impl.source = decision.reason;
      }
      impl.choice = decision.choice->algorithm->passes_through ? nullptr : decision.choice;
      impl.decision = decision.choice->text();
      if (rank_ == 0)
        std::printf("# %lld bytes: collshim runs %s (%s%s%s%s)\n", step.bytes, decision.choice->text().c_str(),
                    decision.reason, decision.choice != decision.requested ? ", fallback of " : "",
                    decision.choice != decision.requested ? decision.requested->text().c_str() : "",
                    impl.trial_calls > 0
                        ? (", after " + std::to_string(impl.trial_calls) + " trial calls: " + impl.trials).c_str()
                        : "");
    }
  }

  const Options& options_;
  // --rules: the shim's decision policy (with COLLSHIM_PLATFORM its model, with COLLSHIM_TUNE_RECHECK
  // its tuning policy); null without.
  const collshim::DecisionPolicy* policy_;
  const collshim::bench::CaseInfo& info_;
  Collective collective_;
  std::unique_ptr<collshim::bench::BenchCase> case_;
  std::vector<AlgorithmChoice> choices_;  // Implementation::choice points here: never resized
  std::vector<std::string> notes_;
  MPI_Comm comm_;
  int p_ = 0, rank_ = 0;
  std::unique_ptr<collshim::CommContext> context_;
  collshim::CommMapping mapping_;
  std::vector<Implementation> implementations_;
  std::unique_ptr<DuplicateComm> lane_;                // --overlap: the nonblocking runs' communicator
  std::vector<std::unique_ptr<NonblockingRun>> runs_;  // --overlap: one per implementation
  std::string mpi_library_;                            // first line of MPI_Get_library_version
  std::string date_ = today();                         // of the run
  int verified_ = 0, mismatches_ = 0, unverified_ = 0;
  bool unverified_note_ = false;
};

// --calibrate: measures the platform description on this allocation and writes it (rank 0) to the
// file, or with "-" to standard output between marker lines (collshim-tune calibrate reads it there,
// so the file is written where the launcher runs, not on rank 0's node). The placement is printed
// first either way: it tells collshim-tune why a job cannot calibrate.
int calibrate(const Options& options, MPI_Comm comm) {
  int rank = 0, p = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  const collshim::CommMapping mapping =
      collshim::detect_comm_mapping(comm, collshim::detect_process_placement(topology_override()));
  std::map<int, int> ranks_on;
  for (const int node : mapping.node_of_rank) ++ranks_on[node];
  collshim::bench::CalibrationLayout layout{p, static_cast<int>(ranks_on.size()), 0};
  for (const auto& [node, count] : ranks_on) layout.fullest = std::max(layout.fullest, count);
  if (rank == 0) {
    std::printf("%s\n", collshim::bench::layout_line(layout).c_str());
    std::fflush(stdout);
  }
  collshim::bench::CalibrationRanks ranks = collshim::bench::calibration_ranks(mapping.node_of_rank);
  if (!ranks.error.empty()) {
    if (rank == 0) std::fprintf(stderr, "collshim-bench: error: %s\n", ranks.error.c_str());
    return 2;
  }
  collshim::bench::CalibrationOptions calibration;
  calibration.name = options.platform.empty() ? "calibrated" : options.platform;
  calibration.min_bytes = options.min_bytes;
  calibration.max_bytes = options.max_bytes;
  calibration.iterations = options.iterations;
  calibration.warmup = options.warmup;
  // The two nodes, as far apart as the allocation allows (calibration.hpp), named in the output and
  // in the description's comments.
  const collshim::bench::FarNodeChoice far = collshim::bench::choose_far_node(comm, ranks, calibration);
  const std::string measured_nodes = calibrated_nodes_text(comm, mapping.node_of_rank, ranks, far);
  if (rank == 0) {
    std::printf("collshim-bench: calibrating %s\n", measured_nodes.c_str());
    std::fflush(stdout);
  }
  const collshim::model::CalibrationMeasurements measured = collshim::bench::measure_platform(comm, ranks, calibration);
  if (rank != 0) return 0;
  const collshim::model::Calibration fitted = collshim::model::fit_platform(measured);
  const std::string first_line = library_version_line();
  const std::vector<std::string> provenance = {
      "measured " + today() + " on " + std::to_string(p) + " ranks, " + std::to_string(mapping.nodes) + " nodes (" +
          std::to_string(ranks.first_node.size()) + " and " + std::to_string(ranks.second_node.size()) +
          " ranks on the two measured), " + first_line,
      measured_nodes,
      "sizes " + std::to_string(options.min_bytes) + " to " + std::to_string(options.max_bytes) + " B, up to " +
          std::to_string(options.iterations) + " timed steps each"};
  const std::string yaml = collshim::bench::calibration_yaml(measured, fitted, provenance);
  const bool to_stdout = options.calibrate == "-";
  if (to_stdout) {
    std::printf("%s\n%s%s\n", std::string(collshim::bench::description_begins).c_str(), yaml.c_str(),
                std::string(collshim::bench::description_ends).c_str());
    std::fflush(stdout);
  } else {
    std::FILE* out = std::fopen(options.calibrate.c_str(), "w");
    if (out == nullptr || std::fputs(yaml.c_str(), out) < 0 || std::fclose(out) != 0) {
      std::fprintf(stderr, "collshim-bench: error: --calibrate %s: cannot write the description: %s\n",
                   options.calibrate.c_str(), std::strerror(errno));
      return 2;
    }
  }
  std::fprintf(to_stdout ? stderr : stdout,
               "collshim-bench: platform description written to %s (shm fit: median error %.3f, worst %.3f; net "
               "fit: median %.3f, worst %.3f)\n",
               to_stdout ? "standard output" : options.calibrate.c_str(), fitted.shm.median_error, fitted.shm.max_error,
               fitted.net.median_error, fitted.net.max_error);
  return 0;
}

// The algorithms to run: the requested specs, or every schedule algorithm of the collective with its
// defaults. Ineligible choices are dropped with a note naming what the shim would run instead.
std::optional<std::vector<AlgorithmChoice>> resolve_algorithms(const Options& options, Collective collective, int p,
                                                               std::vector<std::string>& notes, std::string& error) {
  std::vector<std::string> specs = split_specs(options.algorithms);
  if (options.algorithms.empty()) {
    for (const collshim::Algorithm& algorithm : collshim::algorithms()) {
      if (algorithm.runs_schedules() && algorithm.supports(collective)) specs.emplace_back(algorithm.name);
    }
  }
  std::vector<AlgorithmChoice> choices;
  for (const std::string& spec : specs) {
    auto parsed = collshim::parse_algorithm_spec(spec, collective);
    if (!parsed.choice) {
      error = "--algorithms " + spec + ": " + parsed.error;
      return std::nullopt;
    }
    AlgorithmChoice& choice = *parsed.choice;
    if (choice.algorithm->passes_through) continue;  // native is always the baseline
    if (!choice.algorithm->runs_schedules()) {
      error = "--algorithms " + spec + ": not a schedule algorithm, collshim-bench cannot run it directly";
      return std::nullopt;
    }
    if (choice.algorithm->eligible && !choice.algorithm->eligible(p, choice.params)) {
      notes.push_back(choice.text() + " skipped: not eligible for p=" + std::to_string(p) + " (needs " +
                      std::string(choice.algorithm->eligibility) + "); the shim would run " +
                      std::string(choice.algorithm->fallback));
      continue;
    }
    if (options.overlap && choice.algorithm->blocking_only) {
      const std::string_view reason = choice.algorithm->blocking_only(choice.params);
      if (!reason.empty()) {
        notes.push_back(choice.text() + " skipped: blocking-only (" + std::string(reason) +
                        "); the shim's nonblocking call runs another");
        continue;
      }
    }
    const bool duplicate = std::any_of(choices.begin(), choices.end(),
                                       [&](const AlgorithmChoice& c) { return c.text() == choice.text(); });
    if (duplicate) continue;
    choices.push_back(std::move(choice));
  }
  return choices;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, p = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);

  Options options;
  CLI::App app{"Times one MPI collective natively and with collshim's algorithms, side by side.", "collshim-bench"};
  std::vector<std::string> collective_names;
  for (const auto& info : collshim::bench::bench_cases())
    collective_names.emplace_back(collshim::collective_name(info.collective));
  app.add_option("--collective", options.collective, "collective to time")
      ->check(CLI::IsMember(collective_names))
      ->capture_default_str();
  app.add_option("--algorithms", options.algorithms,
                 "algorithm specs, e.g. ring recursive_multiplying:k=8 (default: every algorithm of the collective)");
  app.add_option("--min-bytes", options.min_bytes, "smallest size (block, vector or pair), e.g. 1, 4KiB")
      ->transform(CLI::AsSizeValue(false))
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{INT_MAX}))
      ->capture_default_str();
  app.add_option("--max-bytes", options.max_bytes, "largest size (sizes double from --min-bytes)")
      ->transform(CLI::AsSizeValue(false))
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{INT_MAX}))
      ->capture_default_str();
  app.add_option("--iterations", options.iterations, "timed calls per size and implementation")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  app.add_option("--warmup", options.warmup, "untimed calls first")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  // Each case's variant option (--distribution, --pattern): its values are checked against the case.
  std::map<std::string, std::pair<std::string, CLI::Option*>> variant_options;  // option name -> value, option
  for (const auto& info : collshim::bench::bench_cases()) {
    if (info.variant_option.empty() || variant_options.count(info.variant_option)) continue;
    auto& [value, option] = variant_options[info.variant_option];
    std::string uses;
    for (const auto& other : collshim::bench::bench_cases()) {
      if (other.variant_option != info.variant_option) continue;
      uses += std::string(uses.empty() ? "" : "; ") + std::string(collshim::collective_name(other.collective)) + ": " +
              collshim::alternatives_text(other.variants) + " (default " + other.variants.front() + ")";
    }
    option = app.add_option(info.variant_option, value, uses);
  }
  app.add_option("--seed", options.case_options.seed, "seed of the random patterns")->capture_default_str();
  app.add_flag("--csv", options.csv, "print CSV rows instead of the table");
  app.add_option("--platform", options.platform,
                 "name of the machine or simulated platform, written to the CSV column `platform`");
  app.add_option("--rules", options.rules,
                 "also time \"collshim\": what the shim decides with these rule files (COLLSHIM_CONFIG syntax, "
                 "e.g. default:tuned.yaml) and this environment's forcing variables; with COLLSHIM_PLATFORM the "
                 "cost model decides where no rule does, confirmed by trial calls as COLLSHIM_TUNE says");
  app.add_option(
      "--calibrate", options.calibrate,
      "measure this allocation's cost-model platform description (collshim-model predict --platform) "
      "and write it to this file (\"-\": standard output) instead of timing a collective; needs two nodes, one "
      "with two ranks. "
      "--platform names it, --min-bytes/--max-bytes/--iterations/--warmup set the measurements");
  app.add_flag("--overlap", options.overlap,
               "time the nonblocking form (MPI_I<collective>; the algorithms' schedules run without blocking, as "
               "libcollshim.so runs them): pure, overlapped with CPU work and the overlap %, as IMB-NBC measures "
               "them, with the blocking call's time and a persistent start's alongside");
  app.add_option("--test-every", options.test_every_us,
                 "--overlap: microseconds of CPU work between two tests of the running call (0: none)")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  app.add_option("--native-label", options.native_label,
                 "name of the MPI library's own collective in the output (default: native; under SMPI "
                 "smpi_<coll-selector>)");
#ifdef COLLSHIM_SMPI
  app.add_option("--verify-limit", options.case_options.verify_limit,
                 "SMPI: sizes whose send+receive buffers summed over all simulated ranks exceed this run on "
                 "shared-malloc buffers, unverified")
      ->transform(CLI::AsSizeValue(false))
      ->capture_default_str();
#endif

  int status = 0;
  const collshim::bench::CaseInfo* info = nullptr;
  try {
    app.parse(argc, argv);
    if (options.min_bytes > options.max_bytes) throw CLI::ValidationError("--min-bytes", "exceeds --max-bytes");
    if (options.overlap && !options.rules.empty())
      throw CLI::ValidationError("--rules", "does not apply with --overlap");
    info = collshim::bench::find_bench_case(*collshim::find_collective(options.collective));
    for (const auto& [name, entry] : variant_options) {
      const auto& [value, option] = entry;
      if (option->count() > 0 && name != info->variant_option)
        throw CLI::ValidationError(name, "does not apply to --collective " + options.collective);
    }
    if (!info->variant_option.empty()) {
      const std::string& value = variant_options.at(info->variant_option).first;
      options.case_options.variant = value.empty() ? info->variants.front() : value;
      if (std::find(info->variants.begin(), info->variants.end(), options.case_options.variant) == info->variants.end())
        throw CLI::ValidationError(info->variant_option, options.case_options.variant + " is not one of " +
                                                             collshim::alternatives_text(info->variants));
    }
  } catch (const CLI::ParseError& e) {
    std::ostringstream out, err;
    status = app.exit(e, out, err);
    if (rank == 0) std::fputs((out.str() + err.str()).c_str(), status == 0 ? stdout : stderr);
    MPI_Finalize();
    return status;
  }

  if (!options.calibrate.empty()) {
    status = calibrate(options, MPI_COMM_WORLD);
    MPI_Finalize();
    return status;
  }
  const Collective collective = info->collective;
  std::vector<std::string> notes;
  std::string error;
  auto choices = resolve_algorithms(options, collective, p, notes, error);
  if (!choices) {
    if (rank == 0) std::fprintf(stderr, "collshim-bench: error: %s\n", error.c_str());
    MPI_Finalize();
    return 2;
  }
  // The shim's decision policy: with COLLSHIM_PLATFORM the model decides where no rule does.
  std::unique_ptr<collshim::DecisionPolicy> policy;
  if (!options.rules.empty()) {
    collshim::EnvironmentSettings settings = collshim::read_process_environment();
    settings.config = options.rules;
    std::vector<collshim::RuleDiagnostic> diagnostics;
    std::vector<std::string> model_errors;
    // The shim's decision under the library this run measures (a rule for another one never matches).
    const collshim::ProcessLibrary library = collshim::process_library(settings.mpi_library);
    policy = std::make_unique<collshim::DecisionPolicy>(settings, library, diagnostics, model_errors);
    bool fatal = !settings.errors.empty();
    for (const std::string& e : settings.errors) {
      if (rank == 0) std::fprintf(stderr, "collshim-bench: error: %s\n", e.c_str());
    }
    for (const auto& d : diagnostics) {
      fatal |= d.error;
      if (rank == 0) std::fprintf(stderr, "collshim-bench: %s: %s\n", d.error ? "error" : "warning", d.text().c_str());
    }
    for (const std::string& e : model_errors) {
      fatal = true;
      if (rank == 0) std::fprintf(stderr, "collshim-bench: error: %s\n", e.c_str());
    }
    if (fatal) {
      MPI_Finalize();
      return 2;
    }
  }
  {
    Bench bench(options, *info, std::move(*choices), std::move(notes), policy.get(), MPI_COMM_WORLD);
    status = bench.run() > 0 ? 1 : 0;
  }  // the CommContext frees its communicator before MPI_Finalize
  MPI_Finalize();
  return status;
}
