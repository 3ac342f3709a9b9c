// collshim-tune rules on synthetic measurements: merging of adjacent sizes, tolerance, spread, robust
// mode, evidence comments, the emitted table parsing cleanly, and CSV errors naming file:line and
// column.
#include <gtest/gtest.h>

#include <sstream>

#include "rule_synthesis.hpp"
#include "selector/rule_table.hpp"

namespace collshim::tune {
namespace {

// One sweep: allgather, 16 ranks on 2 nodes of 8, sequential.
Measurement measured(long long block_bytes, const std::string& algorithm, double time_us, double spread_us = 0,
                     const std::string& platform = "lab") {
  Measurement m;
  m.source = "synthetic";
  m.collective = Collective::allgather;
  m.procs = 16;
  m.nodes = 2;
  m.ppn = 8;
  m.mapping = MappingClass::sequential;
  m.block_bytes = block_bytes;
  m.algorithm = algorithm;
  m.native = is_native_label(algorithm);
  m.time_us = time_us;
  m.spread_us = spread_us;
  m.platform = platform;
  m.mpi_library = "Open MPI v4.1.4";
  m.date = "2024-05-01";
  return m;
}

// The emitted table, parsed by the shim's own parser; no diagnostics allowed.
RuleTable parsed(const SynthesisResult& result) {
  EXPECT_TRUE(result.errors.empty()) << (result.errors.empty() ? "" : result.errors[0]);
  RuleTable table;
  std::vector<RuleDiagnostic> diagnostics;
  table.add_file_text(result.yaml, "tuned.yaml", diagnostics);
  table.check_shadowed(diagnostics);
  EXPECT_TRUE(diagnostics.empty()) << diagnostics[0].text() << "\n" << result.yaml;
  return table;
}

// The library of measured(): Open MPI 4.1.4.
const JobFacts open_mpi{{"ompi", {4, 1, 4}, "4.1.4", "Open MPI 4.1.4"}};

JobFacts job_of(const std::string& name, std::vector<int> version) { return {{name, std::move(version), "", ""}}; }

// What a call of `block_bytes` on the sweep's placement runs under `table` in a job on `job`'s library.
std::string runs(const RuleTable& table, long long block_bytes, const JobFacts& job = open_mpi) {
  const CallFacts facts{Collective::allgather, 16, block_bytes, MappingClass::sequential, 2, 8, false};
  for (const Rule& rule : table.rules()) {
    if (rule.collective == facts.collective && rule.when.matches(job) && rule.when.matches(facts))
      return rule.use.text();
  }
  return "native";
}

TEST(RuleSynthesis, AdjacentSizesWithOneWinnerMergeIntoOneRange) {
  std::vector<Measurement> m;
  for (long long size : {1024, 2048, 4096, 8192}) {
    m.push_back(measured(size, "native", 100));
    m.push_back(measured(size, "ring", size == 8192 ? 40 : 120));
    m.push_back(measured(size, "sparbit", size == 8192 ? 120 : 50));
  }
  const auto result = synthesize_rules(m, {});
  const RuleTable table = parsed(result);
  ASSERT_EQ(result.rules, 2) << result.yaml;
  EXPECT_EQ(result.cells, 4);
  EXPECT_EQ(result.cells_with_rule, 4);
  // Ends: the sweep's first and last measured sizes; between winners, halfway between measurements.
  EXPECT_EQ(table.rules()[0].when.block_bytes->low, 1024);
  EXPECT_EQ(table.rules()[0].when.block_bytes->high, 6144);
  EXPECT_EQ(table.rules()[1].when.block_bytes->low, 6145);
  EXPECT_EQ(table.rules()[1].when.block_bytes->high, 8192);
  EXPECT_EQ(runs(table, 1023), "native");  // never beyond the data
  EXPECT_EQ(runs(table, 3000), "sparbit");
  EXPECT_EQ(runs(table, 8192), "ring");
  EXPECT_EQ(runs(table, 8193), "native");
  // Keys exactly as measured.
  EXPECT_EQ(table.rules()[0].when.text(),
            "{ library: \"ompi 4.1.4\", procs: 16, block_bytes: 1KiB-6KiB, mapping: sequential, nodes: 2, ppn: 8 }");
  EXPECT_EQ(runs(table, 3000, job_of("ompi", {4, 1, 5})), "native");  // evidence for the version measured only
}

TEST(RuleSynthesis, AnAlgorithmWithinToleranceExtendsTheRangeInsteadOfANewRule) {
  // bruck is best at 2 KiB by 2%, sparbit everywhere else: within 3% sparbit covers all three sizes.
  std::vector<Measurement> m;
  for (long long size : {1024, 2048, 4096}) {
    m.push_back(measured(size, "native", 100));
    m.push_back(measured(size, "sparbit", 50));
    m.push_back(measured(size, "bruck", size == 2048 ? 49 : 70));
  }
  const auto loose = synthesize_rules(m, {});
  const RuleTable table = parsed(loose);
  ASSERT_EQ(loose.rules, 1) << loose.yaml;
  EXPECT_EQ(runs(table, 2048), "sparbit");
  // With no tolerance, the 2% matters: three ranges.
  SynthesisOptions strict;
  strict.tolerance = 0;
  const auto tight = synthesize_rules(m, strict);
  EXPECT_EQ(tight.rules, 3) << tight.yaml;
  EXPECT_EQ(runs(parsed(tight), 2048), "bruck");
}

TEST(RuleSynthesis, NativeWithinToleranceNeedsNoRule) {
  std::vector<Measurement> m = {measured(1024, "native", 100), measured(1024, "ring", 98)};
  const auto result = synthesize_rules(m, {});
  EXPECT_EQ(result.rules, 0);
  EXPECT_NE(result.yaml.find("rules: []"), std::string::npos);
  parsed(result);
}

TEST(RuleSynthesis, AWinSmallerThanTheSpreadGivesNoRule) {
  // ring is 20% faster, but native's calls vary by 25 us: no evidence.
  std::vector<Measurement> noisy = {measured(1024, "native", 100, 25), measured(1024, "ring", 80, 5)};
  EXPECT_EQ(synthesize_rules(noisy, {}).rules, 0);
  // The algorithm's own spread counts too.
  std::vector<Measurement> noisy_ring = {measured(1024, "native", 100, 1), measured(1024, "ring", 80, 30)};
  EXPECT_EQ(synthesize_rules(noisy_ring, {}).rules, 0);
  // A win larger than both spreads is a rule.
  std::vector<Measurement> clear = {measured(1024, "native", 100, 5), measured(1024, "ring", 80, 5)};
  EXPECT_EQ(synthesize_rules(clear, {}).rules, 1);
  // Repeated measurements that disagree widen the spread: 80 and 110 for ring.
  std::vector<Measurement> repeated = {measured(1024, "native", 100), measured(1024, "ring", 80),
                                       measured(1024, "ring", 110)};
  EXPECT_EQ(synthesize_rules(repeated, {}).rules, 0);
}

// SMPI's rows: every selector of one SimGrid shares the algorithm rows of its site.
Measurement smpi_measured(long long block_bytes, const std::string& algorithm, double time_us) {
  Measurement m = measured(block_bytes, algorithm, time_us);
  m.mpi_library = "SMPI Version 3.32. Copyright The SimGrid Team 2007-2022";
  return m;
}

TEST(RuleSynthesis, EachLibraryIsJudgedAgainstItsOwnNative) {
  // ring at 80 us loses to smpi_mpich (60 us) but beats smpi_ompi (100 us): a job whose library is
  // SMPI's ompi selector runs ring, one under mpich's stays native. (Judged against the best of the
  // selectors, as before, no rule at all: the ompi job would keep its slower native.)
  std::vector<Measurement> m = {smpi_measured(1024, "smpi_ompi", 100), smpi_measured(1024, "smpi_mpich", 60),
                                smpi_measured(1024, "ring", 80)};
  const auto result = synthesize_rules(m, {});
  ASSERT_EQ(result.rules, 1) << result.yaml;
  const RuleTable table = parsed(result);
  EXPECT_EQ(runs(table, 1024, job_of("smpi-ompi", {3, 32})), "ring");
  EXPECT_EQ(runs(table, 1024, job_of("smpi-mpich", {3, 32})), "native");
  EXPECT_EQ(runs(table, 1024, job_of("smpi-ompi", {3, 36})), "native");  // SimGrid's version as measured
  EXPECT_EQ(result.libraries, (std::vector<std::string>{"smpi-mpich 3.32", "smpi-ompi 3.32"}));
  EXPECT_EQ(result.cells, 2);  // one cell, judged for each library
  EXPECT_NE(result.yaml.find("ratio to smpi-ompi 3.32's own native (smpi_ompi): geometric mean 1.25x"),
            std::string::npos)
      << result.yaml;
  EXPECT_NE(result.yaml.find("# MPI library: SMPI Version 3.32. Copyright The SimGrid Team 2007-2022\n  - collective: "
                             "allgather\n    when: { library: \"smpi-ompi 3.32\""),
            std::string::npos)
      << result.yaml;
  // A third selector that gets the same rule shares it: one rule for the list of both.
  m.push_back(smpi_measured(1024, "smpi_impi", 120));
  const auto shared = synthesize_rules(m, {});
  ASSERT_EQ(shared.rules, 1) << shared.yaml;
  EXPECT_NE(shared.yaml.find("ratio to smpi-impi 3.32's own native (smpi_impi): geometric mean 1.50x, worst cell "
                             "1.50x at 1024 B\n  # 1 cell, block_bytes 1024 measured; ratio to smpi-ompi 3.32's own "
                             "native (smpi_ompi): geometric mean 1.25x"),
            std::string::npos)
      << shared.yaml;
  EXPECT_NE(shared.yaml.find("when: { library: [\"smpi-impi 3.32\", \"smpi-ompi 3.32\"], procs: 16,"),
            std::string::npos)
      << shared.yaml;
  const RuleTable both = parsed(shared);
  EXPECT_EQ(runs(both, 1024, job_of("smpi-impi", {3, 32})), "ring");
  EXPECT_EQ(runs(both, 1024, job_of("smpi-ompi", {3, 32})), "ring");
  EXPECT_EQ(runs(both, 1024, job_of("smpi-mpich", {3, 32})), "native");
}

TEST(RuleSynthesis, TwoLibrariesInOneCsvGiveTwoRuleSetsEachWithItsOwnEvidence) {
  // Open MPI and MPICH measured on one platform: each one's algorithm rows ran over its own library.
  auto mpich = [](long long size, const std::string& algorithm, double time) {
    Measurement x = measured(size, algorithm, time);
    x.mpi_library = "MPICH Version:\t4.0.2";
    return x;
  };
  std::vector<Measurement> m = {measured(1024, "native", 100), measured(1024, "ring", 50),
                                measured(4096, "native", 100), measured(4096, "ring", 120),
                                mpich(1024, "native", 40),     mpich(1024, "ring", 50),
                                mpich(4096, "native", 200),    mpich(4096, "ring", 100)};
  const auto result = synthesize_rules(m, {});
  ASSERT_EQ(result.rules, 2) << result.yaml;
  const RuleTable table = parsed(result);
  EXPECT_EQ(runs(table, 1024), "ring");
  EXPECT_EQ(runs(table, 4096), "native");
  EXPECT_EQ(runs(table, 1024, job_of("mpich", {4, 0, 2})), "native");
  EXPECT_EQ(runs(table, 4096, job_of("mpich", {4, 0, 2})), "ring");
  EXPECT_EQ(result.libraries, (std::vector<std::string>{"mpich 4.0.2", "ompi 4.1.4"}));
  EXPECT_NE(result.yaml.find("# 1 cell, block_bytes 4096 measured; ratio to mpich 4.0.2's own native (native): "
                             "geometric mean 2.00x"),
            std::string::npos)
      << result.yaml;
  EXPECT_NE(result.yaml.find("# MPI library: MPICH Version:\t4.0.2\n"), std::string::npos) << result.yaml;
  EXPECT_NE(result.yaml.find("# 1 cell, block_bytes 1024 measured; ratio to ompi 4.1.4's own native (native): "
                             "geometric mean 2.00x"),
            std::string::npos)
      << result.yaml;
}

TEST(RuleSynthesis, VersionsOfOneLibraryShareARangeAndItsWorstCase) {
  // Open MPI 4.1.4 and 5.0.3 on one platform: one rule set for "ompi 4.1.4-5.0.3", each cell judged
  // against both natives: ring is 2x over 4.1.4 but only 1.2x over 5.0.3.
  std::vector<Measurement> m = {measured(1024, "native", 100), measured(1024, "ring", 50)};
  for (Measurement x : {measured(1024, "native", 60), measured(1024, "ring", 50)}) {
    x.mpi_library = "Open MPI v5.0.3, package: Open MPI";
    m.push_back(x);
  }
  const auto result = synthesize_rules(m, {});
  ASSERT_EQ(result.rules, 1) << result.yaml;
  EXPECT_EQ(result.libraries, std::vector<std::string>{"ompi 4.1.4-5.0.3"});
  EXPECT_NE(result.yaml.find("worst cell 1.20x"), std::string::npos) << result.yaml;
  const RuleTable table = parsed(result);
  EXPECT_EQ(runs(table, 1024, job_of("ompi", {4, 1, 6})), "ring");  // between the versions measured
  EXPECT_EQ(runs(table, 1024, job_of("ompi", {5, 0, 4})), "native");
  // Ring loses to 5.0.3's native: no rule for either.
  m[3].time_us = 70;
  EXPECT_EQ(synthesize_rules(m, {}).rules, 0);
}

TEST(RuleSynthesis, ALibraryNoRuleCanNameStandsAloneOnly) {
  std::vector<Measurement> m = {measured(1024, "native", 100), measured(1024, "ring", 50)};
  for (Measurement& x : m) x.mpi_library = "Intel(R) MPI Library 2021.6 for Linux* OS";
  const auto alone = synthesize_rules(m, {});
  ASSERT_EQ(alone.rules, 1) << alone.yaml;
  EXPECT_EQ(alone.yaml.find("when: { library"), std::string::npos) << alone.yaml;
  ASSERT_EQ(alone.notes.size(), 1u);
  EXPECT_NE(alone.notes[0].find("cannot be named in a rule ('Intel(R) MPI Library 2021.6 for Linux* OS' (synthetic))"),
            std::string::npos)
      << alone.notes[0];
  m.push_back(measured(1024, "native", 90));
  m.push_back(measured(1024, "ring", 45));
  const auto mixed = synthesize_rules(m, {});
  ASSERT_EQ(mixed.errors.size(), 1u);
  EXPECT_NE(mixed.errors[0].find("native rows of an MPI library no rule can name"), std::string::npos)
      << mixed.errors[0];
}

TEST(RuleSynthesis, EveryRuleCarriesItsEvidence) {
  std::vector<Measurement> m = {measured(1024, "native", 100), measured(1024, "bruck:radix=4", 50),
                                measured(2048, "native", 100), measured(2048, "bruck:radix=4", 80)};
  const auto result = synthesize_rules(m, {});
  ASSERT_EQ(result.rules, 1) << result.yaml;
  parsed(result);
  EXPECT_NE(result.yaml.find("# 2 cells, block_bytes 1024..2048 measured; ratio to ompi 4.1.4's own native (native): "
                             "geometric mean 1.58x, worst cell 1.25x at 2048 B\n"),
            std::string::npos)
      << result.yaml;
  EXPECT_NE(result.yaml.find("# platform: lab; date: 2024-05-01\n"), std::string::npos) << result.yaml;
  EXPECT_NE(result.yaml.find("# MPI library: Open MPI v4.1.4\n"), std::string::npos) << result.yaml;
  EXPECT_NE(result.yaml.find("use: \"bruck:radix=4\""), std::string::npos) << result.yaml;
}

// A cost-model prediction of the same sweep (collshim-model predict --native --csv).
Measurement predicted(long long block_bytes, const std::string& algorithm, double time_us) {
  Measurement m = measured(block_bytes, algorithm, time_us);
  m.predicted = true;
  m.mpi_library = m.date = "";
  return m;
}

TEST(RuleSynthesis, PredictionsFillOnlyCellsNobodyMeasured) {
  // 1024 B was measured (native wins there); 2048 and 4096 B only predicted, where bruck beats the
  // costed library decisions by 2x. The prediction for 1024 B says bruck too, but the measurement rules.
  std::vector<Measurement> m = {measured(1024, "native", 50), measured(1024, "bruck", 100),
                                predicted(1024, "native:ompi", 100), predicted(1024, "bruck", 50)};
  for (const long long size : {2048, 4096}) {
    m.push_back(predicted(size, "native:ompi", 200));
    m.push_back(predicted(size, "native:mpich", 150));
    m.push_back(predicted(size, "bruck", 75));
  }
  SynthesisOptions options;
  options.predicted_inputs = {"pred.csv"};
  const auto result = synthesize_rules(m, options);
  // Judged per costed library (native:ompi and native:mpich are SMPI 3.32's selectors), each gets the
  // same rule: one rule for both.
  ASSERT_EQ(result.rules, 1) << result.yaml;
  EXPECT_NE(result.yaml.find("when: { library: [\"smpi-mpich 3.32\", \"smpi-ompi 3.32\"], procs: 16,"),
            std::string::npos)
      << result.yaml;
  const RuleTable table = parsed(result);
  EXPECT_EQ(runs(table, 1024), "native");
  EXPECT_EQ(runs(table, 2048), "native");  // Open MPI was measured at 1024 B only
  for (const JobFacts& job : {job_of("smpi-ompi", {3, 32}), job_of("smpi-mpich", {3, 32})}) {
    EXPECT_EQ(runs(table, 1024, job), "native");  // measured: no prediction overrides it
    EXPECT_EQ(runs(table, 2048, job), "bruck");
    EXPECT_EQ(runs(table, 4096, job), "bruck");
  }
  EXPECT_EQ(result.cells, 1);
  EXPECT_EQ(result.predicted_cells, 4);  // two cells, judged for each library
  EXPECT_EQ(result.predicted_cells_with_rule, 4);
  EXPECT_EQ(result.predictions_overridden, 2);
  // Each against its own library: 150 us for mpich (2.00x), 200 us for ompi (2.67x).
  EXPECT_NE(result.yaml.find("# 2 cells, block_bytes 2048..4096 predicted, none measured; ratio to smpi-mpich 3.32's "
                             "own native (native:mpich): geometric mean 2.00x, worst cell 2.00x at 2048 B\n"
                             "  # 2 cells, block_bytes 2048..4096 predicted, none measured; ratio to smpi-ompi 3.32's "
                             "own native (native:ompi): geometric mean 2.67x"),
            std::string::npos)
      << result.yaml;
  EXPECT_NE(result.yaml.find("# predicted by the cost model (collshim-model predict --native); native = the library's "
                             "decision, costed; wins count beyond 10%\n  - collective"),
            std::string::npos)
      << result.yaml;
  EXPECT_NE(result.yaml.find("# Cells nobody measured are filled with the cost model's predictions from pred.csv\n"),
            std::string::npos)
      << result.yaml;
}

TEST(RuleSynthesis, APredictedWinWithinTheMarginIsNoEvidence) {
  // 8% faster than predicted native: inside the default 10% margin, so no rule; a 5% margin takes it.
  const std::vector<Measurement> m = {predicted(1024, "native:ompi", 100), predicted(1024, "ring", 92)};
  EXPECT_EQ(synthesize_rules(m, {}).rules, 0);
  SynthesisOptions loose;
  loose.prediction_margin = 0.05;
  EXPECT_EQ(synthesize_rules(m, loose).rules, 1);
}

TEST(RuleSynthesis, APredictedCellWithoutACostedNativeGetsNoRuleAndANote) {
  // The library's algorithm had no schedule there (collshim-model wrote no native row): not an
  // error, as it would be for a measurement, but no rule either.
  const std::vector<Measurement> m = {predicted(1024, "ring", 10)};
  const auto result = synthesize_rules(m, {});
  EXPECT_TRUE(result.errors.empty()) << result.errors[0];
  EXPECT_EQ(result.rules, 0);
  ASSERT_EQ(result.notes.size(), 1u);
  EXPECT_EQ(result.notes[0].rfind("1 predicted cell(s) have no costed native row", 0), 0u) << result.notes[0];
}

TEST(RuleSynthesis, AMeasuredCellStopsAPredictedRangeFromWidening) {
  // Predicted: bruck wins at 16 ranks (2048 B) and at 32 ranks (2048 B); measured at 24 ranks in
  // between, native wins. The predicted rules stay apart: the measurement inside the hull refutes it.
  // The measurement is of the same library (SMPI's ompi selector) as the predictions.
  std::vector<Measurement> m;
  for (const int procs : {16, 24, 32}) {
    const bool measured_here = procs == 24;
    Measurement native = measured_here ? smpi_measured(2048, "smpi_ompi", 50) : predicted(2048, "native:ompi", 100);
    Measurement bruck = measured_here ? smpi_measured(2048, "bruck", 100) : predicted(2048, "bruck", 50);
    native.procs = bruck.procs = procs;
    m.push_back(native);
    m.push_back(bruck);
  }
  const auto result = synthesize_rules(m, {});
  EXPECT_EQ(result.rules, 2) << result.yaml;
  EXPECT_EQ(result.cells, 1);
  EXPECT_EQ(result.predicted_cells_with_rule, 2);
}

TEST(RuleSynthesis, ACellWithoutNativeIsAnErrorNamingItsRow) {
  std::vector<Measurement> m = {measured(1024, "ring", 50)};
  m[0].source = "results.csv:7";
  const auto result = synthesize_rules(m, {});
  ASSERT_EQ(result.errors.size(), 1u);
  EXPECT_EQ(result.errors[0].rfind("results.csv:7: no native (or smpi_<selector>) row for this cell", 0), 0u)
      << result.errors[0];
}

TEST(RuleSynthesis, RobustNeedsTheAlgorithmMeasuredOnEveryPlatformOfTheCell) {
  SynthesisOptions robust;
  robust.robust = true;
  std::vector<Measurement> m = {measured(1024, "native", 100, 0, "a"), measured(1024, "ring", 50, 0, "a"),
                                measured(1024, "native", 100, 0, "b")};
  EXPECT_EQ(synthesize_rules(m, robust).rules, 0);
}

TEST(RuleSynthesis, SeveralPlatformsNeedRobust) {
  std::vector<Measurement> m = {measured(1024, "native", 100, 0, "a"), measured(1024, "ring", 50, 0, "a"),
                                measured(1024, "native", 100, 0, "b"), measured(1024, "ring", 50, 0, "b")};
  const auto result = synthesize_rules(m, {});
  ASSERT_EQ(result.errors.size(), 1u);
  EXPECT_NE(result.errors[0].find("--robust"), std::string::npos);
}

TEST(RuleSynthesis, RobustTakesTheBestWorstCaseAndNeedsFivePercent) {
  SynthesisOptions robust;
  robust.robust = true;
  // ring: 2.0x on a, 1.04x on b (worst 1.04 < 1.05); sparbit: 1.2x and 1.1x (worst 1.1).
  std::vector<Measurement> m = {
      measured(1024, "native", 100, 0, "a"),        measured(1024, "ring", 50, 0, "a"),
      measured(1024, "sparbit", 100 / 1.2, 0, "a"), measured(1024, "native", 104, 0, "b"),
      measured(1024, "ring", 100, 0, "b"),          measured(1024, "sparbit", 104 / 1.1, 0, "b")};
  const auto result = synthesize_rules(m, robust);
  ASSERT_EQ(result.rules, 1) << result.yaml;
  EXPECT_EQ(runs(parsed(result), 1024), "sparbit");
  EXPECT_NE(result.yaml.find("worst cell 1.10x"), std::string::npos) << result.yaml;
  EXPECT_NE(result.yaml.find("platform: a, b"), std::string::npos) << result.yaml;
  // Without sparbit, ring's worst case (1.04) is below 1.05: no rule.
  std::erase_if(m, [](const Measurement& x) { return x.algorithm == "sparbit"; });
  EXPECT_EQ(synthesize_rules(m, robust).rules, 0);
}

TEST(RuleSynthesis, RobustTakesTheWorstOverPlatformsForEachLibraryApart) {
  SynthesisOptions robust;
  robust.robust = true;
  // Two platforms, two SMPI selectors each. Against ompi's selector ring is 2x on a and 1.5x on b;
  // against mpich's it is 2x on a but loses on b. Worst over platforms, per library: a rule for ompi's
  // selector only (the best of the selectors would have given none).
  auto at = [](const std::string& platform, const std::string& algorithm, double time) {
    Measurement x = smpi_measured(1024, algorithm, time);
    x.platform = platform;
    return x;
  };
  const std::vector<Measurement> m = {at("a", "smpi_ompi", 100), at("a", "smpi_mpich", 100), at("a", "ring", 50),
                                      at("b", "smpi_ompi", 90),  at("b", "smpi_mpich", 40),  at("b", "ring", 60)};
  const auto result = synthesize_rules(m, robust);
  ASSERT_EQ(result.rules, 1) << result.yaml;
  const RuleTable table = parsed(result);
  EXPECT_EQ(runs(table, 1024, job_of("smpi-ompi", {3, 32})), "ring");
  EXPECT_EQ(runs(table, 1024, job_of("smpi-mpich", {3, 32})), "native");
  EXPECT_NE(result.yaml.find("ratio to smpi-ompi 3.32's own native (smpi_ompi) (worst over platforms per cell): "
                             "geometric mean 1.50x"),
            std::string::npos)
      << result.yaml;
  EXPECT_NE(result.yaml.find("# platform: a, b;"), std::string::npos) << result.yaml;
}

// A call at another placement: procs, nodes and ppn as given, 2 nodes' worth of the default sweep otherwise.
std::string runs_at(const RuleTable& table, long long block_bytes, int procs, int nodes, int ppn,
                    MappingClass mapping = MappingClass::sequential) {
  const CallFacts facts{Collective::allgather, procs, block_bytes, mapping, nodes, ppn, false};
  for (const Rule& rule : table.rules()) {
    if (rule.collective == facts.collective && rule.when.matches(facts)) return rule.use.text();
  }
  return "native";
}

Measurement measured_at(long long size, const std::string& algorithm, double time, int procs, int nodes,
                        MappingClass mapping = MappingClass::sequential) {
  Measurement x = measured(size, algorithm, time);
  x.procs = procs;
  x.nodes = nodes;
  x.mapping = mapping;
  return x;
}

TEST(RuleSynthesis, SweepsWithOneWinnerWidenToTheHullOfTheirPlacements) {
  // ring wins at 16 and 64 ranks (2 and 8 nodes of 8), both mappings: one rule per mapping over
  // procs 16-64, nodes 2-8, which also claims the unmeasured 32 ranks in between.
  std::vector<Measurement> m;
  for (auto mapping : {MappingClass::sequential, MappingClass::cyclic}) {
    for (int nodes : {2, 8}) {
      for (long long size : {64, 128}) {
        m.push_back(measured_at(size, "native", 100, 8 * nodes, nodes, mapping));
        m.push_back(measured_at(size, "ring", 50, 8 * nodes, nodes, mapping));
      }
    }
  }
  const auto result = synthesize_rules(m, {});
  EXPECT_EQ(result.rules, 2) << result.yaml;
  const RuleTable table = parsed(result);  // no "can never match" warning
  EXPECT_EQ(runs_at(table, 96, 32, 4, 8), "ring");
  EXPECT_EQ(runs_at(table, 96, 32, 4, 8, MappingClass::cyclic), "ring");
  EXPECT_EQ(runs_at(table, 256, 32, 4, 8), "native");   // sizes stay as measured
  EXPECT_EQ(runs_at(table, 64, 128, 16, 8), "native");  // and so do placements beyond the hull
  EXPECT_NE(result.yaml.find("4 cells, block_bytes 64..128 measured"), std::string::npos) << result.yaml;
}

TEST(RuleSynthesis, AMeasuredCellInsideTheHullThatDisagreesKeepsRulesApart) {
  // ring wins at 16 and 64 ranks, but at 32 ranks (measured) it loses to native: no widening.
  std::vector<Measurement> m;
  for (int nodes : {2, 4, 8}) {
    m.push_back(measured_at(64, "native", 100, 8 * nodes, nodes));
    m.push_back(measured_at(64, "ring", nodes == 4 ? 150 : 50, 8 * nodes, nodes));
  }
  const auto result = synthesize_rules(m, {});
  EXPECT_EQ(result.rules, 2) << result.yaml;
  const RuleTable table = parsed(result);
  EXPECT_EQ(runs_at(table, 64, 16, 2, 8), "ring");
  EXPECT_EQ(runs_at(table, 64, 32, 4, 8), "native");
  EXPECT_EQ(runs_at(table, 64, 64, 8, 8), "ring");
}

TEST(RuleSynthesis, AHullThatWouldMeetAnotherRuleIsNotTaken) {
  // ring at 16 and 64 ranks, sparbit at 32: ring's hull would meet sparbit's rule, so three rules.
  std::vector<Measurement> m;
  for (int nodes : {2, 4, 8}) {
    m.push_back(measured_at(64, "native", 100, 8 * nodes, nodes));
    m.push_back(measured_at(64, "ring", nodes == 4 ? 100 : 50, 8 * nodes, nodes));
    m.push_back(measured_at(64, "sparbit", nodes == 4 ? 50 : 100, 8 * nodes, nodes));
  }
  const auto result = synthesize_rules(m, {});
  EXPECT_EQ(result.rules, 3) << result.yaml;
  const RuleTable table = parsed(result);
  EXPECT_EQ(runs_at(table, 64, 32, 4, 8), "sparbit");
}

// Wider rules: a range goes on through cells where its algorithm is within the tolerance of the best
// and never below native, even where noise hides its win; adjacent ranges merge where one's algorithm
// serves the other's cells so.
TEST(RuleSynthesis, ARangeGoesOnThroughNoiseButNeverBelowNative) {
  std::vector<Measurement> m;
  for (long long size : {64, 128, 256, 512, 1024}) {
    // At 256 B native's calls vary by 10 us: ring's 2% win is no evidence, but costs nothing either.
    m.push_back(measured(size, "native", 100, size == 256 ? 10 : 1));
    m.push_back(measured(size, "ring", size == 256 ? 98 : 50, 1));
  }
  const auto result = synthesize_rules(m, {});
  ASSERT_EQ(result.rules, 1) << result.yaml;  // two before (64-128 and 512-1024)
  EXPECT_EQ(runs(parsed(result), 256), "ring");
  EXPECT_NE(result.yaml.find("5 cells, block_bytes 64..1024 measured;"), std::string::npos) << result.yaml;
  // 1% slower than native at 256 B: the range stops there.
  m[5].time_us = 101;
  const auto stopped = synthesize_rules(m, {});
  EXPECT_EQ(stopped.rules, 2) << stopped.yaml;
  EXPECT_EQ(runs(parsed(stopped), 256), "native");
}

TEST(RuleSynthesis, AdjacentRangesMergeWhereOneAlgorithmServesBothWithinTolerance) {
  // 64-256 B: bruck is best and the only one whose win is clear (sparbit's calls are noisy there);
  // 512 B-2 KiB: sparbit is best and bruck far behind. Sparbit is within 3% of bruck at the small
  // sizes, so one sparbit rule serves all six.
  std::vector<Measurement> m;
  for (long long size : {64, 128, 256, 512, 1024, 2048}) {
    const bool small = size <= 256;
    m.push_back(measured(size, "native", 100, 1));
    m.push_back(measured(size, "bruck", small ? 50 : 90, 1));
    m.push_back(measured(size, "sparbit", small ? 51 : 50, small ? 60 : 1));
  }
  const auto result = synthesize_rules(m, {});
  ASSERT_EQ(result.rules, 1) << result.yaml;  // two before: bruck 64-384, sparbit 385-2048
  const RuleTable table = parsed(result);
  for (long long size : {64, 300, 2048}) EXPECT_EQ(runs(table, size), "sparbit") << size;
  EXPECT_NE(result.yaml.find("worst cell 1.96x at 64 B"), std::string::npos) << result.yaml;
  // Beyond the tolerance (sparbit 6% behind bruck at 64-256 B) the two rules stay.
  for (Measurement& x : m) {
    if (x.algorithm == "sparbit" && x.block_bytes <= 256) x.time_us = 53;
  }
  const auto apart = synthesize_rules(m, {});
  EXPECT_EQ(apart.rules, 2) << apart.yaml;
  EXPECT_EQ(runs(parsed(apart), 128), "bruck");
}

// CSV input: the columns collshim-bench --csv writes.
const std::string header =
    "collective,distribution,ranks,bytes,total_bytes,algorithm,min_us,avg_us,max_us,ratio_to_native,verified,"
    "nodes,ppn,mapping,block_bytes,median_us,spread_us,platform,mpi_library,date\n";

CsvReadResult read(const std::string& text, const std::string& platform = "") {
  std::istringstream in(text);
  CsvReadResult result;
  read_measurements(in, "results.csv", platform, result);
  return result;
}

TEST(RuleSynthesisCsv, ReadsCollshimBenchOutput) {
  const auto result =
      read("# collshim-bench: comment lines are skipped\n" + header +
               "allgather,,16,1024,16384,native,1,2,3,1.0,ok,2,8,sequential,1024,3.5,0.25,,"
               "\"Open MPI v4.1.4, package: Debian\",2024-05-01\n"
               "allgather,,16,1024,16384,bruck:radix=2,1,2,3,1.0,ok,2,8,sequential,1024,2.5,0.5,,x,2024-05-01\n",
           "lab");
  ASSERT_TRUE(result.errors.empty()) << result.errors[0];
  ASSERT_EQ(result.measurements.size(), 2u);
  EXPECT_TRUE(result.measurements[0].native);
  EXPECT_EQ(result.measurements[0].mpi_library, "Open MPI v4.1.4, package: Debian");
  EXPECT_EQ(result.measurements[0].platform, "lab");     // from --platform: the column is empty
  EXPECT_EQ(result.measurements[1].algorithm, "bruck");  // canonical: default parameters dropped
  EXPECT_DOUBLE_EQ(result.measurements[1].time_us, 2.5);
  EXPECT_EQ(result.measurements[1].source, "results.csv:4");  // line numbers count comments
}

// collshim-model predict --csv: read as predictions (no spread column), Alltoallv's pattern as the
// variant; rules and verify refuse them (collshim_tune.cpp), plot draws them.
TEST(RuleSynthesisCsv, ReadsCollshimModelPredictionsAsPredicted) {
  const auto result = read(
      "platform,collective,pattern,procs,ppn,mapping,bytes,algorithm,predicted_us,approximated,model_seconds,nodes,"
      "block_bytes\n"
      "fattree,alltoallv,sparse_8,64,16,sequential,8,linear,21.8,0,0.001,4,1\n"
      "fattree,alltoallv,sparse_8,64,16,sequential,8,hierarchical,9.5,1,0.001,4,1\n");
  ASSERT_TRUE(result.errors.empty()) << result.errors[0];
  // The approximated one (an opaque phase) is no evidence: left out, with a note.
  ASSERT_EQ(result.measurements.size(), 1u);
  ASSERT_EQ(result.notes.size(), 1u);
  EXPECT_NE(result.notes[0].find("1 predictions left out, approximated"), std::string::npos) << result.notes[0];
  const Measurement& m = result.measurements[0];
  EXPECT_TRUE(m.predicted);
  EXPECT_EQ(m.variant, "sparse_8");
  EXPECT_DOUBLE_EQ(m.time_us, 21.8);
  EXPECT_EQ(m.block_bytes, 1);
  EXPECT_FALSE(read(header + "allgather,,16,1024,16384,native,1,2,3,1.0,ok,2,8,sequential,1024,3.5,0.25,lab,x,d\n")
                   .measurements[0]
                   .predicted);
}

TEST(RuleSynthesisCsv, ErrorsNameFileLineAndColumn) {
  auto first_error = [](const std::string& text) {
    const auto result = read(text);
    return result.errors.empty() ? std::string("(none)") : result.errors[0];
  };
  const std::string good = "allgather,,16,1024,16384,native,1,2,3,1.0,ok,2,8,sequential,1024,3.5,0.25,lab,x,d\n";
  EXPECT_EQ(first_error(header + good +
                        "allgather,,16,1024,16384,native,1,2,3,1.0,ok,2,8,sequential,1024,fast,0.25,lab,x,d\n"),
            "results.csv:3: column 'median_us': expected a positive number of microseconds, got 'fast'");
  EXPECT_EQ(first_error(header + "allgather,,16,1024,16384,native,1,2,3,1.0,ok,2,8,diagonal,1024,3,0,lab,x,d\n"),
            "results.csv:2: column 'mapping': expected single_node, sequential, cyclic or irregular, got 'diagonal'");
  EXPECT_EQ(first_error(header + "allgather,,0,1024,16384,native,1,2,3,1.0,ok,2,8,sequential,1024,3,0,lab,x,d\n"),
            "results.csv:2: column 'ranks': expected an integer from 1 to 2147483647, got '0'");
  EXPECT_NE(first_error(header + "allgather,,16,1024,16384,brick,1,2,3,1.0,ok,2,8,sequential,1024,3,0,lab,x,d\n")
                .find("results.csv:2: column 'algorithm': unknown algorithm 'brick'"),
            std::string::npos);
  EXPECT_EQ(first_error(header + "alltoall_smash,,16,1024,16384,native,1,2,3,1.0,ok,2,8,sequential,1024,3,0,lab,x,d\n")
                .rfind("results.csv:2: column 'collective': expected ", 0),
            0u);
  EXPECT_EQ(first_error(header + "allgather,,16,1024\n"),
            "results.csv:2: 4 fields, the header names 20 (column 'total_bytes' is missing)");
  EXPECT_EQ(
      first_error("collective,ranks,nodes,ppn,mapping,block_bytes,algorithm,median_us\n"),
      "results.csv:1: the header has no column 'spread_us' (collshim-bench --csv writes every column rules needs)");
  EXPECT_EQ(first_error(""), "results.csv: no header line (expected collshim-bench --csv output)");
  EXPECT_EQ(first_error(header + "allgather,\"open\n"), "results.csv:2: unterminated quoted field");
}

TEST(RuleSynthesisCsv, MismatchesAndOneProcessCellsAreLeftOutWithANote) {
  const auto result =
      read(header + "allgather,,16,1024,16384,ring,1,2,3,1.0,MISMATCH,2,8,sequential,1024,3,0,lab,x,d\n" +
           "allgather,,1,1024,1024,ring,1,2,3,1.0,ok,1,1,single_node,1024,3,0,lab,x,d\n");
  EXPECT_TRUE(result.errors.empty());
  EXPECT_TRUE(result.measurements.empty());
  ASSERT_EQ(result.notes.size(), 2u);
  EXPECT_EQ(result.notes[0], "results.csv:2: left out, verified is 'MISMATCH'");
}

}  // namespace
}  // namespace collshim::tune
