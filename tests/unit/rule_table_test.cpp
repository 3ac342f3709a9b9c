// Rule-table parsing: every error kind names file:line:column and says what was expected; ranges
// match at their boundaries; shadowed rules are warnings.
#include <gtest/gtest.h>

#include "selector/rule_table.hpp"

namespace collshim {
namespace {

std::vector<RuleDiagnostic> problems(const std::string& text, RuleTable* table_out = nullptr) {
  std::vector<RuleDiagnostic> diagnostics;
  RuleTable table;
  table.add_file_text(text, "site.yaml", diagnostics);
  table.check_shadowed(diagnostics);
  if (table_out) *table_out = std::move(table);
  return diagnostics;
}

// Exactly one error, at line:column, whose text contains `what`.
void expect_error(const std::string& yaml, int line, int column, const std::string& what) {
  const auto found = problems(yaml);
  ASSERT_EQ(found.size(), 1u) << yaml << (found.empty() ? "" : "\nfirst: " + found[0].text());
  EXPECT_TRUE(found[0].error);
  EXPECT_EQ(found[0].where.file, "site.yaml");
  EXPECT_EQ(found[0].where.line, line) << found[0].text();
  EXPECT_EQ(found[0].where.column, column) << found[0].text();
  EXPECT_NE(found[0].text().find(what), std::string::npos) << found[0].text();
  EXPECT_EQ(found[0].text().rfind("site.yaml:" + std::to_string(line) + ":" + std::to_string(column) + ": ", 0), 0u);
}

const std::string head = "version: 1\nrules:\n";

TEST(RuleTable, ParsesTheDesignExample) {
  RuleTable table;
  const auto found = problems(head +
                                  "  - collective: allgather\n"
                                  "    when:\n"
                                  "      procs: 64-\n"
                                  "      block_bytes: 1KiB-256KiB\n"
                                  "      mapping: sequential\n"
                                  "      nodes: 2-\n"
                                  "    use: ring\n"
                                  "  - collective: alltoallv\n"
                                  "    when: { block_bytes: -1KiB, oversubscribed: true, ppn: 4 }\n"
                                  "    use: { algorithm: pairwise }\n",
                              &table);
  ASSERT_TRUE(found.empty()) << found[0].text();
  ASSERT_EQ(table.rules().size(), 2u);
  const Rule& first = table.rules()[0];
  EXPECT_EQ(first.collective, Collective::allgather);
  EXPECT_EQ(first.where.line, 3);
  EXPECT_EQ(first.where.column, 5);
  EXPECT_EQ(first.when.procs->low, 64);
  EXPECT_EQ(first.when.block_bytes->low, 1024);
  EXPECT_EQ(first.when.block_bytes->high, 256 * 1024);
  EXPECT_EQ(first.use.algorithm->name, "ring");
  EXPECT_TRUE(table.tests_block_bytes(Collective::alltoallv));
  EXPECT_FALSE(table.tests_block_bytes(Collective::allgatherv));
}

TEST(RuleTable, RangesMatchAtTheirBoundaries) {
  RuleTable table;
  ASSERT_TRUE(
      problems(head + "  - { collective: allgather, when: { procs: 4-8, block_bytes: 1KiB-2KiB }, use: ring }\n",
               &table)
          .empty());
  const RuleConditions& when = table.rules()[0].when;
  CallFacts f{Collective::allgather, 4, 1024, MappingClass::sequential, 1, 4, false};
  EXPECT_TRUE(when.matches(f));
  f.procs = 8;
  f.block_bytes = 2048;
  EXPECT_TRUE(when.matches(f));
  f.procs = 3;
  EXPECT_FALSE(when.matches(f));
  f.procs = 9;
  EXPECT_FALSE(when.matches(f));
  f.procs = 8;
  f.block_bytes = 1023;
  EXPECT_FALSE(when.matches(f));
  f.block_bytes = 2049;
  EXPECT_FALSE(when.matches(f));
}

TEST(RuleTable, SizesAndSingleValues) {
  EXPECT_EQ(parse_byte_size("512"), 512);
  EXPECT_EQ(parse_byte_size("512B"), 512);
  EXPECT_EQ(parse_byte_size("4KiB"), 4096);
  EXPECT_EQ(parse_byte_size("1MiB"), 1 << 20);
  EXPECT_EQ(parse_byte_size("2GiB"), 2LL << 30);
  EXPECT_FALSE(parse_byte_size("4KB"));
  EXPECT_FALSE(parse_byte_size("4k"));
  EXPECT_FALSE(parse_byte_size("KiB"));
  RuleTable table;
  ASSERT_TRUE(problems(head + "  - { collective: allgather, when: { procs: 6 }, use: ring }\n", &table).empty());
  EXPECT_EQ(table.rules()[0].when.procs->low, 6);
  EXPECT_EQ(table.rules()[0].when.procs->high, 6);
}

TEST(RuleTable, AcceptsEveryCollectiveOfTheTable) {
  for (const CollectiveInfo& info : collectives) {
    RuleTable table;
    const auto found = problems(head + "  - { collective: " + std::string(info.name) + ", use: native }\n", &table);
    ASSERT_TRUE(found.empty()) << found[0].text();
    ASSERT_EQ(table.rules().size(), 1u);
    EXPECT_EQ(table.rules()[0].collective, info.collective);
  }
  expect_error(head + "  - { use: native }\n", 3, 5, "rule has no 'collective', expected " + collective_names());
}

// text() writes the conditions in rule-file syntax: parsed again, they are the same conditions.
TEST(RuleTable, ConditionTextParsesBack) {
  for (const std::string when :
       {"{}", "{ procs: 4-8 }", "{ block_bytes: -1KiB, nodes: 2- }",
        "{ procs: 6, block_bytes: 512-2MiB, mapping: [cyclic, irregular], nodes: 2-3, ppn: -4, "
        "oversubscribed: true }",
        "{ mapping: sequential, oversubscribed: false }"}) {
    RuleTable table;
    const auto found = problems(head + "  - { collective: allgather, when: " + when + ", use: ring }\n", &table);
    ASSERT_TRUE(found.empty()) << when << ": " << found[0].text();
    EXPECT_EQ(table.rules()[0].when.text(), when);
  }
}

TEST(RuleTable, MalformedYaml) { expect_error(head + "  - collective: [allgather\n", 4, 1, "malformed YAML"); }

TEST(RuleTable, UnknownTopLevelKey) {
  expect_error("version: 1\nrule:\n  - {}\nrules: []\n", 2, 1, "unknown key 'rule', expected 'version' or 'rules'");
}

TEST(RuleTable, BadOrMissingVersion) {
  expect_error("version: 2\nrules: []\n", 1, 10, "unsupported version '2', expected 1");
  expect_error("rules: []\n", 1, 1, "missing 'version: 1'");
}

TEST(RuleTable, RulesNotAList) { expect_error("version: 1\nrules: ring\n", 2, 8, "'rules' must be a list"); }

TEST(RuleTable, UnknownRuleKey) {
  expect_error(head + "  - collective: allgather\n    usе: ring\n    use: ring\n", 4, 5,
               "unknown key 'usе' in rule, expected collective, when, use or reorder");
}

TEST(RuleTable, ReorderIsABooleanOfAllreduceRules) {
  expect_error(head + "  - collective: allreduce\n    reorder: sometimes\n    use: ring\n", 4, 14,
               "bad value 'sometimes' for 'reorder', expected true or false");
  expect_error(head + "  - collective: allgather\n    reorder: true\n    use: ring\n", 4, 5,
               "'reorder' applies to allreduce rules only");
  std::vector<RuleDiagnostic> diagnostics;
  RuleTable table;
  table.add_file_text(head +
                          "  - { collective: allreduce, reorder: true, use: ring }\n"
                          "  - { collective: allreduce, reorder: false, use: ring }\n"
                          "  - { collective: allreduce, use: ring }\n",
                      "r.yaml", diagnostics);
  ASSERT_EQ(table.rules().size(), 3u);
  EXPECT_TRUE(table.rules()[0].reorder);
  EXPECT_FALSE(table.rules()[1].reorder);
  EXPECT_FALSE(table.rules()[2].reorder);
}

TEST(RuleTable, UnknownCollective) {
  expect_error(head + "  - collective: reduce\n    use: ring\n", 3, 17,
               "unknown collective 'reduce', expected " + collective_names());
}

TEST(RuleTable, MissingUse) {
  expect_error(head + "  - collective: allgather\n    when: { procs: 4 }\n", 3, 5, "rule has no 'use'");
}

TEST(RuleTable, UnknownCondition) {
  expect_error(
      head + "  - collective: allgather\n    when: { cores: 4 }\n    use: ring\n", 4, 13,
      "unknown condition 'cores', expected library, procs, block_bytes, mapping, nodes, ppn or oversubscribed");
}

TEST(RuleTable, UnknownAlgorithm) {
  expect_error(head + "  - collective: allgather\n    use: brick\n", 4, 10,
               "unknown algorithm 'brick' for allgather; expected one of: " + algorithm_names(Collective::allgather));
}

TEST(RuleTable, AlgorithmOfAnotherCollective) {
  expect_error(head + "  - collective: alltoallv\n    use: ring\n", 4, 10, "unknown algorithm 'ring' for alltoallv");
}

TEST(RuleTable, UnknownParameter) {
  expect_error(head + "  - collective: allgather\n    use: { algorithm: ring, radix: 4 }\n", 4, 10,
               "unknown parameter 'radix' for ring");
}

TEST(RuleTable, UseMapWithoutAlgorithm) {
  expect_error(head + "  - collective: allgather\n    use: { radix: 4 }\n", 4, 10, "'use' map has no 'algorithm'");
}

TEST(RuleTable, BadUnit) {
  expect_error(head + "  - collective: allgather\n    when: { block_bytes: 4KB- }\n    use: ring\n", 4, 26,
               "bad range '4KB-' for block_bytes, expected a-b, a-, -b or a, with sizes like 512, 512B, 4KiB");
}

TEST(RuleTable, BadRangeSyntax) {
  expect_error(head + "  - collective: allgather\n    when: { procs: four }\n    use: ring\n", 4, 20,
               "bad range 'four' for procs");
  expect_error(head + "  - collective: allgather\n    when: { procs: \"-\" }\n    use: ring\n", 4, 20,
               "bad range '-' for procs");
}

TEST(RuleTable, ImpossibleRange) {
  expect_error(head + "  - collective: allgather\n    when: { procs: 64-8 }\n    use: ring\n", 4, 20,
               "impossible range '64-8' for procs: the low end is above the high end");
  expect_error(head + "  - collective: allgather\n    when: { nodes: -0 }\n    use: ring\n", 4, 20,
               "impossible range '-0' for nodes: values start at 1");
}

TEST(RuleTable, UnknownMapping) {
  expect_error(head + "  - collective: allgather\n    when: { mapping: [sequential, roundrobin] }\n    use: ring\n", 4,
               35, "unknown mapping 'roundrobin', expected single_node, sequential, cyclic or irregular");
}

TEST(RuleTable, BadOversubscribed) {
  expect_error(head + "  - collective: allgather\n    when: { oversubscribed: sometimes }\n    use: ring\n", 4, 29,
               "bad value 'sometimes' for 'oversubscribed', expected true or false");
}

TEST(RuleTable, DuplicateKey) {
  expect_error(head + "  - collective: allgather\n    use: ring\n    use: native\n", 5, 5, "key 'use' given twice");
}

TEST(RuleTable, UnreadableFile) {
  std::vector<RuleDiagnostic> diagnostics;
  RuleTable table;
  table.add_file("/nonexistent/rules.yaml", diagnostics);
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_EQ(diagnostics[0].text(), "/nonexistent/rules.yaml:1:1: cannot read the rule file");
}

TEST(RuleTable, ShadowedRulesAreWarnings) {
  const auto found = problems(head +
                              "  - { collective: allgather, when: { block_bytes: -4KiB }, use: native }\n"
                              "  - { collective: allgather, when: { block_bytes: 1KiB-2KiB, procs: 8- }, use: ring }\n"
                              "  - { collective: allgatherv, when: { block_bytes: 1KiB-2KiB }, use: ring }\n"
                              "  - { collective: allgather, when: { block_bytes: 2KiB-8KiB }, use: ring }\n");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_FALSE(found[0].error);
  EXPECT_EQ(found[0].text(),
            "site.yaml:4:5: rule can never match: every call it matches is taken first by the rule at site.yaml:3:5");
}

TEST(RuleTable, MappingListsAndCatchAllsShadow) {
  const auto found = problems(head +
                              "  - { collective: allgather, when: { mapping: [sequential, cyclic] }, use: native }\n"
                              "  - { collective: allgather, when: { mapping: cyclic, nodes: 4- }, use: ring }\n"
                              "  - { collective: allgather, when: { mapping: irregular }, use: ring }\n"
                              "  - { collective: allgather, use: native }\n"
                              "  - { collective: allgather, when: { oversubscribed: true }, use: ring }\n");
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].where.line, 4);
  EXPECT_EQ(found[1].where.line, 7);
}

}  // namespace
}  // namespace collshim

