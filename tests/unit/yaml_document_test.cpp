// The one YAML reading layer (selector/yaml_document.hpp) under its three readers: rule tables,
// platform descriptions and the libraries' decision tables each report every problem of a file, each
// as file:line:column, and take the same booleans.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/library_decisions.hpp"
#include "model/platform.hpp"
#include "selector/rule_table.hpp"
#include "selector/yaml_document.hpp"

namespace collshim {
namespace {

std::vector<Diagnostic> rule_problems(const std::string& text) {
  std::vector<Diagnostic> diagnostics;
  RuleTable table;
  table.add_file_text(text, "rules.yaml", diagnostics);
  return diagnostics;
}

std::vector<Diagnostic> platform_problems(const std::string& text) {
  try {
    model::parse_platform(text, "platform.yaml");
  } catch (const model::PlatformError& e) {
    return e.problems();
  }
  return {};
}

std::vector<Diagnostic> library_problems(const std::string& text) {
  try {
    model::parse_library_decisions(text, "library.yaml");
  } catch (const model::LibraryTableError& e) {
    return e.problems();
  }
  return {};
}

// The problems' "file:line:column: message" texts.
std::vector<std::string> texts(const std::vector<Diagnostic>& problems) {
  std::vector<std::string> result;
  for (const Diagnostic& problem : problems) result.push_back(problem.text());
  return result;
}

TEST(YamlDocument, ARuleTableReportsEveryProblem) {
  const auto found =
      texts(rule_problems("version: 1\n"
                          "rules:\n"
                          "  - collective: allgather\n"
                          "    when: { procs: 64-8, oversubscribed: maybe }\n"
                          "    use: ring\n"
                          "  - collective: allgathr\n"
                          "    use: ring\n"));
  EXPECT_EQ(found, (std::vector<std::string>{
                       "rules.yaml:4:20: impossible range '64-8' for procs: the low end is above the high end",
                       "rules.yaml:4:42: bad value 'maybe' for 'oversubscribed', expected true or false",
                       "rules.yaml:6:17: unknown collective 'allgathr', expected " + collective_names(),
                   }));
}

const std::string good_channel = "  transfer: [{tau: 1, latency_us: 1, gbytes_per_s: 1}]\n";

TEST(YamlDocument, APlatformDescriptionReportsEveryProblem) {
  const auto found =
      texts(platform_problems("name: two\n"
                              "probe_us: -1\n"
                              "shm:\n"
                              "  overhead_us: fast\n" +
                              good_channel +
                              "net:\n"
                              "  transfer: [{tau: 4, latency_us: 1, gbytes_per_s: 1}, {tau: 2, "
                              "latency_us: 1, gbytes_per_s: 1}]\n"
                              "local_copies_free: maybe\n"));
  EXPECT_EQ(found, (std::vector<std::string>{
                       "platform.yaml:2:11: bad value '-1' for 'probe_us', expected a number, 0 or more",
                       "platform.yaml:4:16: bad value 'fast' for 'overhead_us', expected a number, 0 or more",
                       "platform.yaml:7:56: transfer points of channel 'net' must have ascending tau (2 after 4)",
                       "platform.yaml:8:20: bad value 'maybe' for 'local_copies_free', expected true or false",
                   }));
}

TEST(YamlDocument, ALibraryTableReportsEveryProblem) {
  const auto found =
      texts(library_problems("library: bad\n"
                             "collectives:\n"
                             "  allgather:\n"
                             "    source: here\n"
                             "    rules:\n"
                             "      - {p_even: maybe, stand_in: ring}\n"
                             "      - {p: {below: 12*q}, stand_in: ring}\n"
                             "      - {p: 2, run: ring}\n"
                             "  alltoall:\n"
                             "    rules: [{stand_in: pairwise}]\n"));
  EXPECT_EQ(found, (std::vector<std::string>{
                       "library.yaml:6:18: bad value 'maybe' for 'p_even', expected true or false",
                       "library.yaml:7:21: bad threshold '12*q' for 'p.below', expected N, N*p or N*pof2",
                       "library.yaml:8:21: run 'ring': no such algorithm under 'algorithms'",
                       "library.yaml:9:3: collective 'alltoall' needs 'source': the library's file and function it "
                       "follows",
                       "library.yaml:1:1: missing 'source': repository, tag and files the tables come from",
                   }));
}

// A YamlFileError's what() carries every problem, one a line.
TEST(YamlDocument, AnErrorSaysEveryProblemOneALine) {
  try {
    model::parse_platform("probe_us: x\nshm: 1\n", "p.yaml");
    FAIL() << "accepted";
  } catch (const model::PlatformError& e) {
    EXPECT_EQ(std::string(e.what()),
              "p.yaml:1:11: bad value 'x' for 'probe_us', expected a number, 0 or more\n"
              "p.yaml:2:6: channel 'shm' must be a map\n"
              "p.yaml:1:1: missing 'net', the channel between nodes");
  }
}

// The same words are booleans in every file: YAML 1.2's core schema, and nothing else.
TEST(YamlDocument, EveryReaderTakesTheSameBooleans) {
  const std::vector<std::pair<std::string, bool>> accepted{{"true", true},   {"True", true},   {"TRUE", true},
                                                           {"false", false}, {"False", false}, {"FALSE", false}};
  const std::vector<std::string> refused{"yes", "no", "on", "off", "y", "n", "1", "0", "maybe", "tRUE"};
  const auto rule_file = [](const std::string& word) {
    return "version: 1\nrules:\n  - collective: allgather\n    when: { oversubscribed: " + word + " }\n    use: ring\n";
  };
  const auto platform_file = [](const std::string& word) {
    return "local_copies_free: " + word + "\nshm:\n" + good_channel + "net:\n" + good_channel;
  };
  const auto library_file = [](const std::string& word) {
    return "library: t\nsource: here\ncollectives:\n  allgather:\n    source: here\n    rules:\n      - {p_even: " +
           word + ", stand_in: ring}\n      - {stand_in: ring}\n";
  };
  for (const auto& [word, value] : accepted) {
    EXPECT_EQ(parse_yaml_bool(word), value) << word;
    std::vector<Diagnostic> diagnostics;
    RuleTable table;
    table.add_file_text(rule_file(word), "rules.yaml", diagnostics);
    EXPECT_TRUE(diagnostics.empty()) << word;
    ASSERT_EQ(table.rules().size(), 1u) << word;
    EXPECT_EQ(table.rules()[0].when.oversubscribed, value) << word;
    EXPECT_EQ(model::parse_platform(platform_file(word), "platform.yaml").local_copies_free, value) << word;
    EXPECT_TRUE(library_problems(library_file(word)).empty()) << word;
  }
  for (const std::string& word : refused) {
    EXPECT_FALSE(parse_yaml_bool(word)) << word;
    const std::string message = "bad value '" + word + "' for '";
    const auto rule = rule_problems(rule_file(word));
    ASSERT_EQ(rule.size(), 1u) << word;
    EXPECT_EQ(rule[0].message, message + "oversubscribed', expected true or false");
    const auto platform = platform_problems(platform_file(word));
    ASSERT_EQ(platform.size(), 1u) << word;
    EXPECT_EQ(platform[0].message, message + "local_copies_free', expected true or false");
    const auto library = library_problems(library_file(word));
    ASSERT_EQ(library.size(), 1u) << word;
    EXPECT_EQ(library[0].message, message + "p_even', expected true or false");
  }
}

}  // namespace
}  // namespace collshim
