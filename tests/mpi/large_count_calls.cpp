// MPI-4's large-count entry points (MPI_Allgather_c, ...) through the shim: each of the seven is
// called with a contiguous type, a strided derived type and (where MPI allows it) MPI_IN_PLACE, and
// its result must equal the library's own blocking PMPI_*_c call on the same arguments, byte for
// byte. Run with forcing variables, the report then shows the shim's algorithms ran. `--form` calls
// the shim's side in a started form: MPI_I<name>_c + MPI_Wait, or MPI_<Name>_init_c, then two rounds
// of MPI_Start + MPI_Wait with new data each, then MPI_Request_free.
//
// usage: large_count_calls [--form blocking|nonblocking|persistent]
//                                     the seven collectives at this process count
//        large_count_calls --huge     MPI_Allgather_c of 2^31 + 64 bytes per rank, in place (2 ranks:
//                                     2 GiB + per rank and block), checked against PMPI_Allgather_c
//        large_count_calls --beyond-int
//                                     MPI_Allgatherv_c with values that have no int form, in each form:
//                                     the shim passes them on to the library's own _c functions
// Prints "large_count_calls: N passed, 0 failed" (or FAIL lines), with " (form F)" for a started form.
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#if MPI_VERSION >= 4
namespace {

int rank = 0, p = 0, passed = 0, failed = 0;

enum class Form { blocking, nonblocking, persistent };
const char* const form_names[] = {"blocking", "nonblocking", "persistent"};
Form form = Form::blocking;  // of the shim's calls

// The shim's side of one case in `form`: the blocking call, or the started one completed at once; a
// persistent request is made at the first round's call, started at every round, freed at the end.
class ShimCall {
 public:
  explicit ShimCall(Form form) : form_(form) {}
  ShimCall(const ShimCall&) = delete;
  ShimCall& operator=(const ShimCall&) = delete;
  ~ShimCall() {
    if (request_ != MPI_REQUEST_NULL) MPI_Request_free(&request_);
  }

  template <class Blocking, class Nonblocking, class Persistent>
  int operator()(Blocking blocking, Nonblocking nonblocking, Persistent persistent) {
    if (form_ == Form::blocking) return blocking();
    if (form_ == Form::nonblocking) {
      MPI_Request request = MPI_REQUEST_NULL;
      const int rc = nonblocking(&request);
      return rc != MPI_SUCCESS ? rc : MPI_Wait(&request, MPI_STATUS_IGNORE);
    }
    if (request_ == MPI_REQUEST_NULL) {
      const int rc = persistent(&request_);
      if (rc != MPI_SUCCESS) return rc;
    }
    const int rc = MPI_Start(&request_);
    return rc != MPI_SUCCESS ? rc : MPI_Wait(&request_, MPI_STATUS_IGNORE);
  }