namespace collshim {
namespace {

// mismatch() explains exactly the calls that matches() rejects.
TEST(RuleTable, ExplanationsAgreeWithMatching) {
  RuleTable table;
  ASSERT_TRUE(problems(head + "  - { collective: allgather, when: { procs: 4-8, block_bytes: 1KiB-, mapping: "
                              "[cyclic, irregular], nodes: 2-, ppn: -4, oversubscribed: false }, use: ring }\n",
                       &table)
                  .empty());
  const RuleConditions& when = table.rules()[0].when;
  EXPECT_EQ(when.text(),
            "{ procs: 4-8, block_bytes: 1KiB-, mapping: [cyclic, irregular], nodes: 2-, ppn: -4, "
            "oversubscribed: false }");
  int matched = 0;
  for (int procs : {3, 4, 8, 9})
    for (long long bytes : {1023LL, 1024LL})
      for (MappingClass mapping : {MappingClass::sequential, MappingClass::cyclic, MappingClass::irregular})
        for (int nodes : {1, 2})
          for (int ppn : {4, 5})
            for (bool over : {false, true}) {
              const CallFacts f{Collective::allgather, procs, bytes, mapping, nodes, ppn, over};
              EXPECT_EQ(when.matches(f), when.mismatch(f, {}).empty());
              matched += when.matches(f);
            }
  EXPECT_EQ(matched, 2 * 1 * 2 * 1 * 1 * 1);
  EXPECT_EQ(when.mismatch({Collective::allgather, 6, 512, MappingClass::cyclic, 2, 2, false}, {}),
            "block_bytes 512 is outside 1KiB-");
}

}  // namespace
}  // namespace collshim

