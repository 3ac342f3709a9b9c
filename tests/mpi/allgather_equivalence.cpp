// MPI_Allgather and MPI_Allgatherv through the shim must give the MPI library's own results bit for
// bit: over contiguous and derived datatypes, send/receive types of equal signature but different
// layout, MPI_IN_PLACE, zero and large counts, irregular count distributions, non-monotone
// displacements, and on COMM_WORLD, COMM_SELF and a reordered split communicator; in blocking,
// nonblocking or persistent form (equivalence_harness.hpp), always against the blocking PMPI call.
//
// usage: allgather_equivalence [--form blocking|nonblocking|persistent] [allgather|allgatherv]...
//        (default: blocking, both collectives)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "equivalence_harness.hpp"

using namespace equivalence;

namespace {

Form form = Form::blocking;  // of the MPI_* calls (--form)

struct CommCase {
  std::string name;
  MPI_Comm comm;
};

// Per-rank block of the large cases: past every MPI library's eager limit (the messages take the
// rendezvous path), 1 MiB up to 2 ranks and smaller beyond, so that a receive buffer stays near 2 MiB
// (x2.7 for the struct type's holes) and 16 ranks oversubscribing 2 cores finish in seconds.
int large_bytes(MPI_Comm comm) {
  int p;
  MPI_Comm_size(comm, &p);
  return std::min(1 << 20, std::max(128 << 10, (2 << 20) / p));
}

void run_allgather(MPI_Comm comm, const std::string& comm_name, MPI_Datatype send_type, int send_count,
                   MPI_Datatype recv_type, int count, bool in_place, const std::string& label, Tally& tally, int salt) {
  int p, rank;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &rank);
  const MPI_Aint recv_extent = extent_of(recv_type);
  const std::size_t block_bytes = static_cast<std::size_t>(count) * recv_extent;
  std::vector<unsigned char> send(static_cast<std::size_t>(send_count) * extent_of(send_type) + 1);
  std::vector<unsigned char> expected(block_bytes * p + 8), actual(expected.size()), own(block_bytes);
  const void* sendbuf = in_place ? MPI_IN_PLACE : send.data();
  const auto prepare = [&](int round) {
    fill_pattern(send, rank, round_salt(salt, round));
    std::fill(expected.begin(), expected.end(), 0xA5);
    if (in_place) {
      // The own block is already in place; holes get the same bytes in both buffers.
      fill_pattern(own, rank, round_salt(salt, round));
      std::copy(own.begin(), own.end(), expected.begin() + block_bytes * rank);
    }
    std::copy(expected.begin(), expected.end(), actual.begin());
    PMPI_Allgather(sendbuf, send_count, send_type, expected.data(), count, recv_type, comm);
  };
  const auto call = [&](Form form, MPI_Request* request) {
    if (form == Form::nonblocking)
      return MPI_Iallgather(sendbuf, send_count, send_type, actual.data(), count, recv_type, comm, request);
    if (form == Form::persistent)
      return EQUIVALENCE_PERSISTENT(Allgather)(sendbuf, send_count, send_type, actual.data(), count, recv_type, comm,
                                               MPI_INFO_NULL, request);
    return MPI_Allgather(sendbuf, send_count, send_type, actual.data(), count, recv_type, comm);
  };
  const auto check = [&](int, const std::string& what) { tally.check(expected == actual, what, expected, actual); };
  run_in_form(
      form, tally,
      "allgather " + comm_name + " " + label + " count=" + std::to_string(count) + (in_place ? " in_place" : ""),
      prepare, call, check);
}

// Block sizes of the irregular distributions used by Traeff et al. and the Sparbit thesis; identical
// on every rank (random_zeros is seeded by p and c only).
std::vector<int> distribution(const std::string& name, int p, int c) {
  std::vector<int> counts(p, c);
  for (int i = 0; i < p; ++i) {
    if (name == "zero") counts[i] = 0;
    if (name == "broadcast") counts[i] = i == 0 ? c : 0;
    if (name == "spike") counts[i] = i == 0 ? p * c : (p > 1 ? p * c / (p - 1) : c);
    if (name == "half_full") counts[i] = i % 2 == 0 ? 2 * c : 0;
    if (name == "linear_decreasing") counts[i] = p > 1 ? 2 * c * (p - 1 - i) / (p - 1) : c;
    if (name == "geometric")
      counts[i] = p > 1 ? static_cast<int>(p * c / ((i + 1.5) * std::log2(static_cast<double>(p)))) : c;
  }
  if (name == "random_zeros") {
    std::uint32_t x = 12345u + static_cast<std::uint32_t>(p * 31 + c);
    for (int& n : counts) {
      x = x * 1664525u + 1013904223u;
      n = (x >> 16) % 3 == 0 ? 0 : static_cast<int>((x >> 8) % (2 * c + 1));
    }
  }
  return counts;
}

