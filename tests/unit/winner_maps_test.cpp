// collshim-tune plot's data: per sweep the fastest implementation of each cell and its speed-up over
// the fastest library label, laid out procs x block_bytes, and the JSON the drawing script reads.
#include <gtest/gtest.h>

#include "winner_maps.hpp"

namespace collshim::tune {
namespace {

Measurement row(int procs, long long block_bytes, const std::string& algorithm, double time_us) {
  Measurement m;
  m.collective = Collective::allgather;
  m.procs = procs;
  m.nodes = procs / 8;
  m.ppn = 8;
  m.mapping = MappingClass::sequential;
  m.block_bytes = block_bytes;
  m.algorithm = algorithm;
  m.native = is_native_label(algorithm);
  m.time_us = time_us;
  m.platform = "sim";
  return m;
}

TEST(WinnerMaps, FastestPerCellAndSpeedupOverTheBestLibrary) {
  const std::vector<Measurement> m = {
      row(16, 64, "smpi_ompi", 10), row(16, 64, "smpi_mpich", 8), row(16, 64, "bruck", 4), row(32, 64, "smpi_ompi", 10),
      row(32, 64, "bruck", 12),     row(16, 1024, "bruck", 3),  // no native measured: no speed-up
  };
  const auto maps = winner_maps(m);
  ASSERT_EQ(maps.size(), 1u);
  const WinnerMap& map = maps[0];
  EXPECT_EQ(map.procs, (std::vector<int>{16, 32}));
  EXPECT_EQ(map.block_bytes, (std::vector<long long>{64, 1024}));
  EXPECT_EQ(map.winner[0][0], "bruck");
  EXPECT_DOUBLE_EQ(*map.speedup[0][0], 2.0);  // the fastest library (8) over bruck (4)
  EXPECT_EQ(map.winner[0][1], "native");
  EXPECT_DOUBLE_EQ(*map.speedup[0][1], 1.0);
  EXPECT_EQ(map.winner[1][0], "bruck");
  EXPECT_FALSE(map.speedup[1][0]);
  EXPECT_EQ(map.winner[1][1], "");  // not measured
  EXPECT_EQ(map.file, "winners-sim-allgather-sequential-ppn8.png");
  const std::string json = winner_maps_json(maps);
  EXPECT_NE(json.find("\"procs\": [16, 32]"), std::string::npos) << json;
  EXPECT_NE(json.find("\"speedup\": [[2, 1], [null, null]]"), std::string::npos) << json;
}

// collshim-model's predictions have no native: the map shows the winner's lead over the runner-up,
// says so, and says the map is predicted.
TEST(WinnerMaps, PredictionsShowTheWinnersLead) {
  std::vector<Measurement> m = {row(64, 8, "bruck", 4), row(64, 8, "ring", 10), row(64, 8, "sparbit", 5),
                                row(128, 8, "ring", 7)};
  for (Measurement& prediction : m) prediction.predicted = true;
  const auto maps = winner_maps(m);
  ASSERT_EQ(maps.size(), 1u);
  EXPECT_EQ(maps[0].winner[0][0], "bruck");
  EXPECT_DOUBLE_EQ(*maps[0].speedup[0][0], 1.25);  // sparbit (5) over bruck (4)
  EXPECT_FALSE(maps[0].speedup[0][1]);             // nothing to compare with
  EXPECT_NE(maps[0].title.find("(predicted by collshim-model)"), std::string::npos) << maps[0].title;
  EXPECT_NE(winner_maps_json(maps).find("\"speedup_title\": \"its lead"), std::string::npos);
}

}  // namespace
}  // namespace collshim::tune
