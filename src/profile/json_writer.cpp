#include "profile/json_writer.hpp"

#include <spdlog/fmt/fmt.h>

#include <cmath>

namespace collshim {

std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20)
          out += fmt::format("\\u{:04x}", static_cast<unsigned>(static_cast<unsigned char>(c)));
        else
          out += c;
    }
  }
  return out + "\"";
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (levels_.empty()) return;
  Level& level = levels_.back();
  if (!level.empty) out_ += ",";
  if (level.layout == Layout::lines)
    out_ += "\n" + std::string(static_cast<std::size_t>(indent_) * levels_.size(), ' ');
  else if (!level.empty)
    out_ += " ";
  level.empty = false;
}

JsonWriter& JsonWriter::begin_object(Layout layout) {
  before_value();
  out_ += "{";
  levels_.push_back({layout});
  return *this;
}

JsonWriter& JsonWriter::begin_array(Layout layout) {
  before_value();
  out_ += "[";
  levels_.push_back({layout});
  return *this;
}

JsonWriter& JsonWriter::close(char bracket) {
  const Level level = levels_.back();
  levels_.pop_back();
  if (level.layout == Layout::lines && !level.empty)
    out_ += "\n" + std::string(static_cast<std::size_t>(indent_) * levels_.size(), ' ');
  out_ += bracket;
  return *this;
}

JsonWriter& JsonWriter::end_object() { return close('}'); }
JsonWriter& JsonWriter::end_array() { return close(']'); }

JsonWriter& JsonWriter::key(std::string_view name) {
  before_value();
  out_ += json_string(name) + ": ";
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::scalar(const std::string& text) {
  before_value();
  out_ += text;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view text) { return scalar(json_string(text)); }
JsonWriter& JsonWriter::value(bool flag) { return scalar(flag ? "true" : "false"); }
JsonWriter& JsonWriter::value(long long number) { return scalar(std::to_string(number)); }
JsonWriter& JsonWriter::value(unsigned long long number) { return scalar(std::to_string(number)); }
JsonWriter& JsonWriter::null() { return scalar("null"); }

JsonWriter& JsonWriter::value(double number) {
  return std::isfinite(number) ? scalar(fmt::format("{}", number)) : null();
}

JsonWriter& JsonWriter::fixed(double number, int decimals) {
  return std::isfinite(number) ? scalar(fmt::format("{:.{}f}", number, decimals)) : null();
}

JsonWriter& JsonWriter::significant(double number, int digits) {
  return std::isfinite(number) ? scalar(fmt::format("{:.{}g}", number, digits)) : null();
}

}  // namespace collshim
