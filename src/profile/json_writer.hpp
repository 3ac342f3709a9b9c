#pragma once
// The one way collshim writes JSON: the end-of-run report, collshim-tune's verify --json and winner
// maps, collshim-model's predict --json and constants --json. A streaming writer: objects and arrays
// are either laid out one member a line (indented) or kept on one line, which is how the stable
// formats read (docs/rules-and-tuning.md, "Report").
#include <string>
#include <string_view>
#include <vector>

namespace collshim {

// A JSON string literal: quoted, with quotes, backslashes and control characters escaped.
std::string json_string(std::string_view text);

class JsonWriter {
 public:
  enum class Layout { lines, one_line };
  explicit JsonWriter(int indent = 2) : indent_(indent) {}

  JsonWriter& begin_object(Layout layout = Layout::lines);
  JsonWriter& end_object();
  JsonWriter& begin_array(Layout layout = Layout::lines);
  JsonWriter& end_array();
  // The key of the next member of an object.
  JsonWriter& key(std::string_view name);

  JsonWriter& value(std::string_view text);
  JsonWriter& value(const char* text) { return value(std::string_view(text)); }
  JsonWriter& value(const std::string& text) { return value(std::string_view(text)); }
  JsonWriter& value(bool flag);
  JsonWriter& value(int number) { return value(static_cast<long long>(number)); }
  JsonWriter& value(long number) { return value(static_cast<long long>(number)); }
  JsonWriter& value(long long number);
  JsonWriter& value(unsigned long number) { return value(static_cast<unsigned long long>(number)); }
  JsonWriter& value(unsigned long long number);
  // The shortest text that reads back to the same double; null for infinities and NaN (JSON has none).
  JsonWriter& value(double number);
  // Fixed decimals, as a report's times are written ("0.015269000").
  JsonWriter& fixed(double number, int decimals);
  // printf's %.Ng: N significant digits.
  JsonWriter& significant(double number, int digits);
  JsonWriter& null();

  // key(name).value(v) in one call.
  template <typename T>
  JsonWriter& member(std::string_view name, const T& v) {
    return key(name).value(v);
  }

  // The document, ended by a newline once the outermost value is complete.
  std::string text() const { return out_ + (levels_.empty() && !out_.empty() ? "\n" : ""); }

 private:
  struct Level {
    Layout layout;
    bool empty = true;
  };
  void before_value();  // the separator and indentation a new value needs
  JsonWriter& close(char bracket);
  JsonWriter& scalar(const std::string& text);

  int indent_;
  std::string out_;
  std::vector<Level> levels_;
  bool after_key_ = false;
};

}  // namespace collshim
