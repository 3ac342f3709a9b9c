#include "selector/environment.hpp"

#include <cstdlib>

namespace collshim {

std::optional<LogLevel> parse_log_level(const std::string& text) {
  if (text == "off" || text.empty()) return LogLevel::off;
  if (text == "warn") return LogLevel::warn;
  if (text == "info") return LogLevel::info;
  if (text == "debug") return LogLevel::debug;
  if (text == "trace") return LogLevel::trace;
  return std::nullopt;
}

EnvironmentSettings read_process_environment() {
  return read_environment([](const char* name) { return std::getenv(name); });
}

}  // namespace collshim
