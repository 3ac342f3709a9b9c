// The shared part of the model's YAML readers (platform descriptions, library decision tables): every
// error names file:line:column, as the rule files' do, and a map's keys are checked against the ones
// the reader knows, each at most once.
#pragma once

#include <yaml-cpp/yaml.h>

#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>

namespace collshim::model {

// Error: the exception a reader throws, constructed from the whole message.
template <class Error>
class YamlReader {
 public:
  explicit YamlReader(std::string source) : source_(std::move(source)) {}

 protected:
  using Handler = std::function<void(const YAML::Node&)>;

  [[noreturn]] void fail(const YAML::Mark& mark, const std::string& message) const {
    std::ostringstream text;
    text << source_ << ':' << mark.line + 1 << ':' << mark.column + 1 << ": " << message;
    throw Error(text.str());
  }

  // Calls each key's handler with its value; an unknown or repeated key is an error naming the
  // keys `where` takes.
  void for_each_key(const YAML::Node& map, const std::string& where, const std::map<std::string, Handler>& handlers) {
    if (!map.IsMap()) fail(map.Mark(), where + " must be a map");
    std::set<std::string> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      const std::string key = it->first.IsScalar() ? it->first.Scalar() : "?";
      const auto handler = handlers.find(key);
      if (handler == handlers.end()) {
        std::string expected;
        for (const auto& [name, unused] : handlers) expected += (expected.empty() ? "'" : ", '") + name + "'";
        fail(it->first.Mark(), "unknown key '" + key + "' in " + where + ", expected one of " + expected);
      }
      if (!seen.insert(key).second) fail(it->first.Mark(), "key '" + key + "' given twice in " + where);
      handler->second(it->second);
    }
  }

  std::string source_;
};

}  // namespace collshim::model
