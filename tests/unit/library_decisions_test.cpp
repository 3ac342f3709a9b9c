// The MPI libraries' own decisions as data (config/libraries/*.yaml) and their interpreter: every shipped file parses,
// the rule semantics (first match, nested lists, algorithms, labels, decide_as), and every problem of a malformed file
// reported with file:line:column.
#include <gtest/gtest.h>

#include <set>

#include "algorithms/algorithm_spec.hpp"
#include "algorithms/registry.hpp"
#include "model/library_decisions.hpp"

namespace collshim::model {
namespace {

NativeDecision decide(std::string_view tables, Collective collective, const LibraryFacts& facts) {
  const LibraryDecisions* found = library_decisions(tables);
  if (found == nullptr) throw std::logic_error("no tables " + std::string(tables));
  return native_decision(*found, collective, facts);
}

// "label -> stand-in" or "label: not modelled", the whole decision in one comparable line.
std::string runs(std::string_view tables, Collective collective, LibraryFacts facts) {
  if (collective == Collective::allreduce) facts.element_bytes = 8;  // the model's int64 vector
  const NativeDecision decision = decide(tables, collective, facts);
  if (decision.stand_in.empty()) return decision.library_algorithm + ": not modelled";
  std::string text = decision.library_algorithm + " -> ";
  if (decision.costed_as != collective) text += std::string(collective_name(decision.costed_as)) + " ";
  return text + decision.stand_in;
}

LibraryFacts call(int p, long long bytes, LibraryPlacement placement = {}) { return {p, bytes, placement}; }

// p ranks on nodes of `per_node` each, consecutive.
LibraryPlacement nodes_of(int per_node) { return {per_node, true, 0}; }

TEST(LibraryDecisions, EveryShippedFileParsesAndCoversEveryCollective) {
  const std::vector<std::string_view> names = library_decisions_names();
  const std::set<std::string_view> shipped(names.begin(), names.end());
  for (const std::string_view expected : {"smpi-3.32-ompi", "smpi-3.32-mpich", "smpi-3.32-mvapich2", "smpi-3.32-impi"})
    EXPECT_TRUE(shipped.contains(expected)) << expected;
  for (const std::string_view name : names) {
    const LibraryDecisions* tables = library_decisions(name);
    ASSERT_NE(tables, nullptr) << name;
    EXPECT_EQ(tables->name(), name);
    EXPECT_FALSE(tables->description().empty()) << name;
    EXPECT_FALSE(tables->source().empty()) << name;
    for (const CollectiveInfo& info : collectives) EXPECT_TRUE(tables->covers(info.collective)) << name << " " << info.name;
  }
  EXPECT_EQ(library_decisions("ompi-4.0"), nullptr);
  EXPECT_EQ(library_decisions_alias("ompi"), "smpi-3.32-ompi");
  EXPECT_EQ(library_decisions_alias("impi"), "smpi-3.32-impi");
  EXPECT_EQ(library_decisions_alias("smpi-3.32-ompi"), "smpi-3.32-ompi");
}

// Every decision of every table names what the library runs or says why not, and every stand-in is a schedule the
// model has and, for collshim's algorithms, eligible at that p.
TEST(LibraryDecisions, EveryDecisionHasAnEligibleStandInOrAReason) {
  for (const std::string_view name : library_decisions_names()) {
    for (int p = 2; p <= 4200; p += p < 140 ? 1 : 97) {
      for (long long bytes = 1; bytes <= (4 << 20); bytes *= 4) {
        for (const CollectiveInfo& info : collectives) {
          for (const LibraryPlacement placement : {LibraryPlacement{1, true, 0}, LibraryPlacement{1 << (p % 5), p % 2 == 0, 0},
                                                   LibraryPlacement{p, true, 1}, LibraryPlacement{1, false, 3}}) {
            LibraryFacts facts = call(p, bytes - 1, placement);
            facts.commutative = p % 3 != 0;
            const NativeDecision decision = decide(name, info.collective, facts);
            const std::string where = std::string(name) + " " + std::string(info.name) + " p = " + std::to_string(p) +
                                      ", " + std::to_string(bytes - 1) + " B";
            if (decision.stand_in.empty()) {
              EXPECT_FALSE(decision.why_not.empty()) << where;
              EXPECT_EQ(decision.why_not.find("no rule"), std::string::npos) << where << ": " << decision.why_not;
              continue;
            }
            EXPECT_FALSE(decision.library_algorithm.empty()) << where;
            if (is_library_schedule(decision.stand_in)) continue;
            const SpecParseResult parsed = parse_algorithm_spec(decision.stand_in, decision.costed_as);
            ASSERT_TRUE(parsed.choice) << where << ": " << parsed.error;
            const auto& eligible = parsed.choice->algorithm->eligible;
            EXPECT_TRUE(!eligible || eligible(p, parsed.choice->params)) << where << ": " << decision.stand_in;
          }
        }
      }
    }
  }
}

// Intel MPI's Alltoallv in SMPI tests the constant size 1, so only p and the ranks per node decide.
TEST(LibraryDecisions, SmpiIntelMpiAlltoallvIgnoresTheSize) {
  EXPECT_EQ(runs("smpi-3.32-impi", Collective::alltoallv, call(32, 1 << 20, nodes_of(8))), "plum (alltoallv__bruck): not modelled");
  EXPECT_EQ(runs("smpi-3.32-impi", Collective::alltoallv, call(16, 1 << 20, nodes_of(8))), "isend_irecv (alltoallv__ompi_basic_linear): not modelled");
  EXPECT_EQ(runs("smpi-3.32-impi", Collective::alltoallv, call(32, 1 << 20, nodes_of(16))), "isend_irecv (alltoallv__ompi_basic_linear): not modelled");
}

// The interpreter: first match wins, a nested list decides when its conditions hold, an algorithm's variants pick the
// stand-in, the innermost label names what runs, thresholds scale with p, decide_as follows another table.
constexpr const char* small_table = R"yaml(library: test
description: a test
source: here
collectives:
  allgather:
    source: nowhere
    rules:
      - {p: 2, run: pair}
      - p: {below: 16}
        rules:
          - {bytes: {up_to: 1024}, run: doubling}
          - {total_bytes: {below: 1024*p}, run: doubling}
      - {ranks_per_node: {in: [4, 8]}, balanced: true, label: "by nodes", stand_in: ring}
      - {nodes: {at_least: 3}, blocked: false, not_modelled: "scattered nodes"}
      - {ranks_per_node: {not_in: [1]}, decide_as: smpi-3.32-ompi}
      - {p: {above: 20}, bytes: {below: 1*pof2}, stand_in: bruck}
  alltoall:
    source: nowhere
    rules:
      - {elements: {below: 2*p}, elements_multiple_of_p: true, label: "few", stand_in: pairwise}
      - {in_place: true, costed_as: allgather, whole_buffers: true, stand_in: mpich_recursive_doubling}
    algorithms:
      unused:
        - {not_modelled: "never"}
    # a comment
)yaml";
constexpr const char* small_algorithms = R"yaml(    algorithms:
      pair:
        - {stand_in: ring}
      doubling:
        - {p_power_of_two: true, stand_in: recursive_doubling}
        - {label: "doubling (tree)", run: tree}
      tree:
        - {stand_in: mpich_recursive_doubling}
)yaml";

