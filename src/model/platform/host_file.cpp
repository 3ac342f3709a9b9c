#include "model/platform/host_file.hpp"

#include <charconv>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>

namespace collshim::model {

namespace {

struct Token {
  std::string text;
  std::size_t column;  // 1-based
};

std::vector<Token> tokens_of(const std::string& line) {
  std::vector<Token> tokens;
  std::size_t at = 0;
  while (at < line.size()) {
    while (at < line.size() && (line[at] == ' ' || line[at] == '\t' || line[at] == '\r')) ++at;
    if (at >= line.size()) break;
    const std::size_t start = at;
    while (at < line.size() && line[at] != ' ' && line[at] != '\t' && line[at] != '\r') ++at;
    tokens.push_back({line.substr(start, at - start), start + 1});
  }
  return tokens;
}

int positive(std::string_view text) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size() && value >= 1 ? value : 0;
}

}  // namespace

std::vector<std::string> read_host_file_text(const std::string& text, const std::string& source_name,
                                             const std::string& node_pattern) {
  std::optional<std::regex> pattern;
  if (!node_pattern.empty()) {
    try {
      pattern.emplace(node_pattern);
    } catch (const std::regex_error& e) {
      throw HostFileError("--node-pattern '" + node_pattern + "': not a regular expression (" + e.what() + ")");
    }
  }
  std::vector<std::string> slots;
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (const std::size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    const std::vector<Token> tokens = tokens_of(line);
    if (tokens.empty()) continue;
    auto fail = [&](std::size_t column, const std::string& what) {
      return HostFileError(source_name + ":" + std::to_string(number) + ":" + std::to_string(column) + ": " + what);
    };
    std::string host = tokens[0].text;
    int count = 1;
    if (const std::size_t colon = host.find(':'); colon != std::string::npos) {  // MPICH: host:N
      count = positive(std::string_view(host).substr(colon + 1));
      if (count == 0)
        throw fail(tokens[0].column + colon + 1,
                   "bad slot count '" + host.substr(colon + 1) + "', expected an integer, 1 or more");
      host.resize(colon);
    }
    for (std::size_t i = 1; i < tokens.size(); ++i) {
      const Token& token = tokens[i];
      if (token.text.starts_with("slots=")) {
        count = positive(std::string_view(token.text).substr(6));
        if (count == 0)
          throw fail(token.column + 6, "bad slot count '" + token.text.substr(6) + "', expected an integer, 1 or more");
      } else if (!token.text.starts_with("max_slots=")) {
        throw fail(token.column, "unexpected '" + token.text + "', expected slots=N (or host:N, or a host name alone)");
      }
    }
    std::string node = host;
    if (pattern) {
      std::smatch match;
      if (!std::regex_match(host, match, *pattern) || match.size() < 2)
        throw fail(tokens[0].column, "host '" + host + "' does not match --node-pattern '" + node_pattern +
                                         "' (with a group naming its node)");
      node = match[1].str();
    }
    slots.insert(slots.end(), static_cast<std::size_t>(count), node);
  }
  return slots;
}

std::vector<std::string> read_host_file(const std::string& path, const std::string& node_pattern) {
  std::ifstream in(path);
  if (!in) throw HostFileError(path + ": cannot read the file");
  std::ostringstream text;
  text << in.rdbuf();
  return read_host_file_text(text.str(), path, node_pattern);
}

std::vector<int> node_of_rank_from_slots(const std::vector<std::string>& slots, int procs,
                                         const std::string& source_name) {
  if (static_cast<int>(slots.size()) < procs)
    throw HostFileError(source_name + ": " + std::to_string(slots.size()) + " slots, fewer than the " +
                        std::to_string(procs) + " processes asked for");
  std::map<std::string, int> index_of;
  std::vector<int> node_of_rank;
  for (int rank = 0; rank < procs; ++rank) {
    const auto [at, added] =
        index_of.try_emplace(slots[static_cast<std::size_t>(rank)], static_cast<int>(index_of.size()));
    node_of_rank.push_back(at->second);
  }
  return node_of_rank;
}

}  // namespace collshim::model
