// Recursive multiplying Allgather: the exchange pattern of Ruefenacht, Bull and Booth's Allreduce
// ("Generalisation of recursive doubling for AllReduce", 2017), which the paper does not apply to
// Allgather, run on blocks instead of partial results. The q virtual ranks are numbered in mixed
// radix with digit i of radix f_i; in stage i every virtual rank sends the blocks of its size-m
// sub-cuboid (m = f_0 * ... * f_{i-1}, the ranks that agree with it on all digits from i up) to the
// f_i - 1 ranks that differ from it only in digit i, so after the stage it holds a sub-cuboid f_i
// times larger. Stage i costs f_i - 1 pipelined messages (paper Eq. 3); with all f_i = 2 this is
// recursive doubling, with one stage of p it is a direct all-to-all.
//
// p with a prime factor above k cannot be written as a product of factors <= k; such p use the
// paper's "splitting": a collapse step shrinks p to a nicely factorable q, the stages run on the q
// virtual ranks, each carrying all blocks it represents, and an expand step hands the full result to
// the ranks that were collapsed away. Prime merging (1.5) would save those two steps but does not
// preserve stage structure as simply; it is left out.
#include "algorithms/allgather/allgather_recursive_multiplying.hpp"

#include <algorithm>
#include <charconv>
#include <climits>
#include <tuple>
#include <unordered_map>

#include "algorithms/allgather/allgather_algorithms.hpp"

namespace collshim {
namespace {

// Fewest stages, then fewest messages, for writing n as a product of factors in [2, k].
class Factoriser {
 public:
  explicit Factoriser(int k) : k_(k) {}

  struct Best {
    int stages = 0;
    int messages = 0;
    int first = 0;  // the largest factor of an optimal factorisation; 0: n has a prime factor > k
    bool possible() const { return first != 0; }
  };

  Best best(int n) {
    if (n == 1) return {0, 0, 1};
    if (const auto found = memo_.find(n); found != memo_.end()) return found->second;
    Best result;
    // Descending d, replaced only when strictly better: among equal costs the largest factor wins,
    // which also makes the factor sequence non-increasing.
    for (int d = std::min(k_, n); d >= 2; --d) {
      if (n % d != 0) continue;
      const Best rest = best(n / d);
      if (!rest.possible()) continue;
      const Best candidate{rest.stages + 1, rest.messages + d - 1, d};
      if (!result.possible() ||
          std::tie(candidate.stages, candidate.messages) < std::tie(result.stages, result.messages))
        result = candidate;
    }
    memo_.emplace(n, result);
    return result;
  }

  std::vector<int> factors(int n) {
    std::vector<int> out;
    while (n > 1) {
      const int f = best(n).first;
      out.push_back(f);
      n /= f;
    }
    std::sort(out.begin(), out.end(), std::greater<>());
    return out;
  }

 private:
  int k_;
  std::unordered_map<int, Best> memo_;
};

// Every n in [1, limit) whose prime factors are all <= k, by depth-first products of those primes.
std::vector<int> smooth_numbers_below(int limit, int k) {
  std::vector<int> primes;
  for (int n = 2; n <= k; ++n) {
    if (std::none_of(primes.begin(), primes.end(), [n](int prime) { return n % prime == 0; })) primes.push_back(n);
  }
  std::vector<int> out;
  const auto extend = [&](const auto& self, std::size_t first_prime, long long value) -> void {
    out.push_back(static_cast<int>(value));
    for (std::size_t i = first_prime; i < primes.size() && value * primes[i] < limit; ++i)
      self(self, i, value * primes[i]);
  };
  if (limit > 1) extend(extend, 0, 1);
  return out;
}

}  // namespace

int RecursiveMultiplyingPlan::virtual_ranks() const {
  int product = 1;
  for (const int f : factors) product *= f;
  return product;
}

int RecursiveMultiplyingPlan::critical_messages() const {
  int messages = collapses() ? 2 * (collapse_base - 1) : 0;
  for (const int f : factors) messages += f - 1;
  return messages;
}

std::string RecursiveMultiplyingPlan::notation() const {
  std::string out;
  const std::string collapse = std::to_string(threshold()) + "m" + std::to_string(collapse_base);
  if (collapses()) out += "c" + collapse;
  for (const int f : factors) out += (out.empty() ? "a" : ",a") + std::to_string(f);
  if (collapses()) out += ",e" + collapse;
  return out;
}

RecursiveMultiplyingPlan plan_recursive_multiplying(int p, int k) {
  RecursiveMultiplyingPlan plan;
  if (p <= 1) return plan;
  Factoriser factoriser(k);
  if (factoriser.best(p).possible()) {
    plan.factors = factoriser.factors(p);
    return plan;
  }
  // Only p with a prime factor > k collapse: for p that factors, a collapse would double the data an
  // Allgather moves (the expand resends everything) to save at most a stage.
  // Candidates are the factorable q < p (far fewer than p: about 4% of numbers below 10^6 are
  // 64-smooth) and every base whose groups turn p into q. Runs once per communicator.
  using Key = std::tuple<int, int, int, int>;  // steps, critical messages, -q, B
  Key best_key{INT_MAX, INT_MAX, 0, 0};
  for (const int q : smooth_numbers_below(p, k)) {
    const int shrink = p - q;  // groups * (base - 1)
    for (int base = 2; base <= std::min(k, p); ++base) {
      if (shrink % (base - 1) != 0) continue;
      const int groups = shrink / (base - 1);
      if (static_cast<long long>(groups) * base > p) continue;
      const auto inner = factoriser.best(q);
      const Key key{inner.stages + 2, inner.messages + 2 * (base - 1), -q, base};
      if (key < best_key) {
        best_key = key;
        plan.collapse_base = base;
        plan.collapse_groups = groups;
      }
    }
  }
  // A power of two lies in [p/2, p), so base 2 always finds some q.
  plan.factors = factoriser.factors(p - plan.collapse_groups * (plan.collapse_base - 1));
  return plan;
}

std::optional<std::vector<int>> parse_factor_list(std::string_view text) {
  std::vector<int> factors;
  long long product = 1;
  while (true) {
    const auto x = text.find('x');
    const std::string_view item = text.substr(0, x);
    int factor = 0;
    const auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), factor);
    if (item.empty() || error != std::errc{} || end != item.data() + item.size() || factor < 2) return std::nullopt;
    product *= factor;
    if (product > INT_MAX) return std::nullopt;
    factors.push_back(factor);
    if (x == std::string_view::npos) break;
    text = text.substr(x + 1);
  }
  return factors;
}