TEST(LibraryDecisions, RulesFirstMatchNestedListsAlgorithmsAndLabels) {
  std::string text = small_table;
  text.insert(text.find("  alltoall:"), small_algorithms);
  const LibraryDecisions tables = parse_library_decisions(text, "test.yaml");
  EXPECT_EQ(tables.name(), "test");
  EXPECT_TRUE(tables.covers(Collective::allgather));
  EXPECT_FALSE(tables.covers(Collective::allreduce));
  const auto run = [&](Collective collective, LibraryFacts facts) {
    const NativeDecision d = native_decision(tables, collective, facts);
    return d.library_algorithm + "|" + std::string(collective_name(d.costed_as)) + "|" + d.stand_in + "|" + d.why_not +
           (d.whole_buffers ? "|whole" : "");
  };
  EXPECT_EQ(run(Collective::allgather, call(2, 1 << 20)), "pair|allgather|ring|");
  EXPECT_EQ(run(Collective::allgather, call(8, 1024)), "doubling|allgather|recursive_doubling|");
  EXPECT_EQ(run(Collective::allgather, call(6, 1024)), "doubling (tree)|allgather|mpich_recursive_doubling|");
  LibraryFacts uneven = call(6, 2000);
  uneven.total_bytes = 6000;  // below 1024 * 6
  EXPECT_EQ(run(Collective::allgather, uneven), "doubling (tree)|allgather|mpich_recursive_doubling|");
  // The nested list's conditions held and none of its rules matches: a reason, not the next rule.
  const std::string unmatched = run(Collective::allgather, call(6, 1 << 20));
  EXPECT_NE(unmatched.find("test: no rule for allgather matches p = 6, 1048576 B"), std::string::npos) << unmatched;
  EXPECT_EQ(run(Collective::allgather, call(32, 8, nodes_of(8))), "by nodes|allgather|ring|");
  // 33 ranks on nodes of 8 are not balanced: past "by nodes", to the table decide_as names.
  EXPECT_EQ(run(Collective::allgather, call(33, 8, {8, true, 0})), "recursive_doubling|allgather|mpich_recursive_doubling|");
  EXPECT_EQ(run(Collective::allgather, call(32, 8, {1, false, 3})), "|allgather||scattered nodes");
  // Above 20 ranks, blocks below the largest power of two up to p.
  EXPECT_EQ(run(Collective::allgather, call(32, 31, {1, true, 3})), "|allgather|bruck|");
  EXPECT_NE(run(Collective::allgather, call(32, 32)).find("no rule"), std::string::npos);
  EXPECT_EQ(run(Collective::allgather, call(63, 31)), "|allgather|bruck|");
  EXPECT_NE(run(Collective::allgather, call(63, 32)).find("no rule"), std::string::npos);
  EXPECT_EQ(run(Collective::allgather, call(64, 63)), "|allgather|bruck|");
  EXPECT_NE(run(Collective::allgather, call(20, 8)).find("no rule"), std::string::npos);
  // elements per rank: 2p elements is not below 2p.
  EXPECT_EQ(run(Collective::alltoall, call(4, 4)), "few|alltoall|pairwise|");
  EXPECT_NE(run(Collective::alltoall, call(4, 8)).find("no rule"), std::string::npos);
  EXPECT_NE(run(Collective::alltoall, call(4, 5)).find("no rule"), std::string::npos);  // 5 is no multiple of 4
  LibraryFacts in_place = call(4, 8);
  in_place.in_place = true;
  EXPECT_EQ(run(Collective::alltoall, in_place), "|allgather|mpich_recursive_doubling||whole");
  const NativeDecision missing = native_decision(tables, Collective::gatherv, call(4, 8));
  EXPECT_NE(missing.why_not.find("test has no decision for gatherv"), std::string::npos) << missing.why_not;
}

