// collshim-tune verify on synthetic measurements: per-cell speedups, the pass-through convention, the
// geometric mean, worst cell, share within 5% of the best, the threshold count, and cells whose
// decision was never measured.
#include <gtest/gtest.h>

#include <cmath>

#include "verification.hpp"

namespace collshim::tune {
namespace {

Measurement row(long long block_bytes, const std::string& algorithm, double time_us, const std::string& decision = "") {
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
  m.table = algorithm == table_label;
  m.decision = decision;
  m.time_us = time_us;
  m.platform = "lab";
  return m;
}

TEST(Verification, TableRowsGiveSpeedupsAndPassThroughCountsAsOne) {
  const std::vector<Measurement> m = {
      row(64, "native", 10),  row(64, "collshim", 5, "bruck"),     // 2x
      row(128, "native", 10), row(128, "collshim", 12, "native"),  // noise: counts as 1
      row(256, "native", 10), row(256, "collshim", 20, "ring"),    // 0.5x: below
  };
  const VerifyResult r = verify_table(m, nullptr, 0.95);
  ASSERT_TRUE(r.errors.empty());
  ASSERT_EQ(r.cells.size(), 3u);
  EXPECT_DOUBLE_EQ(r.cells[0].speedup, 2.0);
  EXPECT_DOUBLE_EQ(r.cells[1].speedup, 1.0);
  EXPECT_NEAR(r.cells[1].measured_speedup, 10.0 / 12.0, 1e-12);
  EXPECT_DOUBLE_EQ(r.cells[2].speedup, 0.5);
  EXPECT_EQ(r.below, 1);
  ASSERT_NE(r.worst, nullptr);
  EXPECT_EQ(r.worst->block_bytes, 256);
  EXPECT_NEAR(r.geometric_mean, std::cbrt(2.0 * 1.0 * 0.5), 1e-12);
  EXPECT_EQ(r.within_5_percent, 2);  // the 256 B cell's best is native (10), the table took 20
}

// Rows of SimGrid 3.32's SMPI, where the selector plays the library.
Measurement smpi_row(long long block_bytes, const std::string& algorithm, double time_us,
                     const std::string& decision = "") {
  Measurement m = row(block_bytes, algorithm, time_us, decision);
  m.mpi_library = "SMPI Version 3.32. Copyright The SimGrid Team 2007-2022";
  return m;
}

TEST(Verification, EachLibraryIsJudgedWithItsRulesAgainstItsOwnNative) {
  const std::vector<Measurement> m = {
      smpi_row(64, "smpi_ompi", 12),  smpi_row(64, "smpi_mpich", 10), smpi_row(64, "bruck", 4),
      smpi_row(64, "ring", 8),        smpi_row(128, "smpi_ompi", 10), smpi_row(128, "bruck", 11),
      smpi_row(256, "smpi_ompi", 10), smpi_row(256, "ring", 9),
  };
  std::vector<std::string> asked;
  const auto decide = [&](const CallFacts& facts, const MpiLibrary& library) -> std::string {
    asked.push_back(library.text() + " " + std::to_string(facts.block_bytes));
    if (library.name == "smpi-mpich") return "";  // the table has no rule for mpich's selector
    if (facts.block_bytes == 64) return "ring";
    if (facts.block_bytes == 128) return "";  // no rule: native
    return "sparbit";                         // never measured at 256
  };
  const VerifyResult r = verify_table(m, decide, 0.95);
  ASSERT_TRUE(r.errors.empty());
  EXPECT_EQ(asked, (std::vector<std::string>{"smpi-mpich 3.32 64", "smpi-ompi 3.32 64", "smpi-ompi 3.32 128",
                                             "smpi-ompi 3.32 256"}));
  ASSERT_EQ(r.cells.size(), 3u);
  EXPECT_EQ(r.cells[0].library, "smpi-mpich 3.32");
  EXPECT_DOUBLE_EQ(r.cells[0].native_us, 10);
  EXPECT_DOUBLE_EQ(r.cells[0].speedup, 1.0);
  EXPECT_EQ(r.cells[1].library, "smpi-ompi 3.32");
  EXPECT_DOUBLE_EQ(r.cells[1].native_us, 12);  // its own selector, not the fastest one
  EXPECT_DOUBLE_EQ(r.cells[1].speedup, 12.0 / 8.0);
  EXPECT_EQ(r.cells[1].best, "bruck");
  EXPECT_EQ(r.cells[2].decision, "native");
  EXPECT_DOUBLE_EQ(r.cells[2].speedup, 1.0);
  EXPECT_EQ(r.unmeasured, 1);
  EXPECT_EQ(r.within_5_percent, 1);  // 128 B; at 64 B bruck (4) beats both
  const std::string report = verify_report(r, 0.95);
  EXPECT_NE(report.find("1 cell(s) left out"), std::string::npos);
  EXPECT_NE(report.find("lab          smpi-ompi 3.32     allgather"), std::string::npos) << report;
}

// A verify run under one selector holds the table's rows; natives measured in other runs (other
// selectors) join them, and a table row counts for the decision it ran, not for another.
TEST(Verification, ATableRowCountsAsAMeasurementOfTheDecisionItRan) {
  const std::vector<Measurement> m = {
      smpi_row(64, "smpi_ompi", 12),  smpi_row(64, "collshim", 6, "bruck"), smpi_row(64, "smpi_mpich", 9),  // 2x, 1.5x
      smpi_row(128, "smpi_ompi", 12), smpi_row(128, "collshim", 6, "ring"),  // the table here says bruck: unmeasured
  };
  const auto decide = [](const CallFacts&, const MpiLibrary&) -> std::string { return "bruck"; };
  const VerifyResult r = verify_table(m, decide, 0.95);
  ASSERT_TRUE(r.errors.empty()) << r.errors[0];
  ASSERT_EQ(r.cells.size(), 2u);
  EXPECT_EQ(r.cells[0].block_bytes, 64);
  EXPECT_DOUBLE_EQ(r.cells[0].speedup, 1.5);  // smpi-mpich
  EXPECT_DOUBLE_EQ(r.cells[1].speedup, 2.0);  // smpi-ompi
  EXPECT_EQ(r.unmeasured, 1);
}

// Without a decision function the table row is the decision, and it must be clear whose it is.
TEST(Verification, ATableRowBesideSeveralLibrariesIsAnError) {
  const VerifyResult one =
      verify_table({smpi_row(64, "smpi_ompi", 12), smpi_row(64, "collshim", 6, "bruck")}, nullptr, 0.95);
  ASSERT_TRUE(one.errors.empty()) << one.errors[0];
  EXPECT_EQ(one.cells[0].library, "smpi-ompi 3.32");
  EXPECT_DOUBLE_EQ(one.cells[0].speedup, 2.0);
  const VerifyResult two =
      verify_table({smpi_row(64, "smpi_ompi", 12), smpi_row(64, "smpi_mpich", 9), smpi_row(64, "collshim", 6, "bruck")},
                   nullptr, 0.95);
  ASSERT_FALSE(two.errors.empty());
  EXPECT_NE(two.errors[0].find("beside the natives of several libraries"), std::string::npos) << two.errors[0];
}

TEST(Verification, CellsWithoutNativeOrTableRowsAreErrors) {
  const VerifyResult no_native = verify_table({row(64, "bruck", 4)}, nullptr, 0.95);
  ASSERT_EQ(no_native.errors.size(), 1u);
  EXPECT_NE(no_native.errors[0].find("without a native row"), std::string::npos);
  const VerifyResult no_table = verify_table({row(64, "native", 4)}, nullptr, 0.95);
  ASSERT_EQ(no_table.errors.size(), 1u);
  EXPECT_NE(no_table.errors[0].find("--rules"), std::string::npos);
}

}  // namespace
}  // namespace collshim::tune
