// Large counts at 2 ranks: receive buffers past 2^31 bytes, and displacements whose byte offset
// (displacement x extent) is past 2^31. Each case runs the intercepted call (the shim's forced
// algorithm), checks every received block against the pattern its sender wrote, then runs the native
// PMPI_* call on the same buffers and compares checksums of the results. Every case works in the
// same two anonymous mappings per rank (send and receive), made once: on a virtual machine the first
// touch of fresh memory costs about 3 s per GiB (the host backs it page by page), and fresh buffers
// for every case made this test take two minutes. Received blocks are scribbled over before every
// call, so what an earlier case left there cannot pass for a result.
//
// usage: large_counts CASE...
// cases: allgather_bytes allgather_type allgatherv_far allgatherv_huge_element alltoallv_far
//        alltoallv_huge_element
#include <mpi.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr std::size_t MiB = std::size_t{1} << 20;
int rank = 0, p = 0;
int failures = 0, checks = 0;

class Mapping {
 public:
  explicit Mapping(std::size_t bytes) : size(bytes) {
    void* at = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (at == MAP_FAILED) {
      std::fprintf(stderr, "large_counts: rank %d cannot map %zu bytes\n", rank, size);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    data = static_cast<char*>(at);
  }
  ~Mapping() { munmap(data, size); }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  // The first `bytes` of the mapping, for a case that needs that many.
  char* first(std::size_t bytes) const {
    if (bytes > size) {
      std::fprintf(stderr, "large_counts: rank %d needs %zu bytes, the mapping has %zu\n", rank, bytes, size);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return data;
  }

 private:
  char* data;
  std::size_t size;
};

// The largest buffers a case uses: alltoallv_huge_element sends 2 GiB + 16 bytes, and
// allgatherv_huge_element receives 2.5 GiB.
Mapping& send_arena() {
  static Mapping arena(2100 * MiB + 64 * MiB);
  return arena;
}
Mapping& recv_arena() {
  static Mapping arena(2560 * MiB);
  return arena;
}

std::uint64_t mix(std::uint64_t x) {  // splitmix64
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Block contents: 64-bit words derived from (seed, word index). Sizes are multiples of 8 bytes.
void fill(char* at, std::size_t bytes, std::uint64_t seed) {
  auto* words = reinterpret_cast<std::uint64_t*>(at);
  for (std::size_t j = 0; j < bytes / 8; ++j) words[j] = mix(seed * 0x100000000ULL + j);
}

bool holds(const char* at, std::size_t bytes, std::uint64_t seed) {
  const auto* words = reinterpret_cast<const std::uint64_t*>(at);
  for (std::size_t j = 0; j < bytes / 8; ++j) {
    if (words[j] != mix(seed * 0x100000000ULL + j)) return false;
  }
  return true;
}

// Position-weighted, so blocks swapped or shifted change it.
std::uint64_t checksum(const char* at, std::size_t bytes) {
  const auto* words = reinterpret_cast<const std::uint64_t*>(at);
  std::uint64_t sum = 0;
  for (std::size_t j = 0; j < bytes / 8; ++j) sum += words[j] * (2 * j + 1);
  return sum;
}

void check(bool ok, const std::string& what) {
  ++checks;
  if (!ok) {
    ++failures;
    std::printf("large_counts: rank %d FAILED %s\n", rank, what.c_str());
    std::fflush(stdout);
  }
}

struct Block {
  std::size_t offset;  // bytes into the receive buffer
  std::size_t bytes;
  std::uint64_t seed;
};

// Verifies the blocks after the shim's call, returns their checksum.
std::uint64_t verify(const std::string& name, const char* buffer, const std::vector<Block>& blocks) {
  std::uint64_t sum = 0;
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    check(holds(buffer + blocks[b].offset, blocks[b].bytes, blocks[b].seed), name + ": block " + std::to_string(b));
    sum = sum * 31 + checksum(buffer + blocks[b].offset, blocks[b].bytes);
  }
  return sum;
}

void scribble(char* buffer, const std::vector<Block>& blocks) {
  for (const Block& block : blocks) std::memset(buffer + block.offset, 0xa5, block.bytes);
}

std::uint64_t sum_of(const char* buffer, const std::vector<Block>& blocks) {
  std::uint64_t sum = 0;
  for (const Block& block : blocks) sum = sum * 31 + checksum(buffer + block.offset, block.bytes);
  return sum;
}

MPI_Datatype mebibyte_type() {
  MPI_Datatype type;
  MPI_Type_contiguous(static_cast<int>(MiB), MPI_BYTE, &type);
  MPI_Type_commit(&type);
  return type;
}

// MPI_Allgather of `count` elements of `type` (element_bytes each) per rank: > 2^31 bytes in total.
void allgather(const std::string& name, int count, MPI_Datatype type, std::size_t element_bytes) {
  const std::size_t block = static_cast<std::size_t>(count) * element_bytes;
  char* send = send_arena().first(block);
  char* recv = recv_arena().first(block * p);
  fill(send, block, rank + 1);
  std::vector<Block> blocks;
  for (int r = 0; r < p; ++r) blocks.push_back({r * block, block, static_cast<std::uint64_t>(r + 1)});
  scribble(recv, blocks);
  check(MPI_Allgather(send, count, type, recv, count, type, MPI_COMM_WORLD) == MPI_SUCCESS, name + ": rc");
  const std::uint64_t shim = verify(name, recv, blocks);
  scribble(recv, blocks);
  check(PMPI_Allgather(send, count, type, recv, count, type, MPI_COMM_WORLD) == MPI_SUCCESS, name + ": native rc");
  check(sum_of(recv, blocks) == shim, name + ": checksum differs from native");
}

// MPI_Allgatherv of 1 MiB elements: rank 0's block at 2100 MiB (displacement x extent > 2^31), the
// others packed from 0 in reverse rank order (non-monotone displacements).
void allgatherv_far() {
  MPI_Datatype type = mebibyte_type();
  std::vector<int> counts(p), displs(p);
  int next = 0;
  for (int r = p - 1; r >= 1; --r) {
    counts[r] = 16 + 8 * r;
    displs[r] = next;
    next += counts[r];
  }
  counts[0] = 24;
  displs[0] = 2100;
  char* send = send_arena().first(counts[rank] * MiB);
  char* recv = recv_arena().first((static_cast<std::size_t>(displs[0]) + counts[0]) * MiB);
  fill(send, counts[rank] * MiB, 100 + rank);
  std::vector<Block> blocks;
  for (int r = 0; r < p; ++r) blocks.push_back({displs[r] * MiB, counts[r] * MiB, static_cast<std::uint64_t>(100 + r)});
  scribble(recv, blocks);
  check(
      MPI_Allgatherv(send, counts[rank], type, recv, counts.data(), displs.data(), type, MPI_COMM_WORLD) == MPI_SUCCESS,
      "allgatherv_far: rc");
  const std::uint64_t shim = verify("allgatherv_far", recv, blocks);
  scribble(recv, blocks);
  check(PMPI_Allgatherv(send, counts[rank], type, recv, counts.data(), displs.data(), type, MPI_COMM_WORLD) ==
            MPI_SUCCESS,
        "allgatherv_far: native rc");
  check(sum_of(recv, blocks) == shim, "allgatherv_far: checksum differs from native");
  MPI_Type_free(&type);
}

// MPI_Alltoallv of 1 MiB elements: blocks to and from other ranks sit past 2100 MiB in both buffers.
void alltoallv_far() {
  MPI_Datatype type = mebibyte_type();
  const auto bytes_of = [](int from, int to) { return static_cast<int>(8 + 4 * from + 2 * to); };  // in MiB
  std::vector<int> sendcounts(p), sdispls(p), recvcounts(p), rdispls(p);
  int send_end = 2100, recv_end = 2100;
  for (int r = 0; r < p; ++r) {
    sendcounts[r] = bytes_of(rank, r);
    recvcounts[r] = bytes_of(r, rank);
    sdispls[r] = r == rank ? 0 : send_end;
    rdispls[r] = r == rank ? 0 : recv_end;
    if (r != rank) {
      send_end += sendcounts[r];
      recv_end += recvcounts[r] + 1;  // and a gap
    }
  }
  char* send = send_arena().first(send_end * MiB);
  char* recv = recv_arena().first(recv_end * MiB);
  for (int r = 0; r < p; ++r)
    fill(send + sdispls[r] * MiB, sendcounts[r] * MiB, static_cast<std::uint64_t>(1000 + 64 * rank + r));
  std::vector<Block> blocks;
  for (int r = 0; r < p; ++r)
    blocks.push_back({rdispls[r] * MiB, recvcounts[r] * MiB, static_cast<std::uint64_t>(1000 + 64 * r + rank)});
  scribble(recv, blocks);
  check(MPI_Alltoallv(send, sendcounts.data(), sdispls.data(), type, recv, recvcounts.data(), rdispls.data(), type,
                      MPI_COMM_WORLD) == MPI_SUCCESS,
        "alltoallv_far: rc");
  const std::uint64_t shim = verify("alltoallv_far", recv, blocks);
  scribble(recv, blocks);
  check(PMPI_Alltoallv(send, sendcounts.data(), sdispls.data(), type, recv, recvcounts.data(), rdispls.data(), type,
                       MPI_COMM_WORLD) == MPI_SUCCESS,
        "alltoallv_far: native rc");
  check(sum_of(recv, blocks) == shim, "alltoallv_far: checksum differs from native");
  MPI_Type_free(&type);
}

// MPI_Allgatherv where one element is larger than INT_MAX bytes (MPI_Type_size says MPI_UNDEFINED):
// rank 0 contributes one 2.5 GiB element in place; every other rank contributes nothing and
// describes the same data as two 1.25 GiB elements. All ranks must see the same call size.
void allgatherv_huge_element() {
  MPI_Datatype piece, type;
  MPI_Type_contiguous(static_cast<int>((rank == 0 ? 512 : 256) * MiB), MPI_BYTE, &piece);
  MPI_Type_contiguous(5, piece, &type);
  MPI_Type_commit(&type);
  const std::size_t bytes = 2560 * MiB;
  std::vector<int> counts(p, 0), displs(p, 0);
  counts[0] = rank == 0 ? 1 : 2;
  char* recv = recv_arena().first(bytes);
  const std::vector<Block> blocks{{0, bytes, 7}};
  if (rank == 0) {
    fill(recv, bytes, 7);
  } else {
    scribble(recv, blocks);
  }
  const void* sendbuf = rank == 0 ? MPI_IN_PLACE : recv;
  check(MPI_Allgatherv(sendbuf, 0, type, recv, counts.data(), displs.data(), type, MPI_COMM_WORLD) == MPI_SUCCESS,
        "allgatherv_huge_element: rc");
  const std::uint64_t shim = verify("allgatherv_huge_element", recv, blocks);
  if (rank != 0) scribble(recv, blocks);
  check(PMPI_Allgatherv(sendbuf, 0, type, recv, counts.data(), displs.data(), type, MPI_COMM_WORLD) == MPI_SUCCESS,
        "allgatherv_huge_element: native rc");
  check(sum_of(recv, blocks) == shim, "allgatherv_huge_element: checksum differs from native");
  MPI_Type_free(&type);
  MPI_Type_free(&piece);
}

// MPI_Alltoallv with an element larger than INT_MAX bytes on both sides: rank 0 sends rank 1 one
// element of 2 GiB + 16 bytes (two 1 GiB + 8 pieces), which rank 1 receives as one element built of
// four pieces; rank 1 sends rank 0 three 64 MiB elements, received as one 192 MiB element. Grid packs
// and unpacks such an element through a message to self (MPI_Pack's sizes are int).
void alltoallv_huge_element() {
  const std::size_t huge_bytes = (std::size_t{1} << 31) + 16;
  MPI_Datatype piece, huge, small, small3;
  MPI_Type_contiguous(static_cast<int>(rank == 0 ? huge_bytes / 2 : huge_bytes / 4), MPI_BYTE, &piece);
  MPI_Type_contiguous(rank == 0 ? 2 : 4, piece, &huge);
  MPI_Type_contiguous(static_cast<int>(64 * MiB), MPI_BYTE, &small);
  MPI_Type_contiguous(3, small, &small3);
  for (MPI_Datatype* type : {&huge, &small, &small3}) MPI_Type_commit(type);
  std::vector<int> sendcounts(p, 0), recvcounts(p, 0), displs(p, 0);
  std::size_t send_bytes = 0, recv_bytes = 0;
  MPI_Datatype sendtype = small, recvtype = small;
  std::uint64_t seed = 0;
  if (rank == 0 && p > 1) {
    sendcounts[1] = 1;
    recvcounts[1] = 1;
    sendtype = huge;
    recvtype = small3;
    send_bytes = huge_bytes;
    recv_bytes = 192 * MiB;
    seed = 21;  // what rank 1 sent
  } else if (rank == 1) {
    sendcounts[0] = 3;
    recvcounts[0] = 1;
    sendtype = small;
    recvtype = huge;
    send_bytes = 192 * MiB;
    recv_bytes = huge_bytes;
    seed = 20;
  }
  char* send = send_arena().first(send_bytes);
  char* recv = recv_arena().first(recv_bytes);
  fill(send, send_bytes, 20 + rank);
  const std::vector<Block> blocks{{0, recv_bytes, seed}};
  scribble(recv, blocks);
  check(MPI_Alltoallv(send, sendcounts.data(), displs.data(), sendtype, recv, recvcounts.data(), displs.data(),
                      recvtype, MPI_COMM_WORLD) == MPI_SUCCESS,
        "alltoallv_huge_element: rc");
  const std::uint64_t shim = verify("alltoallv_huge_element", recv, blocks);
  scribble(recv, blocks);
  check(PMPI_Alltoallv(send, sendcounts.data(), displs.data(), sendtype, recv, recvcounts.data(), displs.data(),
                       recvtype, MPI_COMM_WORLD) == MPI_SUCCESS,
        "alltoallv_huge_element: native rc");
  check(sum_of(recv, blocks) == shim, "alltoallv_huge_element: checksum differs from native");
  for (MPI_Datatype* type : {&small3, &small, &huge, &piece}) MPI_Type_free(type);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  for (int i = 1; i < argc; ++i) {
    const std::string name = argv[i];
    const double start = MPI_Wtime();
    if (name == "allgather_bytes") {
      allgather(name, static_cast<int>(1100 * MiB), MPI_BYTE, 1);  // 1.07 GiB per rank, count < INT_MAX
    } else if (name == "allgather_type") {
      MPI_Datatype type = mebibyte_type();
      allgather(name, 1100, type, MiB);  // the same bytes in 1100 elements of 1 MiB
      MPI_Type_free(&type);
    } else if (name == "allgatherv_far") {
      allgatherv_far();
    } else if (name == "allgatherv_huge_element") {
      allgatherv_huge_element();
    } else if (name == "alltoallv_far") {
      alltoallv_far();
    } else if (name == "alltoallv_huge_element") {
      alltoallv_huge_element();
    } else {
      std::fprintf(stderr, "large_counts: unknown case %s\n", name.c_str());
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (rank == 0) std::printf("large_counts: %s done in %.1f s\n", name.c_str(), MPI_Wtime() - start);
  }
  MPI_Allreduce(MPI_IN_PLACE, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &checks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("large_counts: %d checks passed, %d failed\n", checks - failures, failures);
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