ParamSpec recursive_multiplying_factors_param() {
  return ParamSpec{"factors", "'auto' (factorise p with factors <= k) or stage factors >= 2 joined by 'x', e.g. 8x3x4",
                   "auto", [](std::string_view value) { return value == "auto" || parse_factor_list(value); }};
}

std::optional<RecursiveMultiplyingPlan> recursive_multiplying_plan(int p, const Params& params) {
  const std::string& factors = params.at("factors");
  if (factors == "auto") return plan_recursive_multiplying(p, param_int(params, "k"));
  auto list = parse_factor_list(factors);  // its product fits an int
  if (!list) return std::nullopt;
  RecursiveMultiplyingPlan plan;
  plan.factors = std::move(*list);
  if (plan.virtual_ranks() != p) return std::nullopt;
  return plan;
}

bool recursive_multiplying_eligible(int p, const Params& params) {
  return recursive_multiplying_plan(p, params).has_value();
}

BlockSchedule recursive_multiplying_schedule_of(const RecursiveMultiplyingPlan& plan, int p, int rank) {
  const int base = plan.collapse_base;
  const int groups = plan.collapse_groups;
  const int shift = groups * (base - 1);  // real rank - virtual rank, from threshold() up
  const int q = p - shift;
  // Virtual rank w stands for the real blocks [first_block(w), first_block(w+1)): w < groups is a
  // collapsed group of `base` ranks, the rest one rank each. So any range of virtual ranks is a
  // contiguous, ascending range of blocks, which the executor sends as one run.
  const auto first_block = [&](int w) { return w < groups ? w * base : w + shift; };
  const auto real_rank = [&](int w) { return w < groups ? w * base + base - 1 : w + shift; };
  const auto blocks = [&](int first_virtual, int end_virtual) {
    std::vector<int> out;
    for (int b = first_block(first_virtual); b < first_block(end_virtual); ++b) out.push_back(b);
    return out;
  };
  int wid = rank - shift;  // virtual rank; -1 for a rank collapsed away
  if (rank < plan.threshold()) wid = rank % base == base - 1 ? rank / base : -1;
  const int survivor = rank / base * base + base - 1;  // meaningful below threshold()

  BlockSchedule schedule;
  // Every rank has every step, empty or not: the executor and simulator step all ranks together.
  if (plan.collapses()) {
    BlockStep& step = schedule.steps.emplace_back();
    if (wid < 0) step.sends.push_back({survivor, {rank}});
    if (wid >= 0 && wid < groups) {
      for (int member = rank - base + 1; member < rank; ++member) step.recvs.push_back({member, {member}});
    }
  }
  int held = 1;  // m: the size of the sub-cuboid every virtual rank holds before the stage
  for (const int f : plan.factors) {
    BlockStep& step = schedule.steps.emplace_back();
    if (wid >= 0) {
      const int span = f * held;
      const int group_start = wid / span * span;
      const int own = wid / held * held;
      for (int j = 1; j < f; ++j) {
        const int peer = group_start + (wid % span + j * held) % span;
        const int theirs = peer / held * held;
        step.sends.push_back({real_rank(peer), blocks(own, own + held)});
        step.recvs.push_back({real_rank(peer), blocks(theirs, theirs + held)});
      }
    }
    held *= f;
  }
  if (plan.collapses()) {
    BlockStep& step = schedule.steps.emplace_back();
    // Everything but the receiver's own block, which it never gave away.
    const auto all_but = [&](int own) {
      std::vector<int> out = blocks(0, q);
      out.erase(out.begin() + own);
      return out;
    };
    if (wid < 0) step.recvs.push_back({survivor, all_but(rank)});
    if (wid >= 0 && wid < groups) {
      for (int member = rank - base + 1; member < rank; ++member) step.sends.push_back({member, all_but(member)});
    }
  }
  return schedule;
}

BlockSchedule recursive_multiplying_schedule(int p, int rank, const Params& params) {
  // The selector never runs an ineligible choice; should a caller still ask, the plan for k is a
  // correct schedule, unlike an empty one.
  const auto plan = recursive_multiplying_plan(p, params);
  return recursive_multiplying_schedule_of(plan ? *plan : plan_recursive_multiplying(p, param_int(params, "k")), p,
                                           rank);
}

}  // namespace collshim