// A problem in a file is reported with the file, line and column of what is wrong.
std::string parse_error(const std::string& text) {
  try {
    parse_library_decisions(text, "bad.yaml");
  } catch (const LibraryTableError& e) {
    return e.what();
  }
  return "(parsed)";
}

std::string with_allgather(const std::string& rules, const std::string& rest = "") {
  return "library: bad\nsource: here\ncollectives:\n  allgather:\n    source: nowhere\n    rules:\n" + rules + rest;
}

TEST(LibraryDecisions, MalformedFilesAreErrorsWithFileLineAndColumn) {
  EXPECT_EQ(parse_error("library: bad\nsource: [unclosed\n").substr(0, 30), "bad.yaml:3:1: malformed YAML: ");
  EXPECT_EQ(parse_error(with_allgather("      - {p: 2, runs: ring}\n")).substr(0, 43), "bad.yaml:7:16: unknown key 'runs' in a rule");
  EXPECT_EQ(parse_error(with_allgather("      - {p: 2, run: ring}\n")),
            "bad.yaml:7:21: run 'ring': no such algorithm under 'algorithms'");
  EXPECT_EQ(parse_error(with_allgather("      - {p: {below: 12*q}, stand_in: ring}\n")),
            "bad.yaml:7:21: bad threshold '12*q' for 'p.below', expected N, N*p or N*pof2");
  EXPECT_EQ(parse_error(with_allgather("      - {p: {below: -3}, stand_in: ring}\n")).substr(0, 44),
            "bad.yaml:7:21: bad threshold '-3' for 'p.bel");
  EXPECT_EQ(parse_error(with_allgather("      - {p: {under: 3}, stand_in: ring}\n")).substr(0, 50),
            "bad.yaml:7:14: unknown key 'under' in the conditio");
  EXPECT_EQ(parse_error(with_allgather("      - {p_even: maybe, stand_in: ring}\n")),
            "bad.yaml:7:18: bad value for 'p_even', expected true or false");
  EXPECT_EQ(parse_error(with_allgather("      - {stand_in: ring, not_modelled: \"why\"}\n")),
            "bad.yaml:7:26: a rule has one outcome: 'run', 'rules', 'decide_as', 'not_modelled' or 'stand_in'");
  EXPECT_EQ(parse_error(with_allgather("      - {p: 2}\n")),
            "bad.yaml:7:9: a rule needs one outcome: 'run', 'rules', 'decide_as', 'not_modelled' or 'stand_in'");
  EXPECT_EQ(parse_error(with_allgather("      - {stand_in: brick}\n")).find(
                "bad.yaml:7:9: stand_in 'brick' is neither a schedule of the model's own nor a allgather algorithm: "),
            0u);
  EXPECT_EQ(parse_error(with_allgather("      - {costed_as: allgatherz, stand_in: ring}\n")),
            "bad.yaml:7:21: unknown collective 'allgatherz' for 'costed_as'");
  EXPECT_EQ(parse_error(with_allgather("      - {costed_as: alltoall, not_modelled: \"why\"}\n")),
            "bad.yaml:7:21: 'costed_as' and 'whole_buffers' go with 'stand_in'");
  EXPECT_EQ(parse_error(with_allgather("      - {p: 2, p: 3, stand_in: ring}\n")), "bad.yaml:7:16: key 'p' given twice in a rule");
  EXPECT_EQ(parse_error(with_allgather("      - {run: a}\n", "    algorithms:\n      a:\n        - {run: b}\n      b:\n        - {run: a}\n")),
            "bad.yaml:9:7: algorithm 'a' runs itself: a -> b -> a");
  EXPECT_EQ(parse_error("library: bad\nsource: here\ncollectives:\n  allgather:\n    rules:\n      - {stand_in: ring}\n"),
            "bad.yaml:4:3: collective 'allgather' needs 'source': the library's file and function it follows");
  EXPECT_EQ(parse_error("library: bad\nsource: here\ncollectives:\n  allgathr:\n    source: x\n"),
            "bad.yaml:4:3: unknown collective 'allgathr', expected " + collective_names());
  EXPECT_EQ(parse_error("library: bad\ncollectives:\n  allgather:\n    source: x\n    rules: [{stand_in: ring}]\n"),
            "bad.yaml:1:1: missing 'source': repository, tag and files the tables come from");
}

}  // namespace
}  // namespace collshim::model
