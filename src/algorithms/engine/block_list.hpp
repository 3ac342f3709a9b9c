#pragma once
// The block indices of a region, in order, kept as runs of consecutive indices. A reduction's whole
// vector or segment range is one run whatever p, so generating, checking and costing such a
// schedule takes time per run, not per block (the cost model at p = 16384 costs Rabenseifner's
// p-block messages). It reads like a sequence of indices; runs() is the compact view.
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <vector>

namespace collshim {

class BlockList {
 public:
  struct Run {
    std::int64_t first = 0;
    std::int64_t count = 0;
    bool operator==(const Run&) const = default;
  };

  class const_iterator {
   public:
    using value_type = std::int64_t;
    using difference_type = std::ptrdiff_t;
    using reference = std::int64_t;
    using pointer = void;
    using iterator_category = std::input_iterator_tag;
    using iterator_concept = std::forward_iterator_tag;

    const_iterator() = default;
    const_iterator(const Run* run, std::int64_t offset) : run_(run), offset_(offset) {}
    std::int64_t operator*() const { return run_->first + offset_; }
    const_iterator& operator++() {
      if (++offset_ == run_->count) {
        ++run_;
        offset_ = 0;
      }
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator before = *this;
      ++*this;
      return before;
    }
    bool operator==(const const_iterator&) const = default;

   private:
    const Run* run_ = nullptr;
    std::int64_t offset_ = 0;
  };
  using iterator = const_iterator;
  using value_type = std::int64_t;
  using size_type = std::size_t;

  BlockList() = default;
  BlockList(std::initializer_list<std::int64_t> blocks) { append(blocks.begin(), blocks.end()); }
  template <std::input_iterator Iterator>
  BlockList(Iterator first, Iterator last) {
    append(first, last);
  }
  // Schedules that sort or search their blocks build them in a vector first.
  // NOLINTNEXTLINE: implicit on purpose
  BlockList(const std::vector<std::int64_t>& blocks) { append(blocks.begin(), blocks.end()); }

  void push_back(std::int64_t block) { append_run(block, 1); }
  // Blocks first, first + 1, ..., first + count - 1.
  void append_run(std::int64_t first, std::int64_t count) {
    if (count <= 0) return;
    size_ += static_cast<std::size_t>(count);
    // Runs stay maximal, so equal sequences have equal runs.
    if (!runs_.empty() && runs_.back().first + runs_.back().count == first) {
      runs_.back().count += count;
    } else {
      runs_.push_back({first, count});
    }
  }
  // A run at a time: lists of thousands of consecutive blocks (the model at p = 16384) would
  // otherwise grow the last run block by block.
  template <std::input_iterator Iterator>
  void append(Iterator first, Iterator last) {
    while (first != last) {
      const auto start = static_cast<std::int64_t>(*first);
      std::int64_t count = 1;
      for (++first; first != last && static_cast<std::int64_t>(*first) == start + count; ++first) ++count;
      append_run(start, count);
    }
  }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::int64_t front() const { return runs_.front().first; }
  std::int64_t back() const { return runs_.back().first + runs_.back().count - 1; }
  // Constant time where the list is one run or single blocks only, otherwise linear in the runs:
  // loops over many runs should iterate instead.
  std::int64_t operator[](std::size_t index) const {
    if (runs_.size() == size_) return runs_[index].first;
    auto at = static_cast<std::int64_t>(index);
    for (const Run& run : runs_) {
      if (at < run.count) return run.first + at;
      at -= run.count;
    }
    return runs_.back().first + runs_.back().count;
  }
  const std::vector<Run>& runs() const { return runs_; }
  void clear() {
    runs_.clear();
    size_ = 0;
  }

  const_iterator begin() const { return {runs_.data(), 0}; }
  const_iterator end() const { return {runs_.data() + runs_.size(), 0}; }

  bool operator==(const BlockList&) const = default;

 private:
  std::vector<Run> runs_;
  std::size_t size_ = 0;
};

// f(a[i], b[i]) for i below both lists' sizes, in order: walking two regions that list the same
// data in two buffers, without indexing into runs.
template <typename Function>
void for_each_pair(const BlockList& a, const BlockList& b, Function&& f) {
  for (auto x = a.begin(), y = b.begin(); x != a.end() && y != b.end(); ++x, ++y) f(*x, *y);
}

}  // namespace collshim