void run_call(MPI_Comm comm, const std::string& comm_name, MPI_Datatype type, const std::string& type_name,
              const std::vector<int>& counts, const std::string& dist_name, bool reversed, bool in_place, Tally& tally,
              int salt) {
  int p, rank;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &rank);
  const MPI_Aint extent = extent_of(type);
  // Packed in rank order, or reversed with a one-element gap before each block (non-monotone).
  std::vector<int> displs(p);
  int next = 0;
  for (int k = 0; k < p; ++k) {
    const int block = reversed ? p - 1 - k : k;
    if (reversed) ++next;
    displs[block] = next;
    next += counts[block];
  }
  const std::size_t own_bytes = static_cast<std::size_t>(counts[rank]) * extent;
  const std::size_t own_offset = static_cast<std::size_t>(displs[rank]) * extent;
  std::vector<unsigned char> send(own_bytes + 1);
  std::vector<unsigned char> expected(static_cast<std::size_t>(next) * extent + 8), actual(expected.size());
  const void* sendbuf = in_place ? MPI_IN_PLACE : send.data();
  const auto prepare = [&](int round) {
    fill_pattern(send, rank, round_salt(salt, round));
    std::fill(expected.begin(), expected.end(), 0xA5);
    if (in_place) std::copy(send.begin(), send.begin() + own_bytes, expected.begin() + own_offset);
    std::copy(expected.begin(), expected.end(), actual.begin());
    PMPI_Allgatherv(sendbuf, counts[rank], type, expected.data(), counts.data(), displs.data(), type, comm);
  };
  const auto call = [&](Form form, MPI_Request* request) {
    if (form == Form::nonblocking)
      return MPI_Iallgatherv(sendbuf, counts[rank], type, actual.data(), counts.data(), displs.data(), type, comm,
                             request);
    if (form == Form::persistent)
      return EQUIVALENCE_PERSISTENT(Allgatherv)(sendbuf, counts[rank], type, actual.data(), counts.data(),
                                                displs.data(), type, comm, MPI_INFO_NULL, request);
    return MPI_Allgatherv(sendbuf, counts[rank], type, actual.data(), counts.data(), displs.data(), type, comm);
  };
  const auto check = [&](int, const std::string& what) { tally.check(expected == actual, what, expected, actual); };
  run_in_form(form, tally,
              "allgatherv " + comm_name + " " + type_name + " " + dist_name + (reversed ? " reversed" : "") +
                  (in_place ? " in_place" : ""),
              prepare, call, check);
}

void allgather_cases(const CommCase& comm, const std::vector<TypeCase>& types, Tally& tally) {
  int salt = 0;
  for (const TypeCase& t : types) {
    int size;
    MPI_Type_size(t.type, &size);
    const int large_count = large_bytes(comm.comm) / size;
    for (int count : {0, 1, 3, large_count}) {
      // Large blocks on the whole world only: the rendezvous path is the library's, whatever the
      // communicator, and 16 ranks on 2 cores move them slowly (the split halves cover rank order).
      if (count == large_count && (t.name == "MPI_DOUBLE" || t.name == "MPI_INT" || comm.name != "world")) continue;
      for (bool in_place : {false, true})
        run_allgather(comm.comm, comm.name, t.type, count, t.type, count, in_place, t.name, tally, ++salt);
    }
  }
  // Equal signatures, different layouts: contiguous ints on the send side, strided on the receive side.
  const TypeCase& vector_case = types[3];
  for (int count : {0, 1, 5})
    run_allgather(comm.comm, comm.name, MPI_INT, 2 * count, vector_case.type, count, false, "MPI_INT->vector", tally,
                  ++salt);
}

void allgatherv_cases(const CommCase& comm, const std::vector<TypeCase>& types, Tally& tally) {
  int p;
  MPI_Comm_size(comm.comm, &p);
  int salt = 1000;
  const std::vector<std::string> names = {"uniform",   "zero",      "broadcast",         "spike",
                                          "half_full", "geometric", "linear_decreasing", "random_zeros"};
  for (const TypeCase& t : types) {
    for (const std::string& name : names) {
      if (name != "uniform" && (t.name == "MPI_BYTE" || t.name == "MPI_DOUBLE")) continue;
      for (int c : {1, 3}) {
        const auto counts = distribution(name, p, c);
        for (bool reversed : {false, true})
          for (bool in_place : {false, true})
            run_call(comm.comm, comm.name, t.type, t.name, counts, name + " c=" + std::to_string(c), reversed, in_place,
                     tally, ++salt);
      }
    }
  }
  run_call(comm.comm, comm.name, MPI_BYTE, "MPI_BYTE", distribution("random_zeros", p, large_bytes(comm.comm) / 2),
           "random_zeros large", true, false, tally, ++salt);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  form = take_form(argc, argv);
  bool do_allgather = argc < 2, do_allgatherv = argc < 2;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "allgather") do_allgather = true;
    if (std::string(argv[i]) == "allgatherv") do_allgatherv = true;
  }
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm split;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &split);  // reversed rank order inside each half
  const std::vector<CommCase> comms = {{"world", MPI_COMM_WORLD}, {"self", MPI_COMM_SELF}, {"split", split}};
  auto types = make_types();
  Tally tally;
  for (const CommCase& comm : comms) {
    if (do_allgather) allgather_cases(comm, types, tally);
    if (do_allgatherv) allgatherv_cases(comm, types, tally);
  }
  free_types(types);
  MPI_Comm_free(&split);
  const int status = tally.finish("allgather_equivalence", form);
  MPI_Finalize();
  return status;
}
