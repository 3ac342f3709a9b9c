#include "profile/report_exchange.hpp"

#include <type_traits>

namespace collshim {

// Rows travel as bytes: every rank runs the same binary, so the layout is the same everywhere.
static_assert(std::is_trivially_copyable_v<ProfileRow>);

std::vector<std::vector<ProfileRow>> gather_profile_rows(const std::vector<ProfileRow>& mine, MPI_Comm comm) {
  int rank = 0, size = 1;
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(comm, &size);
  const int my_bytes = static_cast<int>(mine.size() * sizeof(ProfileRow));
  std::vector<int> bytes(rank == 0 ? size : 0), offsets(rank == 0 ? size : 0);
  PMPI_Gather(&my_bytes, 1, MPI_INT, bytes.data(), 1, MPI_INT, 0, comm);
  int total = 0;
  for (int r = 0; r < static_cast<int>(bytes.size()); ++r) {
    offsets[r] = total;
    total += bytes[r];
  }
  std::vector<ProfileRow> all(static_cast<std::size_t>(total) / sizeof(ProfileRow));
  PMPI_Gatherv(mine.data(), my_bytes, MPI_BYTE, all.data(), bytes.data(), offsets.data(), MPI_BYTE, 0, comm);
  std::vector<std::vector<ProfileRow>> per_rank(bytes.size());
  for (int r = 0; r < static_cast<int>(bytes.size()); ++r) {
    const auto first = all.begin() + offsets[r] / static_cast<int>(sizeof(ProfileRow));
    per_rank[r].assign(first, first + bytes[r] / static_cast<int>(sizeof(ProfileRow)));
  }
  return per_rank;
}

}  // namespace collshim
