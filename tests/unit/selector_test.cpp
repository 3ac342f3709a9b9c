#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>

#include "selector/selector.hpp"

namespace collshim {
namespace {

EnvironmentSettings environment(const std::map<std::string, std::string>& variables) {
  return read_environment([&](const char* name) -> const char* {
    const auto found = variables.find(name);
    return found == variables.end() ? nullptr : found->second.c_str();
  });
}

TEST(Environment, DefaultsToEnabledSilentAndUnforced) {
  const auto settings = environment({});
  EXPECT_FALSE(settings.disabled);
  EXPECT_EQ(settings.log_level, LogLevel::off);
  EXPECT_TRUE(settings.errors.empty());
  for (const auto& forced : settings.forced) EXPECT_FALSE(forced);
}

TEST(Environment, DisableSkipsEverythingElse) {
  const auto settings = environment({{"COLLSHIM_DISABLE", "1"}, {"COLLSHIM_LOG", "nonsense"}});
  EXPECT_TRUE(settings.disabled);
  EXPECT_TRUE(settings.errors.empty());
}

TEST(Environment, BadValuesNameTheVariable) {
  const auto settings = environment({{"COLLSHIM_DISABLE", "yes"}, {"COLLSHIM_LOG", "verbose"}});
  ASSERT_EQ(settings.errors.size(), 2u);
  EXPECT_EQ(settings.errors[0].rfind("COLLSHIM_DISABLE=yes: ", 0), 0u) << settings.errors[0];
  EXPECT_EQ(settings.errors[1].rfind("COLLSHIM_LOG=verbose: unknown log level", 0), 0u) << settings.errors[1];
}

TEST(Environment, ReadsLogLevels) {
  EXPECT_EQ(environment({{"COLLSHIM_LOG", "debug"}}).log_level, LogLevel::debug);
  EXPECT_EQ(environment({{"COLLSHIM_LOG", "trace"}}).log_level, LogLevel::trace);
  EXPECT_EQ(environment({{"COLLSHIM_LOG", "warn"}}).log_level, LogLevel::warn);
}

TEST(Environment, ReadsTheForcingVariableOfEveryCollective) {
  for (const CollectiveInfo& info : collectives) {
    const auto settings = environment({{info.forcing_variable, "native"}});
    for (int c = 0; c < collective_count; ++c)
      EXPECT_EQ(settings.forced[c].has_value(), c == static_cast<int>(info.collective)) << info.forcing_variable;
  }
}

// Selector over an explicit rule table (text), so tests never depend on the shipped defaults.
struct Built {
  std::vector<RuleDiagnostic> diagnostics;
  std::unique_ptr<Selector> selector;
};
Built build(const std::map<std::string, std::string>& variables, const std::vector<std::string>& files = {},
            const JobFacts& job = {}) {
  Built built;
  RuleTable table;
  for (std::size_t i = 0; i < files.size(); ++i)
    table.add_file_text(files[i], "f" + std::to_string(i) + ".yaml", built.diagnostics);
  built.selector = std::make_unique<Selector>(environment(variables), std::move(table), built.diagnostics, job);
  return built;
}

CallFacts facts(Collective c, int procs, long long bytes = 64, MappingClass mapping = MappingClass::sequential,
                int nodes = 2) {
  return {c, procs, bytes, mapping, nodes, procs / nodes + 1, false};
}

std::string_view chosen(const Built& b, const CallFacts& f) { return b.selector->decide(f).choice->algorithm->name; }

TEST(Selector, ForcingVariableChoosesTheAlgorithmOfItsCollectiveOnly) {
  const auto b = build({{"COLLSHIM_ALLGATHER", "ring"}, {"COLLSHIM_ALLTOALLV", "pairwise"}});
  EXPECT_TRUE(b.diagnostics.empty());
  EXPECT_EQ(chosen(b, facts(Collective::allgather, 5)), "ring");
  EXPECT_EQ(chosen(b, facts(Collective::allgatherv, 5)), "native");
  EXPECT_EQ(chosen(b, facts(Collective::alltoallv, 5)), "pairwise");
  EXPECT_TRUE(b.selector->always_native(Collective::allgatherv));
  EXPECT_FALSE(b.selector->always_native(Collective::allgather));
}

TEST(Selector, OneProcessAlwaysPassesThrough) {
  const auto b =
      build({{"COLLSHIM_ALLGATHER", "ring"}}, {"version: 1\nrules:\n  - { collective: alltoallv, use: pairwise }\n"});
  EXPECT_EQ(chosen(b, facts(Collective::allgather, 1, 64, MappingClass::single_node, 1)), "native");
  EXPECT_EQ(chosen(b, facts(Collective::alltoallv, 1, 64, MappingClass::single_node, 1)), "native");
  EXPECT_EQ(chosen(b, facts(Collective::allgather, 2)), "ring");
  EXPECT_STREQ(b.selector->decide(facts(Collective::allgather, 1, 64, MappingClass::single_node, 1)).reason,
               "one process: nothing to exchange");
}

// Reductions: a non-commutative operation needs an order-keeping algorithm; floating-point data
// passes through unless COLLSHIM_ALLREDUCE_REORDER=1.
TEST(Selector, ReductionPropertiesDecideEligibility) {
  const auto b = build({{"COLLSHIM_ALLREDUCE", "ring"}});
  EXPECT_TRUE(b.diagnostics.empty());
  CallFacts call = facts(Collective::allreduce, 6);
  EXPECT_EQ(chosen(b, call), "ring");
  call.commutative = false;
  const Decision ordered = b.selector->decide(call);
  EXPECT_EQ(ordered.choice->algorithm->name, "rabenseifner");
  EXPECT_EQ(ordered.requested->algorithm->name, "ring");
  EXPECT_STREQ(ordered.substitution, "a commutative operation");
  call.commutative = true;
  call.order_changes_rounding = true;
  EXPECT_EQ(chosen(b, call), "native");
  const auto reordering = build({{"COLLSHIM_ALLREDUCE", "ring"}, {"COLLSHIM_ALLREDUCE_REORDER", "1"}});
  EXPECT_EQ(chosen(reordering, call), "ring");
  EXPECT_FALSE(environment({{"COLLSHIM_ALLREDUCE_REORDER", "yes"}}).errors.empty());
  // A rule allows reordering in its own range only; the forcing variable beats rules, so its choice
  // still needs COLLSHIM_ALLREDUCE_REORDER.
  const auto by_rule = build({}, {R"(version: 1
rules:
  - { collective: allreduce, when: { block_bytes: -1KiB }, reorder: true, use: ring }
  - { collective: allreduce, use: ring }
)"});
  ASSERT_TRUE(by_rule.diagnostics.empty()) << by_rule.diagnostics[0].text();
  call.block_bytes = 1024;
  EXPECT_EQ(chosen(by_rule, call), "ring");
  call.block_bytes = 1025;
  const Decision kept = by_rule.selector->decide(call);
  EXPECT_EQ(kept.choice->algorithm->name, "native");
  EXPECT_NE(std::string(kept.substitution).find("reorder: true"), std::string::npos) << kept.substitution;
  const auto forced_by_rule = build({{"COLLSHIM_ALLREDUCE", "ring"}}, {R"(version: 1
rules:
  - { collective: allreduce, reorder: true, use: ring }
)"});
  EXPECT_EQ(chosen(forced_by_rule, call), "native");
  EXPECT_TRUE(environment({{"COLLSHIM_ALLREDUCE_REORDER", "1"}}).allreduce_reorder);
}

// Hierarchical Allreduce keeps rank order only on nodes of consecutive ranks.
TEST(Selector, HierarchicalAllreduceNeedsSequentialNodesForNonCommutativeOperations) {
  const auto b = build({{"COLLSHIM_ALLREDUCE", "hierarchical"}});
  CallFacts call = facts(Collective::allreduce, 8, 64, MappingClass::sequential);
  call.commutative = false;
  EXPECT_EQ(chosen(b, call), "hierarchical");
  call.mapping = MappingClass::single_node;
  EXPECT_EQ(chosen(b, call), "hierarchical");
  for (const MappingClass mapping : {MappingClass::cyclic, MappingClass::irregular}) {
    call.mapping = mapping;
    const Decision decision = b.selector->decide(call);
    EXPECT_EQ(decision.choice->algorithm->name, "rabenseifner");
    EXPECT_NE(std::string(decision.substitution).find("consecutive ranks"), std::string::npos);
    call.commutative = true;
    EXPECT_EQ(chosen(b, call), "hierarchical");
    call.commutative = false;
  }
}

TEST(Selector, RepeatedDecisionsReturnTheSameInternedChoice) {
  const auto b = build({{"COLLSHIM_ALLGATHER", "ring"}, {"COLLSHIM_ALLGATHERV", "ring"}});
  const Decision x = b.selector->decide(facts(Collective::allgather, 8));
  const Decision y = b.selector->decide(facts(Collective::allgatherv, 8));
  EXPECT_EQ(x.choice, y.choice);
  EXPECT_EQ(&b.selector->choices()[x.choice->id], x.choice);
}

TEST(Selector, BadForcingValuesAreErrorsNamingTheVariable) {
  const auto b = build({{"COLLSHIM_ALLGATHERV", "brick"}, {"COLLSHIM_ALLTOALLV", "ring"}});
  ASSERT_EQ(b.diagnostics.size(), 2u);
  EXPECT_EQ(b.diagnostics[0].text().rfind("COLLSHIM_ALLGATHERV=brick: unknown algorithm 'brick' for allgatherv", 0), 0u)
      << b.diagnostics[0].text();
  EXPECT_EQ(b.diagnostics[1].text().rfind("COLLSHIM_ALLTOALLV=ring: unknown algorithm 'ring' for alltoallv", 0), 0u)
      << b.diagnostics[1].text();
}

const char* by_size_and_mapping = R"(version: 1
rules:
  - collective: allgather
    when: { block_bytes: -1KiB, mapping: cyclic }
    use: ring
  - collective: allgather
    when: { block_bytes: 64KiB- }
    use: ring
  - collective: alltoallv
    when: { procs: 4-8 }
    use: pairwise
)";

TEST(Selector, FirstMatchingRuleWinsAndNoMatchMeansNative) {
  const auto b = build({}, {by_size_and_mapping});
  ASSERT_TRUE(b.diagnostics.empty()) << b.diagnostics[0].text();
  EXPECT_EQ(chosen(b, facts(Collective::allgather, 8, 1024, MappingClass::cyclic)), "ring");
  EXPECT_EQ(chosen(b, facts(Collective::allgather, 8, 1025, MappingClass::cyclic)), "native");
  EXPECT_EQ(chosen(b, facts(Collective::allgather, 8, 512, MappingClass::sequential)), "native");
  EXPECT_EQ(chosen(b, facts(Collective::allgather, 8, 65536, MappingClass::sequential)), "ring");
  EXPECT_EQ(chosen(b, facts(Collective::allgatherv, 8, 65536)), "native");
  EXPECT_EQ(chosen(b, facts(Collective::alltoallv, 3)), "native");
  EXPECT_EQ(chosen(b, facts(Collective::alltoallv, 4)), "pairwise");
  EXPECT_EQ(chosen(b, facts(Collective::alltoallv, 8)), "pairwise");
  EXPECT_EQ(chosen(b, facts(Collective::alltoallv, 9)), "native");
  const Decision d = b.selector->decide(facts(Collective::alltoallv, 4));
  EXPECT_EQ(d.rule_index, 2);
  EXPECT_STREQ(d.reason, "rule at f0.yaml:9:5");
  EXPECT_FALSE(b.selector->needs_agreed_size(Collective::alltoallv));
}

TEST(Selector, LaterFilesOverrideEarlierOnesAndForcingBeatsAll) {
  const char* site = "version: 1\nrules:\n  - { collective: allgather, use: native }\n";
  const char* job = "version: 1\nrules:\n  - { collective: allgather, when: { procs: 5 }, use: ring }\n";
  const auto b = build({}, {site, job});
  ASSERT_TRUE(b.diagnostics.empty()) << b.diagnostics[0].text();
  EXPECT_EQ(chosen(b, facts(Collective::allgather, 5)), "ring");
  EXPECT_EQ(chosen(b, facts(Collective::allgather, 6)), "native");
  const auto reversed = build({}, {job, site});
  EXPECT_EQ(chosen(reversed, facts(Collective::allgather, 5)), "native");
  ASSERT_EQ(reversed.diagnostics.size(), 1u);  // the job rule is now shadowed by the site's catch-all
  EXPECT_FALSE(reversed.diagnostics[0].error);
  const auto forced = build({{"COLLSHIM_ALLGATHER", "native"}}, {site, job});
  EXPECT_EQ(chosen(forced, facts(Collective::allgather, 5)), "native");
  EXPECT_STREQ(forced.selector->decide(facts(Collective::allgather, 5)).reason, "forced by COLLSHIM_ALLGATHER");
}

TEST(Selector, SizeKeyedAlltoallvRulesNeedAnAgreedSize) {
  const auto b =
      build({}, {"version: 1\nrules:\n  - { collective: alltoallv, when: { block_bytes: -64 }, use: linear }\n"});
  EXPECT_TRUE(b.selector->needs_agreed_size(Collective::alltoallv));
  EXPECT_FALSE(b.selector->always_native(Collective::alltoallv));
  const auto forced =
      build({{"COLLSHIM_ALLTOALLV", "pairwise"}},
            {"version: 1\nrules:\n  - { collective: alltoallv, when: { block_bytes: -64 }, use: linear }\n"});
  EXPECT_FALSE(forced.selector->needs_agreed_size(Collective::alltoallv));
}

// The agreement is paid per communicator only where a size-keyed rule could apply: rules keyed on
// other process counts or placements, or behind a rule that decides every size, cost nothing.
TEST(Selector, SizeMattersOnlyWhereASizeKeyedRuleCanMatch) {
  const auto b = build({}, {R"(version: 1
rules:
  - { collective: alltoallv, when: { procs: 64, ppn: 16, block_bytes: -64 }, use: linear }
  - { collective: alltoallv, when: { procs: 8-16 }, use: pairwise }
  - { collective: alltoallv, when: { procs: 12, block_bytes: -64 }, use: linear }
  - { collective: alltoallv, when: { procs: 20-, mapping: cyclic, block_bytes: 1KiB- }, use: grid }
)"});
  ASSERT_TRUE(b.diagnostics.size() <= 1);  // the procs: 12 rule is shadowed (a warning)
  auto depends = [&](int procs, int ppn, MappingClass mapping) {
    CallFacts call = facts(Collective::alltoallv, procs, 0, mapping);
    call.ppn = ppn;
    return b.selector->decision_depends_on_size(call);
  };
  EXPECT_TRUE(depends(64, 16, MappingClass::sequential));
  EXPECT_FALSE(depends(64, 8, MappingClass::sequential));  // ppn differs
  EXPECT_FALSE(depends(12, 4, MappingClass::sequential));  // procs: 8-16 decides first, whatever the size
  EXPECT_FALSE(depends(4, 4, MappingClass::sequential));   // no rule for 4
  EXPECT_TRUE(depends(32, 8, MappingClass::cyclic));
  EXPECT_FALSE(depends(32, 8, MappingClass::sequential));
  EXPECT_FALSE(depends(1, 1, MappingClass::single_node));  // one process never exchanges
  // Forcing fixes the choice: nothing depends on the size.
  const auto forced =
      build({{"COLLSHIM_ALLTOALLV", "pairwise"}},
            {"version: 1\nrules:\n  - { collective: alltoallv, when: { block_bytes: -64 }, use: linear }\n"});
  EXPECT_FALSE(forced.selector->decision_depends_on_size(facts(Collective::alltoallv, 64)));
}

TEST(Selector, OnlyRankLocalSizesNeedAgreement) {
  const auto b = build({}, {"version: 1\nrules:\n  - { collective: allgather, when: { block_bytes: -64 }, use: ring }\n"
                            "  - { collective: allgatherv, when: { block_bytes: -64 }, use: ring }\n"});
  for (const CollectiveInfo& info : collectives) EXPECT_FALSE(b.selector->needs_agreed_size(info.collective));
}

TEST(Selector, ForcedReasonNamesTheCollectivesVariable) {
  for (const CollectiveInfo& info : collectives) {
    const auto b = build({{info.forcing_variable, "native"}});
    const Decision d = b.selector->decide(facts(info.collective, 4));
    EXPECT_EQ(d.rule_index, Decision::forced_rule);
    EXPECT_EQ(std::string(d.reason), std::string("forced by ") + info.forcing_variable);
  }
}

// The one decision procedure: forced, else the first matching rule, else native; then eligibility.
const char* rules_for_decide = R"(version: 1
rules:
  - collective: allgather
    when: { procs: 9- }
    use: bruck
  - collective: allgather
    when: { procs: 4- }
    use: recursive_doubling
  - collective: allgather
    when: { procs: 2- }
    use: sparbit
  - collective: alltoallv
    use: pairwise
)";

TEST(Decide, ForcedBeatsEveryRule) {
  const auto b = build({{"COLLSHIM_ALLGATHER", "ring"}}, {rules_for_decide});
  ASSERT_TRUE(b.diagnostics.empty()) << b.diagnostics[0].text();
  int tried = 0;
  const Decision d = b.selector->decide(facts(Collective::allgather, 16), [&](const Rule&, bool) { ++tried; });
  EXPECT_EQ(d.choice->algorithm->name, "ring");
  EXPECT_EQ(d.requested, d.choice);
  EXPECT_EQ(d.rule_index, Decision::forced_rule);
  EXPECT_EQ(tried, 0);
}

TEST(Decide, FirstMatchingRuleWins) {
  const auto b = build({}, {rules_for_decide});
  const Decision d = b.selector->decide(facts(Collective::allgather, 16));
  EXPECT_EQ(d.rule_index, 0);
  EXPECT_EQ(d.choice->algorithm->name, "bruck");
  EXPECT_EQ(b.selector->decide(facts(Collective::allgather, 2)).rule_index, 2);
  EXPECT_EQ(b.selector->decide(facts(Collective::alltoallv, 2)).rule_index, 3);
}

TEST(Decide, IneligibleChoiceFallsBack) {
  const auto b = build({}, {rules_for_decide});
  const Decision eligible = b.selector->decide(facts(Collective::allgather, 8));
  EXPECT_EQ(eligible.rule_index, 1);
  EXPECT_EQ(eligible.choice, eligible.requested);
  EXPECT_EQ(eligible.choice->algorithm->name, "recursive_doubling");
  const Decision fallen_back = b.selector->decide(facts(Collective::allgather, 6));
  EXPECT_EQ(fallen_back.rule_index, 1);
  EXPECT_EQ(fallen_back.requested->algorithm->name, "recursive_doubling");
  EXPECT_EQ(fallen_back.choice->algorithm->name, "bruck");
  EXPECT_STREQ(fallen_back.reason, "rule at f0.yaml:6:5");
}

// What collshim-config explain prints is what the entry points run: the rules it reports as tried
// are those of the call's collective, in order, up to the one the decision names.
TEST(Decide, ExplanationAgreesWithDecision) {
  const auto b = build({}, {rules_for_decide});
  for (const CollectiveInfo& info : collectives) {
    for (int procs = 1; procs <= 12; ++procs) {
      const CallFacts f = facts(info.collective, procs);
      std::vector<const Rule*> tried;
      const Decision explained = b.selector->decide(f, [&](const Rule& rule, bool matched) {
        EXPECT_EQ(rule.collective, info.collective);
        EXPECT_EQ(matched, rule.when.mismatch(f, b.selector->job()).empty());
        tried.push_back(&rule);
      });
      const Decision decided = b.selector->decide(f);
      EXPECT_EQ(explained.choice, decided.choice);
      EXPECT_EQ(explained.requested, decided.requested);
      EXPECT_EQ(explained.rule_index, decided.rule_index);
      if (decided.rule_index >= 0) {
        ASSERT_FALSE(tried.empty());
        EXPECT_EQ(tried.back(), &b.selector->rules().rules()[decided.rule_index]);
      } else if (procs > 1) {
        // No rule matched: every rule of the collective was tried.
        std::size_t of_collective = 0;
        for (const Rule& rule : b.selector->rules().rules()) of_collective += rule.collective == info.collective;
        EXPECT_EQ(tried.size(), of_collective);
      }
    }
  }
}

TEST(Selector, ShippedDefaultRulesLoadWithoutProblems) {
  std::vector<RuleDiagnostic> diagnostics;
  const Selector selector(environment({}), diagnostics);
  for (const auto& d : diagnostics) ADD_FAILURE() << d.text();
  EXPECT_EQ(selector.rule_files(), std::vector<std::string>{"default"});
}

}  // namespace
}  // namespace collshim

namespace collshim {
namespace {

// The decision order with a platform description: a forcing variable, then the rules, then the cost
// model (where no rule matched, for the collectives it costs), then native.
TEST(Selector, ModelDecidesOnlyWhereNoForcingVariableOrRuleDoes) {
  const auto b =
      build({{"COLLSHIM_PLATFORM", "p.yaml"}, {"COLLSHIM_ALLTOALL", "pairwise"}},
            {"version: 1\nrules:\n  - { collective: allgather, when: { block_bytes: -1KiB }, use: ring }\n"});
  ASSERT_TRUE(b.diagnostics.empty()) << b.diagnostics[0].text();
  const Decision ruled = b.selector->decide(facts(Collective::allgather, 8, 64));
  EXPECT_EQ(ruled.choice->algorithm->name, "ring");
  EXPECT_GE(ruled.rule_index, 0);
  const Decision unruled = b.selector->decide(facts(Collective::allgather, 8, 4096));
  EXPECT_EQ(unruled.rule_index, Decision::no_rule);  // step 3: the entry points ask the model
  EXPECT_TRUE(b.selector->model_decides(Collective::allgather));
  EXPECT_FALSE(b.selector->always_native(Collective::allgather));
  EXPECT_EQ(b.selector->decide(facts(Collective::alltoall, 8)).rule_index, Decision::forced_rule);
  EXPECT_FALSE(b.selector->model_decides(Collective::alltoall));  // forced: the model never decides
  EXPECT_FALSE(b.selector->model_decides(Collective::gatherv));   // rooted calls are not costed
  EXPECT_TRUE(b.selector->model_decides(Collective::alltoallv));
  // Alltoallv's sizes are rank-local: the ranks agree on one before the model keys on its bucket.
  EXPECT_TRUE(b.selector->needs_agreed_size(Collective::alltoallv));
  EXPECT_TRUE(b.selector->decision_depends_on_size(facts(Collective::alltoallv, 8)));
  EXPECT_TRUE(b.selector->confirms());
  const auto without = build({}, {});
  EXPECT_FALSE(without.selector->model_decides(Collective::allgather));
  EXPECT_TRUE(without.selector->always_native(Collective::allgather));
}

}  // namespace
}  // namespace collshim

namespace collshim {
namespace {

// A misspelt variable is named with the closest one collshim reads; known and foreign variables
// (the project's scripts', other tools') are not.
TEST(Environment, UnknownCollshimVariablesAreNamedWithTheClosestKnownOne) {
  const std::vector<std::string> warnings = unknown_variable_warnings(
      {"COLLSHIM_ALLGATER", "COLLSHIM_ALLGATHER", "PATH", "COLLSHIM_PLATFROM", "COLLSHIM_MPIEXEC", "COLLSHIM_LIBRARY"});
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_EQ(warnings[0],
            "COLLSHIM_ALLGATER is not a variable collshim reads; it is ignored (did you mean "
            "COLLSHIM_ALLGATHER?)");
  EXPECT_NE(warnings[1].find("COLLSHIM_PLATFROM is not a variable collshim reads; it is ignored (did you mean "
                             "COLLSHIM_PLATFORM?)"),
            std::string::npos);
}

JobFacts on(const std::string& name, std::vector<int> version) { return {{name, std::move(version), "", ""}}; }

TEST(Environment, MpiLibraryIsALibraryOrADecisionsTable) {
  for (const char* good : {"ompi 4.1.6", "smpi-mpich", "ompi-4.1", "mpich-4-ch3", "smpi-3.32-default", "impi"}) {
    const auto settings = environment({{"COLLSHIM_MPI_LIBRARY", good}});
    EXPECT_TRUE(settings.errors.empty()) << good << ": " << settings.errors[0];
    EXPECT_EQ(settings.mpi_library, good);
  }
  const auto bad = environment({{"COLLSHIM_MPI_LIBRARY", "openmpi"}});
  ASSERT_EQ(bad.errors.size(), 1u);
  EXPECT_EQ(bad.errors[0].rfind("COLLSHIM_MPI_LIBRARY=openmpi: expected a library as rules name it", 0), 0u)
      << bad.errors[0];
  EXPECT_FALSE(environment({{"COLLSHIM_MPI_LIBRARY", ""}}).mpi_library);
}

const char* per_library = R"(version: 1
rules:
  - { collective: allgather, when: { library: mpich, procs: 8 }, use: ring }
  - { collective: allgather, when: { library: "ompi 4.1", procs: 8 }, use: bruck }
  - { collective: allgather, when: { procs: 8 }, use: sparbit }
  - { collective: alltoallv, when: { library: ompi, block_bytes: -64 }, use: linear }
)";

// A rule for another library is settled when the selector is built: it is kept (explanations,
// reports) but never matches, and costs nothing where it cannot apply.
TEST(Selector, RulesForAnotherLibraryAreSkippedButKept) {
  const auto mpich = build({}, {per_library}, on("mpich", {4, 0, 2}));
  ASSERT_TRUE(mpich.diagnostics.empty()) << mpich.diagnostics[0].text();
  EXPECT_EQ(chosen(mpich, facts(Collective::allgather, 8)), "ring");
  EXPECT_EQ(mpich.selector->rules().rules().size(), 4u);
  EXPECT_TRUE(mpich.selector->applies(0));
  EXPECT_FALSE(mpich.selector->applies(1));
  const auto ompi = build({}, {per_library}, on("ompi", {4, 1, 4}));
  EXPECT_EQ(chosen(ompi, facts(Collective::allgather, 8)), "bruck");
  EXPECT_EQ(ompi.selector->decide(facts(Collective::allgather, 8)).rule_index, 1);
  // Another version, or no identified library: only the rule without `library` is left.
  EXPECT_EQ(chosen(build({}, {per_library}, on("ompi", {5, 0, 3})), facts(Collective::allgather, 8)), "sparbit");
  EXPECT_EQ(chosen(build({}, {per_library}), facts(Collective::allgather, 8)), "sparbit");
  // The Alltoallv rule is Open MPI's: only there do the ranks agree on a size, or is it not native.
  EXPECT_TRUE(ompi.selector->needs_agreed_size(Collective::alltoallv));
  EXPECT_FALSE(ompi.selector->always_native(Collective::alltoallv));
  EXPECT_TRUE(ompi.selector->decision_depends_on_size(facts(Collective::alltoallv, 8)));
  EXPECT_FALSE(mpich.selector->needs_agreed_size(Collective::alltoallv));
  EXPECT_TRUE(mpich.selector->always_native(Collective::alltoallv));
  EXPECT_FALSE(mpich.selector->decision_depends_on_size(facts(Collective::alltoallv, 8)));
  // Explanations see the skipped rule and why.
  std::vector<std::string> why;
  ompi.selector->decide(facts(Collective::allgather, 8), [&](const Rule& rule, bool matched) {
    why.push_back(matched ? "MATCHES" : rule.when.mismatch(facts(Collective::allgather, 8), ompi.selector->job()));
  });
  EXPECT_EQ(why, (std::vector<std::string>{"library ompi 4.1.4 is not mpich", "MATCHES"}));
}

// The shipped table was measured under SimGrid SMPI's library selectors only, so each rule names the
// selectors whose own choice it beat: under Open MPI, MPICH or a library the shim cannot name every
// call passes through, and each rule holds under at least one selector.
TEST(Selector, ShippedRulesHoldOnlyUnderTheSelectorsTheyBeat) {
  std::vector<RuleDiagnostic> diagnostics;
  const Selector unknown(environment({}), diagnostics);
  const Selector ompi(environment({}), diagnostics, on("ompi", {4, 1, 4}));
  const Selector mpich(environment({}), diagnostics, on("mpich", {4, 0, 2}));
  std::vector<std::unique_ptr<Selector>> selectors;
  for (const char* name : {"smpi-ompi", "smpi-mpich", "smpi-mvapich2", "smpi-impi"})
    selectors.push_back(std::make_unique<Selector>(environment({}), diagnostics, on(name, {3, 32})));
  ASSERT_TRUE(diagnostics.empty()) << diagnostics[0].text();
  const std::size_t rules = unknown.rules().rules().size();
  ASSERT_GT(rules, 0u);
  for (std::size_t i = 0; i < rules; ++i) {
    EXPECT_FALSE(unknown.applies(i)) << "rule " << i;
    EXPECT_FALSE(ompi.applies(i)) << "rule " << i;
    EXPECT_FALSE(mpich.applies(i)) << "rule " << i;
    EXPECT_TRUE(std::ranges::any_of(selectors, [&](const auto& s) { return s->applies(i); })) << "rule " << i;
  }
  // And the decisions say so: on the measured placements (64 ranks on 8 nodes of 8, say) the selectors'
  // table decides, the other libraries' calls pass through.
  int decisions = 0;
  for (const CollectiveInfo& info : collectives) {
    for (const int procs : {16, 64, 128, 256}) {
      for (const int nodes : {2, 4, 5, 8, 16, 32, 64}) {
        for (long long bytes = 1; bytes <= (1 << 18); bytes *= 4) {
          for (const MappingClass mapping : {MappingClass::sequential, MappingClass::cyclic}) {
            CallFacts f = facts(info.collective, procs, bytes, mapping, nodes);
            f.ppn = (procs + nodes - 1) / nodes;
            for (const Selector* other : {&unknown, &ompi, &mpich}) EXPECT_LT(other->decide(f).rule_index, 0);
            for (const auto& s : selectors) decisions += s->decide(f).rule_index >= 0;
          }
        }
      }
    }
  }
  EXPECT_GT(decisions, 0);
}

}  // namespace
}  // namespace collshim
