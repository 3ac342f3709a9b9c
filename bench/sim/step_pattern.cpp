// The message pattern of an Alltoall schedule's steps alone, timed under SMPI, to see what the
// simulator does with it apart from collshim's engine (docs/simulation.md, "Probes see messages
// early"). Per step every rank posts its sends, then its receives (with `probe`,
// each receive after step 0 waits in MPI_Probe first, as the engine does for forwarded blocks), then
// waits for all. Prints the slowest rank's time at the end of each step, from its barrier exit.
//
//   smpicxx -O2 -std=c++17 -o step_pattern bench/sim/step_pattern.cpp
//   smpirun -np 64 -platform bench/sim/platforms/fattree-contending.xml
//     -hostfile bench/sim/hostfiles/fattree-contending-sequential.txt --cfg=smpi/barrier:mpich
//     --cfg=smpi/simulate-computation:no --cfg=smpi/iprobe:1e-7 --cfg=smpi/grow-injected-times:no
//     --cfg=smpi/os:0:1e-6:0 --cfg=smpi/or:0:1e-6:0 ./step_pattern 8 bruck 8 probe   (one command line)
//
// Patterns: `bruck K` (K - 1 messages per step, to rank + j K^s), `grid N0 N1 ...` (per dimension,
// the N - 1 other ranks of the rank's line). Arguments: bytes per message, pattern, [probe].
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

struct Step {
  std::vector<int> to, from;
};

// A positive whole number, or std::invalid_argument naming what it was for.
long number(const std::string& word, const std::string& what) {
  std::size_t used = 0;
  long value = 0;
  try {
    value = std::stol(word, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != word.size() || value < 1)
    throw std::invalid_argument("bad " + what + " '" + word + "', expected a whole number above 0");
  return value;
}

// The steps of the pattern `words` (its name, then its numbers) for `rank` of p; std::invalid_argument
// where they do not describe one of p ranks.
std::vector<Step> pattern(const std::vector<std::string>& words, int rank, int p) {
  std::vector<Step> steps;
  if (words.at(0) == "bruck") {
    const long k = number(words.at(1), "radix");
    if (k < 2) throw std::invalid_argument("bad radix '" + words[1] + "', expected 2 or more");
    for (long distance = 1; distance < p; distance *= k) {
      Step& step = steps.emplace_back();
      for (long j = 1; j < k && j * distance < p; ++j) {
        step.to.push_back(static_cast<int>((rank + j * distance) % p));
        step.from.push_back(static_cast<int>(((rank - j * distance) % p + p) % p));
      }
    }
  } else if (words.at(0) == "grid") {
    long stride = 1;
    for (std::size_t d = 1; d < words.size(); ++d) {
      const long n = number(words[d], "grid side");
      const long at = rank / stride % n;
      Step& step = steps.emplace_back();
      for (long j = 1; j < n; ++j) {
        step.to.push_back(static_cast<int>(rank + ((at + j) % n - at) * stride));
        step.from.push_back(static_cast<int>(rank + ((at - j + n) % n - at) * stride));
      }
      stride *= n;
    }
    if (stride != p)
      throw std::invalid_argument("the grid's sides multiply to " + std::to_string(stride) + ", not to the " +
                                  std::to_string(p) + " ranks");
  } else {
    throw std::invalid_argument("unknown pattern '" + words[0] + "', expected bruck or grid");
  }
  return steps;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  std::vector<std::string> words(argv + 1, argv + argc);
  const bool probe = !words.empty() && words.back() == "probe";
  if (probe) words.pop_back();
  if (words.size() < 3) {
    if (rank == 0) std::fprintf(stderr, "usage: step_pattern BYTES bruck K | grid N0 N1 ... [probe]\n");
    MPI_Finalize();
    return 2;
  }
  int bytes = 0;
  std::vector<Step> steps;
  try {
    bytes = static_cast<int>(number(words[0], "message size"));
    steps = pattern({words.begin() + 1, words.end()}, rank, p);
  } catch (const std::invalid_argument& e) {
    if (rank == 0) std::fprintf(stderr, "step_pattern: %s\n", e.what());
    MPI_Finalize();
    return 2;
  }
  std::size_t most = 0;
  for (const Step& step : steps) most = std::max(most, step.to.size());
  std::vector<char> out(most * bytes, 1), in(most * bytes);
  std::vector<double> ends(steps.size());
  for (int repetition = 0; repetition < 2; ++repetition) {  // the second one is reported
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    for (std::size_t s = 0; s < steps.size(); ++s) {
      std::vector<MPI_Request> requests;
      for (std::size_t i = 0; i < steps[s].to.size(); ++i)
        MPI_Isend(out.data() + i * bytes, bytes, MPI_BYTE, steps[s].to[i], 7, MPI_COMM_WORLD, &requests.emplace_back());
      for (std::size_t i = 0; i < steps[s].from.size(); ++i) {
        if (probe && s > 0) MPI_Probe(steps[s].from[i], 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Irecv(in.data() + i * bytes, bytes, MPI_BYTE, steps[s].from[i], 7, MPI_COMM_WORLD,
                  &requests.emplace_back());
      }
      MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
      ends[s] = (MPI_Wtime() - start) * 1e6;
    }
  }
  std::vector<double> slowest(steps.size());
  MPI_Reduce(ends.data(), slowest.data(), static_cast<int>(ends.size()), MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("%s %d B%s, us at the end of each step:", words[1].c_str(), bytes, probe ? ", probed" : "");
    for (const double end : slowest) std::printf(" %.2f", end);
    std::printf("\n");
  }
  MPI_Finalize();
  return 0;
}
