// MPI_Alltoall through the shim must give the MPI library's own result bit for bit: counts 0, 1, 7
// and past the eager limit, the five types of the other equivalence tests, send and receive types of
// equal signature but different layout (2 ints against one strided vector of 2 ints), MPI_IN_PLACE,
// on MPI_COMM_WORLD, MPI_COMM_SELF and a reversed split communicator; in the form `--form` names
// (blocking, nonblocking, persistent: equivalence_harness.hpp). The whole receive buffer is
// compared, holes of derived types included, and the send buffer must come back unchanged.
//
// The mixed-layout case is not compared with PMPI_Alltoall: Open MPI 4.1.4 returns wrong data for it
// at 16 ranks (its own algorithm for that size; ranks <= 12 are right). Its reference is the library
// doing the same thing in two steps it gets right: PMPI_Alltoall of contiguous ints, then a
// PMPI_Sendrecv to self from the contiguous ints into the strided type.
#include <algorithm>
#include <string>
#include <vector>

#include "equivalence_harness.hpp"

using namespace equivalence;

namespace {

Form form = Form::blocking;  // of the MPI_* calls (--form)

// PMPI_Alltoall of `send_scale` ints per element into `recvtype`, in two steps (see above).
void two_step_reference(MPI_Comm comm, const std::vector<unsigned char>& send, int sendcount, int count,
                        MPI_Datatype recvtype, std::vector<unsigned char>& expected) {
  int p;
  MPI_Comm_size(comm, &p);
  std::vector<int> ints(static_cast<std::size_t>(p) * sendcount);
  PMPI_Alltoall(send.data(), sendcount, MPI_INT, ints.data(), sendcount, MPI_INT, comm);
  PMPI_Sendrecv(ints.data(), static_cast<int>(ints.size()), MPI_INT, 0, 0, expected.data(), p * count, recvtype, 0, 0,
                MPI_COMM_SELF, MPI_STATUS_IGNORE);
}

void alltoall_case(MPI_Comm comm, const std::string& what, int count, MPI_Datatype sendtype, int send_scale,
                   MPI_Datatype recvtype, bool in_place, Tally& tally, int salt) {
  int p, rank;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &rank);
  const int sendcount = count * send_scale;
  std::vector<unsigned char> send(static_cast<std::size_t>(p) * sendcount * extent_of(sendtype) + 1);
  std::vector<unsigned char> original(send.size());
  std::vector<unsigned char> expected(static_cast<std::size_t>(p) * count * extent_of(recvtype) + 8);
  std::vector<unsigned char> actual(expected.size());
  const void* sendbuf = in_place ? MPI_IN_PLACE : send.data();
  const auto prepare = [&](int round) {
    fill_pattern(send, rank, round_salt(salt, round));
    std::copy(send.begin(), send.end(), original.begin());
    std::fill(expected.begin(), expected.end(), 0xA5);
    if (in_place)
      fill_pattern(expected, rank, round_salt(salt, round) + 1);  // the outgoing data sit in the receive buffer
    std::copy(expected.begin(), expected.end(), actual.begin());
    if (sendtype == recvtype) {
      PMPI_Alltoall(sendbuf, sendcount, sendtype, expected.data(), count, recvtype, comm);
    } else {
      two_step_reference(comm, send, sendcount, count, recvtype, expected);
    }
  };
  const auto call = [&](Form form, MPI_Request* request) {
    if (form == Form::nonblocking)
      return MPI_Ialltoall(sendbuf, sendcount, sendtype, actual.data(), count, recvtype, comm, request);
    if (form == Form::persistent)
      return EQUIVALENCE_PERSISTENT(Alltoall)(sendbuf, sendcount, sendtype, actual.data(), count, recvtype, comm,
                                              MPI_INFO_NULL, request);
    return MPI_Alltoall(sendbuf, sendcount, sendtype, actual.data(), count, recvtype, comm);
  };
  const auto check = [&](int, const std::string& description) {
    tally.check(expected == actual, "alltoall " + description, expected, actual);
    tally.check(send == original, "alltoall send buffer unchanged " + description, original, send);
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
  Tally tally;
  int salt = 0;
  for (const auto& [comm_name, comm] :
       {std::pair{"world", MPI_COMM_WORLD}, {"self", MPI_COMM_SELF}, {"split", split}}) {
    int p;
    MPI_Comm_size(comm, &p);
    // The large count: past the eager limit per block, about 1 MiB per rank in all.
    const int large = std::clamp((1 << 18) / p, 2048, 40000);
    for (const int count : {0, 1, 7, large}) {
      for (const TypeCase& t : types) {
        if (count == large && t.name != "MPI_INT") continue;
        for (const bool in_place : {false, true}) {
          const std::string what =
              std::string(comm_name) + " count=" + std::to_string(count) + " " + t.name + (in_place ? " in_place" : "");
          alltoall_case(comm, what, count, t.type, 1, t.type, in_place, tally, ++salt);
        }
      }
      // Equal signatures, different layouts: 2 contiguous ints out, one strided vector of 2 ints in.
      alltoall_case(comm, std::string(comm_name) + " count=" + std::to_string(count) + " 2*MPI_INT->vector", count,
                    MPI_INT, 2, types[3].type, false, tally, ++salt);
    }
  }
  free_types(types);
  MPI_Comm_free(&split);
  const int status = tally.finish("alltoall_equivalence", form);
  MPI_Finalize();
  return status;
}
