#pragma once
// The schedule checks run every process count from 1 to max_procs: past 128, so that every power of
// two up to 128 and the counts on either side of each are covered.
namespace collshim::test {

inline constexpr int max_procs = 130;

}  // namespace collshim::test
