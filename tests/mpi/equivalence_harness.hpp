#pragma once
// Shared pieces of the MPI equivalence tests: each case runs the collective twice on identical
// inputs, once through PMPI_* (the MPI library itself) and once through MPI_* (the shim when it is
// preloaded), and compares the whole receive buffers byte for byte, holes included.
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace equivalence {

struct TypeCase {
  std::string name;
  MPI_Datatype type;  // committed; freed by free_types()
  bool derived;
};

// MPI_BYTE, MPI_INT, MPI_DOUBLE, a strided vector of ints (holes between elements) and a struct
// {char, double} with padding and a resized extent: the layouts an algorithm must not disturb.
inline std::vector<TypeCase> make_types() {
  std::vector<TypeCase> types = {
      {"MPI_BYTE", MPI_BYTE, false}, {"MPI_INT", MPI_INT, false}, {"MPI_DOUBLE", MPI_DOUBLE, false}};
  MPI_Datatype vector_type;
  MPI_Type_vector(2, 1, 3, MPI_INT, &vector_type);
  MPI_Type_commit(&vector_type);
  types.push_back({"vector(2,1,3,int)", vector_type, true});
  int lengths[2] = {1, 1};
  MPI_Aint offsets[2] = {0, 8};
  MPI_Datatype members[2] = {MPI_CHAR, MPI_DOUBLE};
  MPI_Datatype struct_type, resized;
  MPI_Type_create_struct(2, lengths, offsets, members, &struct_type);
  MPI_Type_create_resized(struct_type, 0, 24, &resized);
  MPI_Type_free(&struct_type);
  MPI_Type_commit(&resized);
  types.push_back({"struct{char,double}", resized, true});
  return types;
}

inline void free_types(std::vector<TypeCase>& types) {
  for (TypeCase& t : types) {
    if (t.derived) MPI_Type_free(&t.type);
  }
}

inline MPI_Aint extent_of(MPI_Datatype type) {
  MPI_Aint lb, extent;
  MPI_Type_get_extent(type, &lb, &extent);
  return extent;
}

// Deterministic bytes that differ per rank, case and position.
inline void fill_pattern(std::vector<unsigned char>& buffer, int rank, int salt) {
  std::uint32_t x = 2166136261u ^ static_cast<std::uint32_t>(rank * 7919 + salt * 104729);
  for (auto& byte : buffer) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    byte = static_cast<unsigned char>(x);
  }
}

class Tally {
 public:
  void check(bool same, const std::string& description, const std::vector<unsigned char>& expected,
             const std::vector<unsigned char>& actual) {
    if (same) {
      ++passed_;
      return;
    }
    ++failed_;
    std::size_t i = 0;
    while (i < expected.size() && expected[i] == actual[i]) ++i;
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::printf("FAIL rank %d: %s: first difference at byte %zu of %zu\n", rank, description.c_str(), i,
                expected.size());
  }
  void fail(const std::string& description) {
    ++failed_;
    std::printf("FAIL: %s\n", description.c_str());
  }
  // Prints the world totals on rank 0; returns the process exit status.
  int finish(const char* what) {
    long counts[2] = {passed_, failed_};
    MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) std::printf("%s: %ld checks passed, %ld failed\n", what, counts[0], counts[1]);
    std::fflush(stdout);
    return counts[1] == 0 && counts[0] > 0 ? 0 : 1;
  }

 private:
  long passed_ = 0;
  long failed_ = 0;
};

}  // namespace equivalence
