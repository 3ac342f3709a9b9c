// MPI_Allreduce through the shim (MPI_*) against the MPI library (PMPI_*) on identical inputs:
// integer and bitwise operations, MINLOC, a strided derived type (with a user sum), MPI_IN_PLACE, zero and uneven
// counts, a non-commutative user operation (2x2 matrix products), on MPI_COMM_WORLD and a reordered
// split communicator, each twice (the engine's storage is reused). All compared byte for byte, holes
// of the derived type included. Floating-point sums are compared byte for byte too, unless the
// program runs with --reorder (COLLSHIM_ALLREDUCE_REORDER=1): then within a relative 1e-12. In the
// form `--form` names (blocking, nonblocking, persistent: equivalence_harness.hpp); there the
// floating-point sums are compared within 1e-12 too (see run_case).
#include <algorithm>
#include <mpi.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "equivalence_harness.hpp"

namespace {

using equivalence::Form;
using equivalence::Tally;

// 2x2 matrices of unsigned ints (wrapping arithmetic): c = a * c, in rank order.
void matrix_product(void* in, void* inout, int* len, MPI_Datatype*) {
  auto* a = static_cast<unsigned*>(in);
  auto* c = static_cast<unsigned*>(inout);
  for (int i = 0; i < *len; ++i, a += 4, c += 4) {
    const unsigned r[4] = {a[0] * c[0] + a[1] * c[2], a[0] * c[1] + a[1] * c[3], a[2] * c[0] + a[3] * c[2],
                           a[2] * c[1] + a[3] * c[3]};
    std::memcpy(c, r, sizeof r);
  }
}

// A commutative sum over vector(2,1,3,int): two ints 3 apart per element, extent 4 ints. Open MPI
// defines no predefined operation on derived types, so the derived-type case needs a user one.
void strided_sum(void* in, void* inout, int* len, MPI_Datatype*) {
  const int* a = static_cast<const int*>(in);
  int* c = static_cast<int*>(inout);
  for (int i = 0; i < *len; ++i, a += 4, c += 4) {
    c[0] = static_cast<int>(static_cast<unsigned>(c[0]) + static_cast<unsigned>(a[0]));
    c[3] = static_cast<int>(static_cast<unsigned>(c[3]) + static_cast<unsigned>(a[3]));
  }
}

// A sum over pairs of doubles (a derived type the shim must decode to see floating-point data).
void pair_sum(void* in, void* inout, int* len, MPI_Datatype*) {
  const double* a = static_cast<const double*>(in);
  double* c = static_cast<double*>(inout);
  for (int i = 0; i < 2 * *len; ++i) c[i] += a[i];
}

struct Case {
  std::string name;
  MPI_Datatype type;
  MPI_Op op;
  bool doubles = false;  // filled with ordinary numbers (random bytes give NaNs, whose max depends on order)
  bool rounds = false;   // a floating-point sum: compared within a tolerance when reordering is allowed
};

// Runs one case natively and through the shim, in `form`; compares the receive buffers.
void run_case(Tally& tally, MPI_Comm comm, const Case& c, int count, bool in_place, bool reorder, int salt, Form form) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Aint lb = 0, extent = 0;
  MPI_Type_get_extent(c.type, &lb, &extent);
  const std::size_t bytes = static_cast<std::size_t>(count > 0 ? count * extent : 0) + 16;
  std::vector<unsigned char> send(bytes), native(bytes), shim(bytes);
  const void* send_arg = in_place ? MPI_IN_PLACE : send.data();
  const auto prepare = [&](int round) {
    equivalence::fill_pattern(send, rank, equivalence::round_salt(salt, round));
    if (c.doubles) {  // ordinary numbers, not NaNs from random bytes
      auto* values = reinterpret_cast<double*>(send.data());
      for (std::size_t i = 0; i < bytes / sizeof(double); ++i)
        values[i] = std::ldexp(1.0 + (i * 7 + rank * 13 + round) % 97, -(int)(i % 40)) / 3.0;
    }
    if (in_place) {
      std::copy(send.begin(), send.end(), native.begin());
    } else {
      equivalence::fill_pattern(native, rank, equivalence::round_salt(salt, round) + 1);
    }
    std::copy(native.begin(), native.end(), shim.begin());
    PMPI_Allreduce(send_arg, native.data(), count, c.type, c.op, comm);
  };
  const auto call = [&](Form f, MPI_Request* request) {
    if (f == Form::nonblocking) return MPI_Iallreduce(send_arg, shim.data(), count, c.type, c.op, comm, request);
    if (f == Form::persistent)
      return EQUIVALENCE_PERSISTENT(Allreduce)(send_arg, shim.data(), count, c.type, c.op, comm, MPI_INFO_NULL,
                                               request);
    return MPI_Allreduce(send_arg, shim.data(), count, c.type, c.op, comm);
  };
  const auto check = [&](int, const std::string& description) {
    // The library's own nonblocking and persistent sums may combine in another order than its
    // blocking one (Open MPI 4.1's MPI_Iallreduce does), so a call passed through rounds differently.
    if (c.rounds && (reorder || form != Form::blocking)) {
      bool close = true;
      const auto* a = reinterpret_cast<const double*>(native.data());
      const auto* b = reinterpret_cast<const double*>(shim.data());
      const long values = static_cast<long>(count) * extent / static_cast<long>(sizeof(double));
      for (long i = 0; i < values; ++i) close = close && std::fabs(a[i] - b[i]) <= 1e-12 * std::fabs(a[i]);
      tally.check(close, description + " (within 1e-12)", native, shim);
      return;
    }
    tally.check(native == shim, description, native, shim);
  };
  equivalence::run_in_form(form, tally, c.name + " count " + std::to_string(count) + (in_place ? " in place" : ""),
                           prepare, call, check);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const Form form = equivalence::take_form(argc, argv);
  const bool reorder = argc > 1 && std::string(argv[1]) == "--reorder";
  int world_rank = 0, world_size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  Tally tally;

