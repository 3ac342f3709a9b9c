#pragma once
// `collshim-tune calibrate`: the machine's cost-model platform description in one command. Runs
// `LAUNCHER collshim-bench --calibrate - ...` the way measure runs the benchmark, reads the
// description from the launcher's standard output (so it is written where collshim-tune runs, not
// on rank 0's node), checks that the cost model reads it, and writes it whole or not at all.
#include "sweep.hpp"

namespace collshim::tune {

// Uses options.launcher, bench, bench_arguments, min_bytes, max_bytes, iterations, warmup, platform
// (empty: the output file's name without its extension) and output. `install`: output is the site
// default platform description (--install: site_platform_file()), whose directory is created. Returns
// 0 once the description is written, 1 when the calibration failed, 2 when the output cannot be
// written; every problem is one line on stderr saying what is needed.
int run_calibration(const SweepOptions& options, bool install = false);

}  // namespace collshim::tune
