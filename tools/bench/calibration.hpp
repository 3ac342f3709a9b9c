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
// channel between A and a node B with the most ranks of the others. Empty `error` when both channels
// can be measured.
//
// B is as far from A as the allocation allows: a description measured across one leaf switch cannot
// see the oversubscribed uplinks above it (docs/cost-model.md, "Calibrating"). Where several nodes
// could be B (`second_candidates`), choose_far_node() times a small ping-pong from A to each and takes
// the slowest: the pair whose messages cross the most switches, with no topology file to read. Ties
// (within 2%) go to the later node in the allocation's order, where launchers list nodes by name and
// names usually follow the cabling: with no difference measured, the first and the last node.
struct CalibrationRanks {
  std::vector<int> first_node, second_node;  // ranks of A and B, ascending
  std::vector<int> node_firsts;              // every node's first rank, in the job's node order (switch probes)
  // Every node that could be B (its ranks, ascending), in the job's node order; second_node is the last.
  std::vector<std::vector<int>> second_candidates;
  std::string error;
};
CalibrationRanks calibration_ranks(const std::vector<int>& node_of_rank);

// How B was chosen: each candidate's ping-pong from A (µs, half the round trip), in the order of
// second_candidates; empty where there was one candidate.
struct FarNodeChoice {
  std::vector<double> probe_us;
  std::size_t chosen = 0;  // in second_candidates
};
// Collective over `comm`: measures the candidates, sets ranks.second_node to the slowest, and returns
// the times (every rank the same).
FarNodeChoice choose_far_node(MPI_Comm comm, CalibrationRanks& ranks, const CalibrationOptions& options);
// The choice by the times alone: the slowest, ties within 2% to the later.
std::size_t farthest_of(const std::vector<double>& probe_us);

// Runs the measurements; the result is complete on rank 0 only.
model::CalibrationMeasurements measure_platform(MPI_Comm comm, const CalibrationRanks& ranks,
                                                const CalibrationOptions& options);

// The fitted description as a YAML file: `provenance` lines (machine, library, date) and the
// measurements as comments, then the description.
std::string calibration_yaml(const model::CalibrationMeasurements& measured, const model::Calibration& fitted,
                             const std::vector<std::string>& provenance);

}  // namespace collshim::bench
