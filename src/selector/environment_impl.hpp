#pragma once
// Template part of environment.hpp.
namespace collshim {

// A two-valued variable: true for `on`, false for `off` or an empty value; anything else is an error
// naming the variable and what it expects (`expected`). Unset leaves `flag` as it is.
inline void read_switch(const char* text, const char* name, const char* on, const char* off, const char* expected,
                        bool& flag, EnvironmentSettings& settings) {
  if (text == nullptr) return;
  const std::string value = text;
  if (value == on) {
    flag = true;
  } else if (value != off && !value.empty()) {
    settings.errors.push_back(std::string(name) + "=" + value + ": expected " + expected);
  }
}

template <typename Lookup>
EnvironmentSettings read_environment(Lookup lookup, const std::string& site_platform) {
  EnvironmentSettings settings;
  read_switch(lookup("COLLSHIM_DISABLE"), "COLLSHIM_DISABLE", "1", "0", "1 (pass every call through) or 0",
              settings.disabled, settings);
  if (settings.disabled) return settings;  // everything passes through; nothing else is read
  if (const char* level = lookup("COLLSHIM_LOG")) {
    if (auto parsed = parse_log_level(level)) {
      settings.log_level = *parsed;
    } else {
      settings.errors.push_back(std::string("COLLSHIM_LOG=") + level +
                                ": unknown log level; expected one of: off, warn, info, debug, trace");
    }
  }
  if (const char* config = lookup("COLLSHIM_CONFIG")) settings.config = config;
  if (const char* report = lookup("COLLSHIM_REPORT")) settings.report = report;
  read_switch(lookup("COLLSHIM_ALLREDUCE_REORDER"), "COLLSHIM_ALLREDUCE_REORDER", "1", "0",
              "1 (floating-point reductions may run in another order) or 0", settings.allreduce_reorder, settings);
  read_switch(lookup("COLLSHIM_NONBLOCKING"), "COLLSHIM_NONBLOCKING", "native", "shim",
              "shim (nonblocking and persistent collectives decided like blocking ones) or native (all passed to "
              "the MPI library)",
              settings.nonblocking_native, settings);
  read_switch(lookup("COLLSHIM_PROGRESS_THREAD"), "COLLSHIM_PROGRESS_THREAD", "1", "0",
              "1 (a thread advances the shim's nonblocking collectives; needs MPI_THREAD_MULTIPLE) or 0",
              settings.progress_thread, settings);
  resolve_platform(settings, lookup("COLLSHIM_PLATFORM"), site_platform);
  if (const char* tune = lookup("COLLSHIM_TUNE")) {
    const std::string value = tune;
    if (value == "online") {
      settings.tune = TuneMode::online;
      settings.tune_online = true;
    } else if (value == "confirm") {
      settings.tune = TuneMode::confirm;
      if (!settings.platform)
        settings.warnings.push_back(
            "COLLSHIM_TUNE=confirm confirms the cost model's picks, which needs "
            "COLLSHIM_PLATFORM; without it only rules decide");
    } else if (value == "off") {
      settings.tune = TuneMode::off;
    } else if (!value.empty()) {
      settings.errors.push_back("COLLSHIM_TUNE=" + value +
                                ": expected confirm (time the cost model's picks against native; the default with "
                                "COLLSHIM_PLATFORM), online (learn the algorithms during the job) or off");
    }
  }
  if (const char* recheck = lookup("COLLSHIM_TUNE_RECHECK")) {
    const std::string value = recheck;
    int calls = -1;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), calls);
    if (value.empty() || error != std::errc{} || end != value.data() + value.size() || calls < 0)
      settings.errors.push_back("COLLSHIM_TUNE_RECHECK=" + value +
                                ": expected a number of calls (0 or more): how many calls a pick that left native "
                                "runs before it is timed against native once more; 0: never");
    else
      settings.tune_recheck_calls = calls;
  }
  if (const char* widen = lookup("COLLSHIM_TUNE_WIDEN")) {
    const std::string value = widen;
    int candidates = -1;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), candidates);
    if (value.empty() || error != std::errc{} || end != value.data() + value.size() || candidates < 0 || candidates > 5)
      settings.errors.push_back("COLLSHIM_TUNE_WIDEN=" + value +
                                ": expected a number of candidates from 0 to 5: how many more of the cost model's "
                                "ranked candidates a confirmation tries where its measured times disagree with the "
                                "predictions; 0: never");
    else
      settings.tune_widen_candidates = candidates;
  }
  if (const char* margin = lookup("COLLSHIM_MODEL_MARGIN")) {
    const std::string value = margin;
    char* end = nullptr;
    const double parsed = std::strtod(value.c_str(), &end);
    if (value.empty() || end != value.c_str() + value.size() || !(parsed >= 0) || parsed > 10)
      settings.errors.push_back("COLLSHIM_MODEL_MARGIN=" + value +
                                ": expected a fraction from 0 to 10, how much faster than native the model's pick "
                                "must be predicted (0.1: 10%)");
    else
      settings.model_margin = parsed;
  }
  if (const char* exclude = lookup("COLLSHIM_TUNE_EXCLUDE")) {
    std::string text = exclude;
    for (std::size_t at = 0; at <= text.size();) {
      const std::size_t end = std::min(text.find(';', at), text.size());
      if (end > at) settings.tune_exclude.push_back(text.substr(at, end - at));
      at = end + 1;
    }
  }
  if (const char* library = lookup("COLLSHIM_MPI_LIBRARY")) {
    std::string error;
    if (*library != '\0' && mpi_library_from_name(library, error)) settings.mpi_library = library;
    if (!error.empty()) settings.errors.push_back(std::string("COLLSHIM_MPI_LIBRARY=") + library + ": " + error);
  }
  if (const char* out = lookup("COLLSHIM_TUNE_OUT")) {
    settings.tune_out = out;
    if (settings.tune_out->empty()) {
      settings.errors.push_back("COLLSHIM_TUNE_OUT is empty: expected the path of the rule file to write");
    } else if (!settings.tune_online && !settings.platform) {
      settings.errors.push_back("COLLSHIM_TUNE_OUT=" + *settings.tune_out +
                                " needs COLLSHIM_TUNE=online or COLLSHIM_PLATFORM: without them nothing is learned "
                                "to write");
    }
  }
  if (const char* topology = lookup("COLLSHIM_TOPOLOGY")) {
    TopologyParseResult parsed = parse_topology_override(topology);
    if (parsed.topology) {
      settings.topology = parsed.topology;
    } else {
      settings.errors.push_back(std::string("COLLSHIM_TOPOLOGY=") + topology + ": " + parsed.error);
    }
  }
  for (const CollectiveInfo& info : collectives) {
    if (const char* value = lookup(info.forcing_variable)) settings.forced[static_cast<int>(info.collective)] = value;
  }
  return settings;
}

}  // namespace collshim
