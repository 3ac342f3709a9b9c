#pragma once
// Records gathered at MPI_Finalize: the report's rows and online tuning's learned choices.
#include <mpi.h>

#include <type_traits>
#include <vector>

namespace collshim {

// Collective over `comm`: every rank's records arrive at rank 0 (index = rank); other ranks get
// nothing. Records travel as bytes: every rank runs the same binary, so the layout is the same
// everywhere.
template <typename Record>
requires std::is_trivially_copyable_v<Record> std::vector<std::vector<Record>> gather_records(
    const std::vector<Record>& mine, MPI_Comm comm) {
  int rank = 0, size = 1;
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(comm, &size);
  const int my_bytes = static_cast<int>(mine.size() * sizeof(Record));
  std::vector<int> bytes(rank == 0 ? size : 0), offsets(rank == 0 ? size : 0);
  PMPI_Gather(&my_bytes, 1, MPI_INT, bytes.data(), 1, MPI_INT, 0, comm);
  int total = 0;
  for (int r = 0; r < static_cast<int>(bytes.size()); ++r) {
    offsets[r] = total;
    total += bytes[r];
  }
  std::vector<Record> all(static_cast<std::size_t>(total) / sizeof(Record));
  PMPI_Gatherv(mine.data(), my_bytes, MPI_BYTE, all.data(), bytes.data(), offsets.data(), MPI_BYTE, 0, comm);
  std::vector<std::vector<Record>> per_rank(bytes.size());
  for (int r = 0; r < static_cast<int>(bytes.size()); ++r) {
    const auto first = all.begin() + offsets[r] / static_cast<int>(sizeof(Record));
    per_rank[r].assign(first, first + bytes[r] / static_cast<int>(sizeof(Record)));
  }
  return per_rank;
}

}  // namespace collshim
