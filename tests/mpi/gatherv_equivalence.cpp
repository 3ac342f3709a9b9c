// MPI_Gatherv and MPI_Scatterv through the shim must give the MPI library's own results bit for bit
// for Träff's test distributions (same, increasing, decreasing, spikes, random with zeros, two
// blocks) and all-zero counts, at roots 0, p-1 and p/2, with contiguous and derived types, send and
// receive types of equal signature but different layout, displacements in reverse rank order with
// holes, and MPI_IN_PLACE at the root. Gatherv is compared at the root (whole receive buffer, holes
// included), Scatterv at every rank; the root's send buffer must come back unchanged. In the form
// `--form` names (blocking, nonblocking, persistent: equivalence_harness.hpp).
#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "equivalence_harness.hpp"

using namespace equivalence;

namespace {

Form form = Form::blocking;  // of the MPI_* calls (--form)

std::uint32_t mix(std::uint32_t a, std::uint32_t b) {
  std::uint32_t x = a * 2654435761u ^ b * 2246822519u;
  x ^= x >> 15;
  x *= 2246822519u;
  x ^= x >> 13;
  return x;
}

struct Distribution {
  std::string name;
  std::function<int(int rank, int p)> count;  // elements of rank's block
};

std::vector<Distribution> distributions(int c) {
  return {
      {"same", [c](int, int) { return c; }},
      {"increasing", [c](int i, int p) { return 2 * c * (i + 1) / p; }},  // as printed: zeros for small c
      {"decreasing", [c](int i, int p) { return 2 * c * (p - i) / p + 1; }},
      {"spikes", [c](int i, int p) { return mix(i, p) % 5 == 0 ? 5 * c : 1; }},
      {"random_zeros",
       [c](int i, int p) {
         const auto x = mix(i, p + 17);
         return x % 3 == 0 ? 0 : int(x % (2 * c + 1));
       }},
      {"two_blocks", [c](int i, int p) { return i == 0 || i == p - 1 ? c : 0; }},
      {"all_zero", [](int, int) { return 0; }},
  };
}

// The root's displacements: descending rank order with one-element holes.
std::vector<int> reversed_displacements(const std::vector<int>& counts, int& total) {
  const int p = static_cast<int>(counts.size());
  std::vector<int> displs(p);
  total = 0;
  for (int k = p - 1; k >= 0; --k) {
    ++total;
    displs[k] = total;
    total += counts[k];
  }
  return displs;
}

struct TypePair {
  std::string name;
  MPI_Datatype root_type;  // the root's side (Gatherv receive, Scatterv send)
  MPI_Datatype rank_type;  // every rank's own block
  int rank_scale;          // elements of rank_type per root_type element
};

void gatherv_case(MPI_Comm comm, const std::string& what, const std::vector<int>& counts, const TypePair& types,
                  int root, bool in_place, Tally& tally, int salt) {
  int p, rank;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &rank);
  int total = 0;
  const std::vector<int> displs = reversed_displacements(counts, total);
  std::vector<unsigned char> send(
      static_cast<std::size_t>(counts[rank]) * types.rank_scale * extent_of(types.rank_type) + 1);
  std::vector<unsigned char> expected(rank == root ? static_cast<std::size_t>(total) * extent_of(types.root_type) + 8
                                                   : 1);
  std::vector<unsigned char> actual(expected.size());
  const bool my_in_place = in_place && rank == root;
  const void* sendbuf = my_in_place ? MPI_IN_PLACE : send.data();
  const int sendcount = counts[rank] * types.rank_scale;
  const auto prepare = [&](int round) {
    fill_pattern(send, rank, round_salt(salt, round));
    std::fill(expected.begin(), expected.end(), 0xA5);
    if (rank == root && in_place) fill_pattern(expected, rank, round_salt(salt, round) + 1);  // own block in place
    std::copy(expected.begin(), expected.end(), actual.begin());
    PMPI_Gatherv(sendbuf, sendcount, types.rank_type, expected.data(), counts.data(), displs.data(), types.root_type,
                 root, comm);
  };
  const auto call = [&](Form form, MPI_Request* request) {
    if (form == Form::nonblocking)
      return MPI_Igatherv(sendbuf, sendcount, types.rank_type, actual.data(), counts.data(), displs.data(),
                          types.root_type, root, comm, request);
    if (form == Form::persistent)
      return EQUIVALENCE_PERSISTENT(Gatherv)(sendbuf, sendcount, types.rank_type, actual.data(), counts.data(),
                                             displs.data(), types.root_type, root, comm, MPI_INFO_NULL, request);
    return MPI_Gatherv(sendbuf, sendcount, types.rank_type, actual.data(), counts.data(), displs.data(),
                       types.root_type, root, comm);
  };
  const auto check = [&](int, const std::string& description) {
    if (rank == root) tally.check(expected == actual, description, expected, actual);
  };
  run_in_form(form, tally, "gatherv " + what, prepare, call, check);
}

