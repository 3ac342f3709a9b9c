#pragma once
// collshim-bench --calibrate: measures a cost-model platform description on the allocation it runs
// on (src/model/platform/calibration.hpp says what is measured and how it is fitted). Collective over `comm`:
// every rank takes part in every measurement's synchronisation; only the ranks a measurement uses
// communicate in it.
#include <mpi.h>

#include <string>
#include <vector>

#include "model/platform/calibration.hpp"

namespace collshim::bench {

struct CalibrationOptions {
  std::string name = "calibrated";  // the description's `name`
  long long min_bytes = 1, max_bytes = 1 << 20;
  int iterations = 100;  // timed steps per measurement (fewer for large sizes, see calibration.cpp)
  int warmup = 10;
};

// Which ranks calibrate which channel: the shm channel on the node with the most ranks (A), the net
// channel between A and the next fullest node (B). Empty `error` when both channels can be measured.
struct CalibrationRanks {
  std::vector<int> first_node, second_node;  // ranks of A and B, ascending
  std::vector<int> node_firsts;              // every node's first rank, in the job's node order (switch probes)
  std::string error;
};
CalibrationRanks calibration_ranks(const std::vector<int>& node_of_rank);

// Runs the measurements; the result is complete on rank 0 only.
model::CalibrationMeasurements measure_platform(MPI_Comm comm, const CalibrationRanks& ranks,
                                                const CalibrationOptions& options);

// The fitted description as a YAML file: `provenance` lines (machine, library, date) and the
// measurements as comments, then the description.
std::string calibration_yaml(const model::CalibrationMeasurements& measured, const model::Calibration& fitted,
                             const std::vector<std::string>& provenance);

}  // namespace collshim::bench
