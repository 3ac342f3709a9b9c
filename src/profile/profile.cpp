#include "profile/profile.hpp"

#include <cctype>

#include <bit>
#include <cstdint>

namespace collshim {

std::string form_function_name(std::string_view mpi_function, CallForm form) {
  std::string name(mpi_function);
  if (form == CallForm::persistent) return name + "_init";
  if (form == CallForm::nonblocking && name.starts_with("MPI_") && name.size() > 4) {
    name[4] = static_cast<char>(std::tolower(static_cast<unsigned char>(name[4])));
    name.insert(4, "I");
  }
  return name;
}

const char* form_name(CallForm form) {
  switch (form) {
    case CallForm::blocking: return "blocking";
    case CallForm::nonblocking: return "nonblocking";
    case CallForm::persistent: return "persistent";
  }
  return "blocking";
}

void Profile::record(const ProfileKey& key, long long bytes, double seconds) {
  const std::lock_guard lock(mutex_);
  for (ProfileRow& row : rows_) {
    if (row.key == key) {
      ++row.counts.calls;
      row.counts.bytes += bytes;
      row.counts.seconds += seconds;
      return;
    }
  }
  rows_.push_back({key, {1, bytes, seconds}});
}

std::vector<ProfileRow> Profile::rows() const {
  const std::lock_guard lock(mutex_);
  return rows_;
}

std::vector<UnhandledRow> Profile::unhandled() const {
  std::vector<UnhandledRow> rows;
  for (std::size_t f = 0; f < unhandled_calls_.size(); ++f) {
    const long long calls = unhandled_calls_[f].load(std::memory_order_relaxed);
    if (calls > 0) rows.push_back({static_cast<int>(f), calls, unhandled_bytes_[f].load(std::memory_order_relaxed)});
  }
  return rows;
}

}  // namespace collshim