void scatterv_case(MPI_Comm comm, const std::string& what, const std::vector<int>& counts, const TypePair& types,
                   int root, bool in_place, Tally& tally, int salt) {
  int p, rank;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &rank);
  int total = 0;
  const std::vector<int> displs = reversed_displacements(counts, total);
  std::vector<unsigned char> send(rank == root ? static_cast<std::size_t>(total) * extent_of(types.root_type) + 1 : 1);
  std::vector<unsigned char> original(send.size());
  std::vector<unsigned char> expected(
      static_cast<std::size_t>(counts[rank]) * types.rank_scale * extent_of(types.rank_type) + 8);
  std::vector<unsigned char> actual(expected.size());
  const bool my_in_place = in_place && rank == root;
  const int recvcount = counts[rank] * types.rank_scale;
  const auto prepare = [&](int round) {
    fill_pattern(send, rank, round_salt(salt, round));
    std::copy(send.begin(), send.end(), original.begin());
    std::fill(expected.begin(), expected.end(), 0xA5);
    std::copy(expected.begin(), expected.end(), actual.begin());
    PMPI_Scatterv(send.data(), counts.data(), displs.data(), types.root_type,
                  my_in_place ? MPI_IN_PLACE : expected.data(), recvcount, types.rank_type, root, comm);
  };
  void* recvbuf = my_in_place ? MPI_IN_PLACE : actual.data();
  const auto call = [&](Form form, MPI_Request* request) {
    if (form == Form::nonblocking)
      return MPI_Iscatterv(send.data(), counts.data(), displs.data(), types.root_type, recvbuf, recvcount,
                           types.rank_type, root, comm, request);
    if (form == Form::persistent)
      return EQUIVALENCE_PERSISTENT(Scatterv)(send.data(), counts.data(), displs.data(), types.root_type, recvbuf,
                                              recvcount, types.rank_type, root, comm, MPI_INFO_NULL, request);
    return MPI_Scatterv(send.data(), counts.data(), displs.data(), types.root_type, recvbuf, recvcount, types.rank_type,
                        root, comm);
  };
  const auto check = [&](int, const std::string& description) {
    tally.check(expected == actual, "scatterv " + description, expected, actual);
    if (rank == root) tally.check(send == original, "scatterv send buffer unchanged " + description, original, send);
  };
  run_in_form(form, tally, what, prepare, call, check);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  form = take_form(argc, argv);
  int world_rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm split;
  MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, -world_rank, &split);
  auto types = make_types();
  std::vector<TypePair> pairs;
  for (const TypeCase& t : types) pairs.push_back({t.name, t.type, t.type, 1});
  pairs.push_back({"vector<-2*MPI_INT", types[3].type, MPI_INT, 2});  // the root's type holds 2 ints per element
  Tally tally;
  int salt = 0;
  for (const auto& [comm_name, comm] :
       {std::pair{"world", MPI_COMM_WORLD}, {"self", MPI_COMM_SELF}, {"split", split}}) {
    int p;
    MPI_Comm_size(comm, &p);
    std::vector<int> roots = {0, p - 1, p / 2};
    std::sort(roots.begin(), roots.end());
    roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
    // The large count: past the MPI library's eager limit per message, about 1 MiB in all.
    const int large = std::clamp((1 << 18) / p, 2048, 40000);
    for (const int c : {1, 7, large}) {
      for (const Distribution& distribution : distributions(c)) {
        std::vector<int> counts(p);
        for (int r = 0; r < p; ++r) counts[r] = distribution.count(r, p);
        for (const int root : roots) {
          for (const TypePair& pair : pairs) {
            if (c == large && pair.name != "MPI_INT") continue;
            for (const bool in_place : {false, true}) {
              if (in_place && pair.rank_type != pair.root_type) continue;
              const std::string what = std::string(comm_name) + " " + distribution.name + " c=" + std::to_string(c) +
                                       " root=" + std::to_string(root) + " " + pair.name +
                                       (in_place ? " in_place" : "");
              gatherv_case(comm, what, counts, pair, root, in_place, tally, ++salt);
              scatterv_case(comm, what, counts, pair, root, in_place, tally, ++salt);
            }
          }
        }
      }
    }
  }
  free_types(types);
  MPI_Comm_free(&split);
  const int status = tally.finish("gatherv_equivalence", form);
  MPI_Finalize();
  return status;
}
