#pragma once
// A value computed once for a run of equal keys: the cost model and the schedule checker build every
// rank's schedule in turn, and every rank asks for the same thing p times over (a node map's layout;
// the leaders' step count).
#include <optional>
#include <type_traits>
#include <utility>

namespace collshim {

// `make(key)`, the last key's value kept per thread and per call site (each lambda is a type of its
// own, so each call site has its own slot).
template <class Key, class Make>
std::invoke_result_t<Make&, const Key&> kept_per_thread(const Key& key, Make make) {
  using Value = std::invoke_result_t<Make&, const Key&>;
  thread_local std::optional<std::pair<Key, Value>> last;
  if (!last || !(last->first == key)) last.emplace(key, make(key));
  return last->second;
}

}  // namespace collshim