namespace collshim {
namespace {

JobFacts job(const std::string& name, std::vector<int> version) { return {{name, std::move(version), "", ""}}; }

TEST(RuleTable, LibraryConditionTakesANameAVersionRangeOrAList) {
  RuleTable table;
  ASSERT_TRUE(
      problems(head +
                   "  - { collective: allgather, when: { library: \"ompi 4.1-5.0\", procs: 4 }, use: ring }\n"
                   "  - { collective: allgather, when: { library: [smpi-ompi 3.32, mpich], procs: 4 }, use: bruck }\n"
                   "  - collective: allgather\n"
                   "    when:\n"
                   "      library: ompi 5.1-\n"
                   "      procs: 4\n"
                   "    use: sparbit\n",
               &table)
          .empty());
  const auto& rules = table.rules();
  EXPECT_EQ(rules[0].when.text(), "{ library: \"ompi 4.1-5.0\", procs: 4 }");
  EXPECT_EQ(rules[1].when.text(), "{ library: [\"smpi-ompi 3.32\", mpich], procs: 4 }");
  EXPECT_EQ(rules[2].when.text(), "{ library: \"ompi 5.1-\", procs: 4 }");
  // Both ends of the range, with the prefix rule: 4.1 is 4.1.0, 5.0 is any 5.0.x.
  EXPECT_FALSE(rules[0].when.matches(job("ompi", {4, 0, 7})));
  EXPECT_TRUE(rules[0].when.matches(job("ompi", {4, 1, 0})));
  EXPECT_TRUE(rules[0].when.matches(job("ompi", {5, 0, 10})));
  EXPECT_FALSE(rules[0].when.matches(job("ompi", {5, 1, 0})));
  EXPECT_TRUE(rules[2].when.matches(job("ompi", {5, 1, 0})));
  EXPECT_FALSE(rules[0].when.matches(JobFacts{}));  // unidentified: no library condition matches
  // A list matches any of its libraries.
  EXPECT_TRUE(rules[1].when.matches(job("mpich", {4, 0, 2})));
  EXPECT_TRUE(rules[1].when.matches(job("smpi-ompi", {3, 32})));
  EXPECT_FALSE(rules[1].when.matches(job("smpi-mpich", {3, 32})));
  EXPECT_FALSE(rules[1].when.matches(job("smpi-ompi", {3, 36})));
  // The per-call test never looks at the library: the selector settles it once.
  const CallFacts call{Collective::allgather, 4, 64, MappingClass::single_node, 1, 4, false};
  EXPECT_TRUE(rules[0].when.matches(call));
  EXPECT_EQ(rules[0].when.mismatch(call, job("ompi", {4, 1, 4})), "");
  // Rules written back parse to the same conditions.
  RuleTable again;
  ASSERT_TRUE(problems(head + rule_yaml(Collective::allgather, rules[1].when, "bruck", {"evidence"}), &again).empty());
  EXPECT_EQ(again.rules()[0].when.text(), rules[1].when.text());
}

TEST(RuleTable, BadLibraryValuesNameTheirPlace) {
  expect_error(head + "  - collective: allgather\n    when: { library: openmpi }\n    use: ring\n", 4, 22,
               "unknown library 'openmpi', expected ompi, mpich, smpi-ompi, smpi-mpich, smpi-mvapich2, smpi-impi or "
               "smpi-default");
  expect_error(head + "  - collective: allgather\n    when: { library: [mpich, ompi 4.x] }\n    use: ring\n", 4, 30,
               "bad version range '4.x' for library ompi, expected VERSION, LOW-HIGH, LOW- or -HIGH");
  expect_error(head + "  - collective: allgather\n    when: { library: \"ompi 5.0-4.1\" }\n    use: ring\n", 4, 22,
               "impossible version range '5.0-4.1' for library ompi: the low end is above the high end");
  expect_error(head + "  - collective: allgather\n    when: { library: [] }\n    use: ring\n", 4, 22,
               "empty library list, expected ompi, mpich");
  expect_error(head + "  - collective: allgather\n    when: { library: { name: ompi } }\n    use: ring\n", 4, 22,
               "bad library a map, expected a name with an optional version range");
  expect_error(
      head + "  - collective: allgather\n    when: { libary: ompi }\n    use: ring\n", 4, 13,
      "unknown condition 'libary', expected library, procs, block_bytes, mapping, nodes, ppn or oversubscribed");
}

TEST(RuleTable, LibraryConditionsShadowOnlyWhereTheyCover) {
  const auto found =
      problems(head +
               "  - { collective: allgather, when: { library: \"ompi 4.1-5.0\", procs: 4 }, use: ring }\n"
               "  - { collective: allgather, when: { library: \"ompi 4.1.6\", procs: 4 }, use: bruck }\n"
               "  - { collective: allgather, when: { library: ompi, procs: 4 }, use: bruck }\n"
               "  - { collective: allgather, when: { library: mpich, procs: 4 }, use: bruck }\n"
               "  - { collective: allgather, when: { procs: 4 }, use: sparbit }\n"
               "  - { collective: allgather, when: { library: [mpich, smpi-ompi], procs: 4 }, use: ring }\n"
               "  - { collective: allgather, when: { procs: 8 }, use: sparbit }\n"
               "  - { collective: allgather, when: { library: smpi-ompi, procs: 8 }, use: ring }\n");
  // 4.1.6 is inside 4.1-5.0 (line 4); `ompi` alone also matches other versions (line 5 stays); the
  // rule without a library takes every library (lines 8 and 10).
  ASSERT_EQ(found.size(), 3u) << found[0].text();
  EXPECT_EQ(found[0].where.line, 4);
  EXPECT_EQ(found[0].text(),
            "site.yaml:4:5: rule can never match: every call it matches is taken first by the rule at site.yaml:3:5");
  EXPECT_EQ(found[1].where.line, 8);
  EXPECT_EQ(found[2].where.line, 10);
}

TEST(RuleTable, ExplanationsNameTheLibraryFirst) {
  RuleTable table;
  ASSERT_TRUE(
      problems(head + "  - { collective: allgather, when: { library: \"ompi 4.1-5.0\", procs: 4-8 }, use: ring }\n",
               &table)
          .empty());
  const RuleConditions& when = table.rules()[0].when;
  const CallFacts call{Collective::allgather, 16, 64, MappingClass::single_node, 1, 16, false};
  EXPECT_EQ(when.mismatch(call, job("mpich", {4, 0, 2})), "library mpich 4.0.2 is not \"ompi 4.1-5.0\"");
  EXPECT_EQ(when.mismatch(call, job("ompi", {4, 1, 4})), "procs 16 is outside 4-8");
  EXPECT_EQ(when.mismatch(call, JobFacts{{"", {}, "", "Intel(R) MPI Library 2021.6"}}),
            "library unidentified (Intel(R) MPI Library 2021.6) is not \"ompi 4.1-5.0\"");
  // As for every condition, the explanation agrees with matching.
  for (const auto& facts : {job("ompi", {4, 0}), job("ompi", {4, 1}), job("ompi", {5, 0, 3}), job("ompi", {5, 1}),
                            job("mpich", {4, 1}), JobFacts{}}) {
    CallFacts inside = call;
    inside.procs = 4;
    EXPECT_EQ(when.matches(facts), when.mismatch(inside, facts).empty()) << facts.library.text();
  }
}

}  // namespace
}  // namespace collshim
