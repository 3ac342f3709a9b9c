#pragma once
// The one way collshim reads its YAML files: rule tables (selector/rule_table.cpp), platform
// descriptions (model/platform.cpp) and the MPI libraries' decision tables
// (model/library_decisions.cpp). Every problem of a file is reported, not only the first, each as
// "file:line:column: message"; a map's keys are checked against those its reader knows, each at most
// once; and every file takes the same scalars: booleans as YAML 1.2's core schema writes them.
#include <yaml-cpp/yaml.h>

#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace collshim {

// Where a problem is: file:line:column in a YAML file, or (line 0) an environment setting such as
// "COLLSHIM_ALLGATHER=brick".
struct SourceLocation {
  std::string file;
  int line = 0;              // 1-based
  int column = 0;            // 1-based
  std::string text() const;  // "file:line:column", or just file when line is 0
};

struct Diagnostic {
  SourceLocation where;
  std::string message;
  bool error = true;         // false: a warning
  std::string text() const;  // "file:line:column: message"
};

// A file that cannot be used, with every problem found in it; what() is their texts, one a line.
class YamlFileError : public std::runtime_error {
 public:
  explicit YamlFileError(std::vector<Diagnostic> problems);
  const std::vector<Diagnostic>& problems() const { return problems_; }

 private:
  std::vector<Diagnostic> problems_;
};

// YAML 1.2's core schema booleans: true, True, TRUE, false, False, FALSE (not YAML 1.1's yes/no/on/off,
// which a file could mean as text).
std::optional<bool> parse_yaml_bool(std::string_view text);

// A scalar's text, else what the node is ("a list", "a map", "nothing"): for messages.
std::string describe_node(const YAML::Node& node);

// One file being read. Problems go to `diagnostics` and reading goes on: each check below reports what
// is wrong with a node and returns nullopt, and the reader leaves that value out.
class YamlDocument {
 public:
  YamlDocument(std::string file, std::vector<Diagnostic>& diagnostics);

  // The text's root; nullopt (reported) when it is not YAML.
  std::optional<YAML::Node> load(const std::string& text);

  const std::string& file() const { return file_; }
  SourceLocation location(const YAML::Mark& mark) const;
  void error(const YAML::Mark& mark, std::string message);
  // Errors reported for this file so far: a reader compares counts to know whether a part read cleanly.
  std::size_t errors() const { return errors_; }

  struct Entry {
    std::string key;
    YAML::Mark key_mark;
    YAML::Node value;
  };
  // A map's entries in order, a key given twice reported and its repeat left out (yaml-cpp would keep
  // both silently). Not a map: reported as "`where` must be a map", no entries.
  std::vector<Entry> entries(const YAML::Node& map, const std::string& where);

  // Calls each key's handler with its value; an unknown key is reported with the keys `where` takes.
  using Handler = std::function<void(const YAML::Node&)>;
  void for_each_key(const YAML::Node& map, const std::string& where, const std::map<std::string, Handler>& handlers);

  // Scalars. `what` names the value in messages ("'probe_us'", "oversubscribed"), quoted as given.
  std::optional<std::string> scalar(const YAML::Node& node, const std::string& what);
  std::optional<std::string> text(const YAML::Node& node, const std::string& what);  // non-empty
  std::optional<bool> boolean(const YAML::Node& node, const std::string& what);
  std::optional<double> number(const YAML::Node& node, const std::string& what);  // finite, 0 or more
  std::optional<long long> integer(const YAML::Node& node, const std::string& what, long long minimum,
                                   long long maximum);

  // Throws YamlFileError-derived `Error` with every problem reported for this file, if there was one.
  template <class Error>
  void throw_if_errors() const {
    if (errors_ > 0) throw Error(own_problems());
  }

 private:
  std::vector<Diagnostic> own_problems() const;

  std::string file_;
  std::vector<Diagnostic>& diagnostics_;
  std::size_t first_ = 0;  // this file's first diagnostic
  std::size_t errors_ = 0;
};

}  // namespace collshim
