// MPI-4's large-count entry points (MPI_Allgather_c, ...) through the shim: each of the seven is
// called with a contiguous type, a strided derived type and (where MPI allows it) MPI_IN_PLACE, and
// its result must equal the library's own PMPI_*_c call on the same arguments, byte for byte. Run
// with forcing variables, the report then shows the shim's algorithms ran.
//
// usage: large_count_calls            the seven collectives at this process count
//        large_count_calls --huge     MPI_Allgather_c of 2^31 + 64 bytes per rank, in place (2 ranks:
//                                     2 GiB + per rank and block), checked against PMPI_Allgather_c
// Prints "large_count_calls: N passed, 0 failed" (or FAIL lines).
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#if MPI_VERSION >= 4
namespace {

int rank = 0, p = 0, passed = 0, failed = 0;

// One element: 3 ints, the middle one a hole in the strided type (its extent is 3 ints, its data 2).
struct Layout {
  MPI_Datatype type;
  MPI_Count ints_per_element;  // ints an element spans in memory
};

void fill(std::vector<int>& buffer, int salt) {
  for (std::size_t i = 0; i < buffer.size(); ++i) buffer[i] = salt * 100000 + static_cast<int>(i);
}

// Runs `call` with the shim (MPI_*_c) and with the library (PMPI_*_c) on identical inputs; the
// receive buffers must then be equal, holes included (both start from the same fill).
void compare(const std::string& name,
             const std::function<int(bool shim, std::vector<int>& in, std::vector<int>& out)>& call, std::size_t ints) {
  std::vector<int> in_shim(ints), out_shim(ints), in_native(ints), out_native(ints);
  fill(in_shim, rank + 1);
  fill(in_native, rank + 1);
  fill(out_shim, -(rank + 1));
  fill(out_native, -(rank + 1));
  const int rc_shim = call(true, in_shim, out_shim);
  const int rc_native = call(false, in_native, out_native);
  int bad = rc_shim != MPI_SUCCESS || rc_native != MPI_SUCCESS || out_shim != out_native || in_shim != in_native;
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (bad) {
    ++failed;
    if (rank == 0) std::printf("FAIL: %s differs from the library's (rc %d, %d)\n", name.c_str(), rc_shim, rc_native);
  } else {
    ++passed;
  }
}

void seven_collectives(const Layout& layout, const std::string& type_name) {
  const MPI_Datatype t = layout.type;
  const MPI_Count n = 5;                               // elements per block
  const MPI_Count span = n * layout.ints_per_element;  // ints a block spans
  const std::size_t all = static_cast<std::size_t>(span) * p + 8;
  std::vector<MPI_Count> counts(p), displs_count(p);
  std::vector<MPI_Aint> displs(p);
  for (int i = 0; i < p; ++i) {
    counts[i] = n - (i % 2);  // uneven blocks
    displs[i] = static_cast<MPI_Aint>(i) * n;
  }
  const MPI_Count mine = counts[rank];
  for (const bool in_place : {false, true}) {
    const std::string tag = type_name + (in_place ? " in place" : "");
    compare(
        "MPI_Allgather_c " + tag,
        [&](bool shim, std::vector<int>& in, std::vector<int>& out) {
          const void* send = in_place ? MPI_IN_PLACE : in.data();
          if (in_place) std::memcpy(out.data() + rank * span, in.data(), sizeof(int) * span);
          return (shim ? MPI_Allgather_c : PMPI_Allgather_c)(send, n, t, out.data(), n, t, MPI_COMM_WORLD);
        },
        all);
    compare(
        "MPI_Allgatherv_c " + tag,
        [&](bool shim, std::vector<int>& in, std::vector<int>& out) {
          const void* send = in_place ? MPI_IN_PLACE : in.data();
          if (in_place) std::memcpy(out.data() + displs[rank] * layout.ints_per_element, in.data(), sizeof(int) * span);
          return (shim ? MPI_Allgatherv_c : PMPI_Allgatherv_c)(send, mine, t, out.data(), counts.data(), displs.data(),
                                                               t, MPI_COMM_WORLD);
        },
        all);
    compare(
        "MPI_Alltoall_c " + tag,
        [&](bool shim, std::vector<int>& in, std::vector<int>& out) {
          if (in_place) out = in;
          return (shim ? MPI_Alltoall_c : PMPI_Alltoall_c)(in_place ? MPI_IN_PLACE : in.data(), n, t, out.data(), n, t,
                                                           MPI_COMM_WORLD);
        },
        all);
    compare(
        "MPI_Alltoallv_c " + tag,
        [&](bool shim, std::vector<int>& in, std::vector<int>& out) {
          // Symmetric counts (block i <-> i of the same size on both sides), as MPI_IN_PLACE requires.
          std::vector<MPI_Count> c(p, n - (rank + 1) % 2);
          for (int i = 0; i < p; ++i) c[i] = 1 + (i + rank) % 3;
          if (in_place) out = in;
          return (shim ? MPI_Alltoallv_c : PMPI_Alltoallv_c)(in_place ? MPI_IN_PLACE : in.data(), c.data(),
                                                             displs.data(), t, out.data(), c.data(), displs.data(), t,
                                                             MPI_COMM_WORLD);
        },
        all);
    compare(
        "MPI_Allreduce_c " + std::string(in_place ? "in place" : ""),
        [&](bool shim, std::vector<int>& in, std::vector<int>& out) {
          if (in_place) out = in;
          return (shim ? MPI_Allreduce_c : PMPI_Allreduce_c)(in_place ? MPI_IN_PLACE : in.data(), out.data(), span * p,
                                                             MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        },
        all);
    const int root = p - 1;
    compare(
        "MPI_Gatherv_c " + tag,
        [&](bool shim, std::vector<int>& in, std::vector<int>& out) {
          const bool place = in_place && rank == root;
          if (place) std::memcpy(out.data() + displs[rank] * layout.ints_per_element, in.data(), sizeof(int) * span);
          return (shim ? MPI_Gatherv_c : PMPI_Gatherv_c)(place ? MPI_IN_PLACE : in.data(), mine, t, out.data(),
                                                         counts.data(), displs.data(), t, root, MPI_COMM_WORLD);
        },
        all);
    compare(
        "MPI_Scatterv_c " + tag,
        [&](bool shim, std::vector<int>& in, std::vector<int>& out) {
          const bool place = in_place && rank == root;
          return (shim ? MPI_Scatterv_c : PMPI_Scatterv_c)(in.data(), counts.data(), displs.data(), t,
                                                           place ? MPI_IN_PLACE : out.data(), mine, t, root,
                                                           MPI_COMM_WORLD);
        },
        all);
  }
}

// 2^31 + 64 bytes per block: the count is beyond int, so the shim runs its algorithm on one element
// of a contiguous type of that many bytes. Every byte is checked against its owner's pattern, then
// PMPI_Allgather_c recomputes the same buffer and both checksums must agree.
void huge_allgather() {
  const MPI_Count block = (MPI_Count{1} << 31) + 64;
  std::vector<unsigned char> buffer(static_cast<std::size_t>(block) * p);
  const auto pattern = [&](int owner, MPI_Count i) { return static_cast<unsigned char>((i * 7 + owner * 13) & 0xff); };
  const auto refill = [&] {
    std::memset(buffer.data(), 0, buffer.size());
    for (MPI_Count i = 0; i < block; ++i) buffer[static_cast<std::size_t>(rank * block + i)] = pattern(rank, i);
  };
  // Over 64-bit words, weighted by position (blocks swapped or shifted change it): a byte-serial
  // hash of the 4 GiB took longer than the collectives.
  const auto checksum = [&] {
    std::uint64_t sum = 0;
    for (std::size_t j = 0; j < buffer.size() / 8; ++j) {
      std::uint64_t word;
      std::memcpy(&word, buffer.data() + 8 * j, 8);
      sum += word * (2 * j + 1);
    }
    return sum;
  };
  refill();
  int bad = MPI_Allgather_c(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buffer.data(), block, MPI_BYTE, MPI_COMM_WORLD) !=
            MPI_SUCCESS;
  for (int owner = 0; owner < p && !bad; ++owner)
    for (MPI_Count i = 0; i < block; i += 4093)
      if (buffer[static_cast<std::size_t>(owner * block + i)] != pattern(owner, i)) bad = 1;
  const std::uint64_t shim_sum = checksum();
  refill();
  bad |= PMPI_Allgather_c(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buffer.data(), block, MPI_BYTE, MPI_COMM_WORLD) !=
         MPI_SUCCESS;
  bad |= checksum() != shim_sum;
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (bad) {
    ++failed;
    if (rank == 0)
      std::printf("FAIL: MPI_Allgather_c of %lld bytes per rank differs from the library's\n",
                  static_cast<long long>(block));
  } else {
    ++passed;
  }
}

}  // namespace
#endif

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
#if MPI_VERSION >= 4
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  if (argc > 1 && std::string(argv[1]) == "--huge") {
    huge_allgather();
  } else {
    MPI_Datatype strided;
    MPI_Type_vector(1, 2, 3, MPI_INT, &strided);  // 2 ints of data, then resized to span 3
    MPI_Datatype element;
    MPI_Type_create_resized(strided, 0, 3 * sizeof(int), &element);
    MPI_Type_commit(&element);
    seven_collectives({MPI_INT, 1}, "contiguous");
    seven_collectives({element, 3}, "strided");
    MPI_Type_free(&element);
    MPI_Type_free(&strided);
  }
  if (rank == 0) std::printf("large_count_calls: %d passed, %d failed\n", passed, failed);
#else
  std::printf("large_count_calls: the MPI library has no large-count functions (MPI_VERSION %d)\n", MPI_VERSION);
#endif
  MPI_Finalize();
  return 0;
}