 private:
  Form form_;
  MPI_Request request_ = MPI_REQUEST_NULL;
};

// Collective <Name> with the arguments: through the shim in this run's form where `shim` is set,
// otherwise the library's blocking PMPI_<Name>_c.
#define LARGE_COUNT_CALL(Name, lower, ...)                                                                       \
  (shim != nullptr                                                                                               \
       ? (*shim)([&] { return MPI_##Name##_c(__VA_ARGS__); },                                                    \
                 [&](MPI_Request* request) { return MPI_I##lower##_c(__VA_ARGS__, request); },                   \
                 [&](MPI_Request* request) { return MPI_##Name##_init_c(__VA_ARGS__, MPI_INFO_NULL, request); }) \
       : PMPI_##Name##_c(__VA_ARGS__))

// One element: 3 ints, the middle one a hole in the strided type (its extent is 3 ints, its data 2).
struct Layout {
  MPI_Datatype type;
  MPI_Count ints_per_element;  // ints an element spans in memory
};

void fill(std::vector<int>& buffer, int salt) {
  for (std::size_t i = 0; i < buffer.size(); ++i) buffer[i] = salt * 100000 + static_cast<int>(i);
}

// Runs `call` through the shim (`shim` set: MPI_*_c in this run's form) and through the library
// (PMPI_*_c) on identical inputs; the receive buffers must then be equal, holes included (both start
// from the same fill). A persistent call runs two rounds on the same buffers, with new data each.
using Call = std::function<int(ShimCall* shim, std::vector<int>& in, std::vector<int>& out)>;
void compare(const std::string& name, const Call& call, std::size_t ints) {
  std::vector<int> in_shim(ints), out_shim(ints), in_native(ints), out_native(ints);
  ShimCall shim(form);
  int bad = 0;
  const int rounds = form == Form::persistent ? 2 : 1;
  for (int round = 0; round < rounds && !bad; ++round) {
    const int salt = rank + 1 + 100 * round;
    fill(in_shim, salt);
    fill(in_native, salt);
    fill(out_shim, -salt);
    fill(out_native, -salt);
    const int rc_shim = call(&shim, in_shim, out_shim);
    const int rc_native = call(nullptr, in_native, out_native);
    bad = rc_shim != MPI_SUCCESS || rc_native != MPI_SUCCESS || out_shim != out_native || in_shim != in_native;
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (bad && rank == 0)
      std::printf("FAIL: %s (%s, round %d) differs from the library's (rc %d, %d)\n", name.c_str(),
                  form_names[static_cast<int>(form)], round, rc_shim, rc_native);
  }
  ++(bad ? failed : passed);
}

void seven_collectives(const Layout& layout, const std::string& type_name) {
  const MPI_Datatype t = layout.type;
  const MPI_Count n = 5;                               // elements per block
  const MPI_Count span = n * layout.ints_per_element;  // ints a block spans
  const std::size_t all = static_cast<std::size_t>(span) * p + 8;
  std::vector<MPI_Count> counts(p), symmetric(p);
  std::vector<MPI_Aint> displs(p);
  for (int i = 0; i < p; ++i) {
    counts[i] = n - (i % 2);  // uneven blocks
    displs[i] = static_cast<MPI_Aint>(i) * n;
    // Alltoallv's: block i <-> i of the same size on both sides, as MPI_IN_PLACE requires.
    symmetric[i] = 1 + (i + rank) % 3;
  }
  const MPI_Count mine = counts[rank];
  for (const bool in_place : {false, true}) {
    const std::string tag = type_name + (in_place ? " in place" : "");
    compare(
        "MPI_Allgather_c " + tag,
        [&](ShimCall* shim, std::vector<int>& in, std::vector<int>& out) {
          const void* send = in_place ? MPI_IN_PLACE : in.data();
          if (in_place) std::memcpy(out.data() + rank * span, in.data(), sizeof(int) * span);
          return LARGE_COUNT_CALL(Allgather, allgather, send, n, t, out.data(), n, t, MPI_COMM_WORLD);
        },
        all);
    compare(
        "MPI_Allgatherv_c " + tag,
        [&](ShimCall* shim, std::vector<int>& in, std::vector<int>& out) {
          const void* send = in_place ? MPI_IN_PLACE : in.data();
          if (in_place) std::memcpy(out.data() + displs[rank] * layout.ints_per_element, in.data(), sizeof(int) * span);
          return LARGE_COUNT_CALL(Allgatherv, allgatherv, send, mine, t, out.data(), counts.data(), displs.data(), t,
                                  MPI_COMM_WORLD);
        },
        all);
    compare(
        "MPI_Alltoall_c " + tag,
        [&](ShimCall* shim, std::vector<int>& in, std::vector<int>& out) {
          if (in_place) out = in;
          return LARGE_COUNT_CALL(Alltoall, alltoall, in_place ? MPI_IN_PLACE : in.data(), n, t, out.data(), n, t,
                                  MPI_COMM_WORLD);
        },
        all);
    compare(
        "MPI_Alltoallv_c " + tag,
        [&](ShimCall* shim, std::vector<int>& in, std::vector<int>& out) {
          if (in_place) out = in;
          return LARGE_COUNT_CALL(Alltoallv, alltoallv, in_place ? MPI_IN_PLACE : in.data(), symmetric.data(),
                                  displs.data(), t, out.data(), symmetric.data(), displs.data(), t, MPI_COMM_WORLD);
        },
        all);
    compare(
        "MPI_Allreduce_c " + std::string(in_place ? "in place" : ""),
        [&](ShimCall* shim, std::vector<int>& in, std::vector<int>& out) {
          if (in_place) out = in;
          return LARGE_COUNT_CALL(Allreduce, allreduce, in_place ? MPI_IN_PLACE : in.data(), out.data(), span * p,
                                  MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        },
        all);
    const int root = p - 1;
    compare(
        "MPI_Gatherv_c " + tag,
        [&](ShimCall* shim, std::vector<int>& in, std::vector<int>& out) {
          const bool place = in_place && rank == root;
          if (place) std::memcpy(out.data() + displs[rank] * layout.ints_per_element, in.data(), sizeof(int) * span);
          return LARGE_COUNT_CALL(Gatherv, gatherv, place ? MPI_IN_PLACE : in.data(), mine, t, out.data(),
                                  counts.data(), displs.data(), t, root, MPI_COMM_WORLD);
        },
        all);
    compare(
        "MPI_Scatterv_c " + tag,
        [&](ShimCall* shim, std::vector<int>& in, std::vector<int>& out) {
          const bool place = in_place && rank == root;
          return LARGE_COUNT_CALL(Scatterv, scatterv, in.data(), counts.data(), displs.data(), t,
                                  place ? MPI_IN_PLACE : out.data(), mine, t, root, MPI_COMM_WORLD);
        },
        all);
  }
}

// Values that have no int form, which the shim passes on to the library's own _c function (in each
// form: the blocking call, MPI_Iallgatherv_c, MPI_Allgatherv_init_c), as they are: the report then
// lists the started ones as passed through. Each result must equal PMPI_Allgatherv_c's.
void beyond_int() {
  // Displacements beyond int: MPI_Allgatherv_c into MPI_BOTTOM, each block's absolute address its
  // displacement in bytes (Linux maps the heap above 2^31). Two arrays, one per receive buffer,
  // which live as long as the persistent request bound to them.
  const MPI_Count n = 5;
  const std::size_t all = static_cast<std::size_t>(n) * p;
  std::vector<MPI_Count> counts(p, n * sizeof(int));
  std::vector<MPI_Aint> addresses_shim(p), addresses_native(p);
  const Call bottom = [&](ShimCall* shim, std::vector<int>& in, std::vector<int>& out) {
    std::vector<MPI_Aint>& addresses = shim != nullptr ? addresses_shim : addresses_native;
    for (int i = 0; i < p; ++i) MPI_Get_address(out.data() + i * n, &addresses[i]);
    return LARGE_COUNT_CALL(Allgatherv, allgatherv, in.data(), n * static_cast<MPI_Count>(sizeof(int)), MPI_BYTE,
                            MPI_BOTTOM, counts.data(), addresses.data(), MPI_BYTE, MPI_COMM_WORLD);
  };
  // Counts beyond int: 2^31 + 1 elements of a type of no data, every block (so nothing moves).
  const MPI_Count many = (MPI_Count{1} << 31) + 1;
  std::vector<MPI_Count> many_counts(p, many);
  std::vector<MPI_Aint> no_displs(p, 0);
  MPI_Datatype empty;
  MPI_Type_contiguous(0, MPI_INT, &empty);
  MPI_Type_commit(&empty);
  const Call empty_blocks = [&](ShimCall* shim, std::vector<int>& in, std::vector<int>& out) {
    return LARGE_COUNT_CALL(Allgatherv, allgatherv, in.data(), many, empty, out.data(), many_counts.data(),
                            no_displs.data(), empty, MPI_COMM_WORLD);
  };
  for (const Form each : {Form::blocking, Form::nonblocking, Form::persistent}) {
    form = each;
    compare("MPI_Allgatherv_c to MPI_BOTTOM, displacements beyond int", bottom, all);
    compare("MPI_Allgatherv_c, counts beyond int", empty_blocks, all);
  }
  form = Form::blocking;
  MPI_Type_free(&empty);
  // Else the case tested nothing.
  int beyond = 0;
  for (const MPI_Aint address : addresses_shim) beyond |= address > std::numeric_limits<int>::max();
  MPI_Allreduce(MPI_IN_PLACE, &beyond, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!beyond) {
    ++failed;
    if (rank == 0) std::printf("FAIL: the buffers' addresses fit an int: no displacement was beyond int\n");
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
  const std::string option = argc > 1 ? argv[1] : "";
  if (option == "--huge") {
    huge_allgather();
  } else if (option == "--beyond-int") {
    beyond_int();
  } else {
    if (option == "--form" && argc > 2) {
      const std::string name = argv[2];
      form = name == "nonblocking" ? Form::nonblocking : name == "persistent" ? Form::persistent : Form::blocking;
    }
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
  const std::string form_text =
      form == Form::blocking ? "" : std::string(" (form ") + form_names[static_cast<int>(form)] + ")";
  if (rank == 0) std::printf("large_count_calls: %d passed, %d failed%s\n", passed, failed, form_text.c_str());
#else
  std::printf("large_count_calls: the MPI library has no large-count functions (MPI_VERSION %d)\n", MPI_VERSION);
#endif
  MPI_Finalize();
  return 0;
}
