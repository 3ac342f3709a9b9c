#pragma once
// Shared pieces of the MPI equivalence tests: each case runs the collective twice on identical
// inputs, once through PMPI_* (the MPI library itself) and once through MPI_* (the shim when it is
// preloaded), and compares the whole receive buffers byte for byte, holes included. `--form` picks
// how the MPI_* run calls: blocking, nonblocking (MPI_I<coll> + MPI_Wait) or persistent (MPI-4's
// MPI_<Coll>_init or Open MPI 4.1's MPIX_<Coll>_init, then two MPI_Start + MPI_Wait rounds with new
// data, then MPI_Request_free). The
// reference is always the blocking PMPI_* call: a library's own persistent collective is not trusted
// (MPICH 4.0.2's MPI_Allgather_init returns wrong data at 2, 4 and 8 ranks, and on one-process
// communicators its Allgatherv_init does, and its Allgather_init aborts in MPI_Start).
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "library_forms.hpp"

// The library's persistent collective <Name> (library_forms.hpp: MPI-4's MPI_<Name>_init, Open MPI
// 4.1's MPIX_<Name>_init), called as EQUIVALENCE_PERSISTENT(Name)(arguments). Where there is none
// the form is refused at start, and a stand-in takes the call, never reached.
#if LIBRARY_HAS_PERSISTENT
#define EQUIVALENCE_PERSISTENT(Name) LIBRARY_PERSISTENT(Name)
#else
#define EQUIVALENCE_PERSISTENT(Name) [](auto...) { return MPI_ERR_OTHER; }
#endif

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

enum class Form { blocking, nonblocking, persistent };

inline const char* form_name(Form form) {
  switch (form) {
    case Form::nonblocking: return "nonblocking";
    case Form::persistent: return "persistent";
    default: return "blocking";
  }
}

// Takes `--form NAME` (or `--form=NAME`) out of the arguments, so each program parses the rest as
// before; blocking when absent. An unknown form, or persistent where the library has none, ends the job.
inline Form take_form(int& argc, char** argv) {
  Form form = Form::blocking;
  std::string name;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--form" && i + 1 < argc) {
      name = argv[++i];
    } else if (arg.rfind("--form=", 0) == 0) {
      name = arg.substr(7);
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  if (name.empty() || name == "blocking") return form;
  if (name == "nonblocking") return Form::nonblocking;
  if (name == "persistent" && LIBRARY_HAS_PERSISTENT) return Form::persistent;
  std::fprintf(stderr, "equivalence: form '%s' is not available here (blocking, nonblocking%s)\n", name.c_str(),
               LIBRARY_HAS_PERSISTENT ? ", persistent" : "; the library has no persistent collectives");
  MPI_Abort(MPI_COMM_WORLD, 2);
  return form;
}

// The salt of a case's data in persistent round `round`: round 0 is the case's own, so the blocking
// and nonblocking forms see exactly the blocking test's data.
inline int round_salt(int salt, int round) { return salt + round * 7777; }

class Tally;

// One case in `form`. prepare(round) fills the inputs in place (a persistent request holds the
// buffers' addresses: nothing may be reallocated) and computes the reference with the blocking PMPI
// call; call(form, request) makes the MPI_* call of that form (request unused when blocking);
// check(round, label) compares. Persistent: two rounds on one request, with new data each time.
template <class Prepare, class Call, class Check>
void run_in_form(Form form, Tally& tally, const std::string& what, Prepare&& prepare, Call&& call, Check&& check);

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
  int finish(const char* what, Form form = Form::blocking) {
    long counts[2] = {passed_, failed_};
    MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
      if (form == Form::blocking) {
        std::printf("%s: %ld checks passed, %ld failed\n", what, counts[0], counts[1]);
      } else {
        std::printf("%s: %ld checks passed, %ld failed (form %s)\n", what, counts[0], counts[1], form_name(form));
      }
    }
    std::fflush(stdout);
    return counts[1] == 0 && counts[0] > 0 ? 0 : 1;
  }

 private:
  long passed_ = 0;
  long failed_ = 0;
};

template <class Prepare, class Call, class Check>
void run_in_form(Form form, Tally& tally, const std::string& what, Prepare&& prepare, Call&& call, Check&& check) {
  const std::string suffix = form == Form::blocking ? "" : std::string(" (") + form_name(form) + ")";
  const auto succeeded = [&](int rc, const char* step) {
    if (rc == MPI_SUCCESS) return true;
    tally.fail(what + suffix + ": " + step + " returned " + std::to_string(rc));
    return false;
  };
  MPI_Request request = MPI_REQUEST_NULL;
  if (form != Form::persistent) {
    prepare(0);
    if (form == Form::blocking) {
      if (succeeded(call(form, &request), "the call")) check(0, what);
      return;
    }
    if (!succeeded(call(form, &request), "the call") || !succeeded(MPI_Wait(&request, MPI_STATUS_IGNORE), "MPI_Wait"))
      return;
    if (request != MPI_REQUEST_NULL) tally.fail(what + suffix + ": MPI_Wait left the request set");
    check(0, what + suffix);
    return;
  }
  if (!succeeded(call(form, &request), "the _init call")) return;
  for (int round = 0; round < 2; ++round) {
    prepare(round);
    if (!succeeded(MPI_Start(&request), "MPI_Start") || !succeeded(MPI_Wait(&request, MPI_STATUS_IGNORE), "MPI_Wait"))
      break;
    // A persistent request stays allocated, inactive, after its completion.
    if (request == MPI_REQUEST_NULL) {
      tally.fail(what + suffix + ": MPI_Wait freed a persistent request");
      return;
    }
    check(round, what + suffix + " round " + std::to_string(round));
  }
  succeeded(MPI_Request_free(&request), "MPI_Request_free");
}

}  // namespace equivalence