  MPI_Datatype strided, matrix;
  MPI_Type_vector(2, 1, 3, MPI_INT, &strided);  // holes the shim must not touch
  MPI_Type_commit(&strided);
  MPI_Type_contiguous(4, MPI_UNSIGNED, &matrix);
  MPI_Type_commit(&matrix);
  MPI_Datatype double_pair;
  MPI_Type_contiguous(2, MPI_DOUBLE, &double_pair);
  MPI_Type_commit(&double_pair);
  MPI_Op product, strided_add, pair_add;
  MPI_Op_create(matrix_product, 0, &product);
  MPI_Op_create(strided_sum, 1, &strided_add);
  MPI_Op_create(pair_sum, 1, &pair_add);

  const std::vector<Case> cases = {
      {"MPI_INT sum", MPI_INT, MPI_SUM},
      {"MPI_LONG_LONG sum", MPI_LONG_LONG, MPI_SUM},
      {"MPI_UNSIGNED bxor", MPI_UNSIGNED, MPI_BXOR},
      {"MPI_INT max", MPI_INT, MPI_MAX},
      {"MPI_2INT minloc", MPI_2INT, MPI_MINLOC},
      {"vector(2,1,3,int) user sum", strided, strided_add},
      {"2x2 matrix product (non-commutative)", matrix, product},
      {"MPI_DOUBLE sum", MPI_DOUBLE, MPI_SUM, true, true},
      {"MPI_DOUBLE max", MPI_DOUBLE, MPI_MAX, true, false},
      {"contiguous(2,double) user sum", double_pair, pair_add, true, true},
  };
  // A communicator whose ranks are the world's reversed.
  MPI_Comm reversed;
  MPI_Comm_split(MPI_COMM_WORLD, 0, world_size - world_rank, &reversed);
  int salt = 0;
  for (MPI_Comm comm : {MPI_COMM_WORLD, reversed}) {
    for (const Case& c : cases) {
      for (const int count : {0, 1, 3, 17, 1000, 40000}) {
        // The large vector on the reversed ranks only where their order shows: the non-commutative
        // product (16 ranks on 2 cores move it slowly; 1000 elements already span every segment).
        if (count == 40000 && comm != MPI_COMM_WORLD && c.op != product) continue;
        for (const bool in_place : {false, true}) {
          for (int repeat = 0; repeat < 2; ++repeat) run_case(tally, comm, c, count, in_place, reorder, ++salt, form);
        }
      }
    }
  }
  MPI_Comm_free(&reversed);
  MPI_Op_free(&product);
  MPI_Op_free(&strided_add);
  MPI_Op_free(&pair_add);
  MPI_Type_free(&double_pair);
  MPI_Type_free(&strided);
  MPI_Type_free(&matrix);
  const int status = tally.finish("allreduce_equivalence", form);
  MPI_Finalize();
  return status;
}
