#pragma once
// MPI-4's large-count calls (MPI_Allgather_c, ...): MPI_Count counts and MPI_Aint displacements,
// read without narrowing. Where every value fits an int, the call runs as its int form does, through
// the same decision and engine. A uniform count beyond int (Allgather, Alltoall) becomes one element
// of a contiguous type of that many. Anything else beyond int (a count array entry, a displacement,
// an Allreduce vector, whose predefined operation needs the predefined type) is not usable here and
// goes to the library's own _c function. One mechanism for every row: each parameter is converted
// by its role (parameter_roles.hpp).
#include <mpi.h>

#if MPI_VERSION >= 4
#include <array>
#include <limits>
#include <optional>
#include <vector>

#include "intercept/call_arguments.hpp"
#include "intercept/comm_shape.hpp"

namespace collshim {

// The int form of one large-count call's arguments, parameter by parameter, and what that form
// needs kept for the call: the int copies of arrays, the contiguous types (freed with the call).
// note() sees every parameter first (the communicator and root say how arrays are read), then
// convert() gives each one's int-form value, in parameter order (a uniform count's type follows it).
class LargeCounts : public NotedRoot {
 public:
  LargeCounts() = default;
  LargeCounts(const LargeCounts&) = delete;
  LargeCounts& operator=(const LargeCounts&) = delete;
  ~LargeCounts() {
    for (MPI_Datatype& type : types_) PMPI_Type_free(&type);
  }

  // The communicator sizes the arrays; a root makes them root-only (NotedRoot).
  using NotedRoot::note;
  void note(roles::comm, MPI_Comm comm) { comm_ = comm; }

  template <typename Role, typename Value>
  Value convert(Role, Value value) {
    return value;
  }
  int convert(roles::count, MPI_Count count) { return narrow(count); }
  // Beyond int: one element of the contiguous type that the next `type` parameter becomes.
  int convert(roles::uniform_count, MPI_Count count) {
    if (count <= std::numeric_limits<int>::max()) return static_cast<int>(count);
    pending_count_ = count;
    return 1;
  }
  MPI_Datatype convert(roles::type, MPI_Datatype type) {
    if (pending_count_ == 0) return type;
    const MPI_Count count = pending_count_;
    pending_count_ = 0;
    MPI_Datatype contiguous = MPI_DATATYPE_NULL;
    if (type == MPI_DATATYPE_NULL || PMPI_Type_contiguous_c(count, type, &contiguous) != MPI_SUCCESS) {
      fits_ = false;
      return type;
    }
    types_.push_back(contiguous);
    if (PMPI_Type_commit(&types_.back()) != MPI_SUCCESS) {
      fits_ = false;
      return type;
    }
    return types_.back();
  }
  const int* convert(roles::counts, const MPI_Count* counts) { return copy(counts); }
  const int* convert(roles::displs, const MPI_Aint* displs) { return copy(displs); }

  // Whether every value had an int form: otherwise the library's _c function gets the call.
  bool fits() const { return fits_; }

  // The most count and displacement arrays a row may have (Alltoallv's four).
  static constexpr int max_arrays = 4;
  static constexpr bool is_array(roles::counts) { return true; }
  static constexpr bool is_array(roles::displs) { return true; }
  template <typename Role>
  static constexpr bool is_array(Role) {
    return false;
  }

 private:
  int narrow(MPI_Count value) {
    if (value < std::numeric_limits<int>::min() || value > std::numeric_limits<int>::max()) {
      fits_ = false;
      return 0;
    }
    return static_cast<int>(value);
  }
  // The array's entries as ints (null stays null; not read off the root of a rooted call).
  template <typename Value>
  const int* copy(const Value* from) {
    if (!shape_) shape_.emplace(comm_);
    if (!reads_arrays(*shape_) || from == nullptr) return nullptr;
    std::vector<int>& to = copies_[arrays_++];
    to.resize(static_cast<std::size_t>(shape_->size));
    for (int i = 0; i < shape_->size; ++i) to[i] = narrow(from[i]);
    return to.data();
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  std::optional<CommShape> shape_;  // asked of MPI at the first array
  std::array<std::vector<int>, max_arrays> copies_;
  int arrays_ = 0;
  std::vector<MPI_Datatype> types_;  // committed; freed with the call
  MPI_Count pending_count_ = 0;      // a uniform count beyond int, waiting for its type
  bool fits_ = true;
};

// Each row's conversion: note() then convert() every parameter, into the int form's arguments.
template <Collective collective>
struct LargeCountArguments;

#define COLLSHIM_LARGE_COUNT_NOTE(counts, parameter) \
  counts.note(COLLSHIM_ROLE(parameter), COLLSHIM_ARGUMENT(-, parameter))
#define COLLSHIM_LARGE_COUNT_CONVERT(counts, parameter) \
  counts.convert(COLLSHIM_ROLE(parameter), COLLSHIM_ARGUMENT(-, parameter))
#define COLLSHIM_LARGE_COUNT_IS_ARRAY(form, parameter) +LargeCounts::is_array(COLLSHIM_ROLE(parameter))
#define COLLSHIM_LARGE_COUNT_ARGUMENTS(Name, lower, UPPER, parameters, ...)                                           \
  template <>                                                                                                         \
  struct LargeCountArguments<Collective::lower> {                                                                     \
    static_assert((0 COLLSHIM_EACH(COLLSHIM_LARGE_COUNT_IS_ARRAY, COLLSHIM_NOTHING, -, COLLSHIM_SPLAT parameters)) <= \
                  LargeCounts::max_arrays);                                                                           \
    static CallArguments<Collective::lower> convert(LargeCounts& counts, COLLSHIM_PARAMETERS(c, parameters)) {        \
      (COLLSHIM_EACH(COLLSHIM_LARGE_COUNT_NOTE, COLLSHIM_COMMA, counts, COLLSHIM_SPLAT parameters));                  \
      return {COLLSHIM_EACH(COLLSHIM_LARGE_COUNT_CONVERT, COLLSHIM_COMMA, counts, COLLSHIM_SPLAT parameters)};        \
    }                                                                                                                 \
  };
COLLSHIM_COLLECTIVES(COLLSHIM_LARGE_COUNT_ARGUMENTS)
#undef COLLSHIM_LARGE_COUNT_ARGUMENTS

// The int form's arguments of a large-count call, as converted (LargeCounts holds what they point to).
template <Collective collective>
struct ConvertedArguments {
  CallArguments<collective> converted;
};

// A large-count call shape: the int shape `Shape` built from the converted arguments, usable only
// where they fitted. The bases are constructed in the order listed: LargeCounts first, which lives
// with the call.
template <typename Shape>
struct LargeCountShape : LargeCounts, ConvertedArguments<Shape::collective>, Shape {
  template <typename... Args>
  explicit LargeCountShape(Args... args)
      : LargeCounts(),
        ConvertedArguments<Shape::collective>{LargeCountArguments<Shape::collective>::convert(*this, args...)},
        Shape(this->converted) {}
  bool arguments_usable(int p) const { return fits() && Shape::arguments_usable(p); }

  // What a started call keeps (collective_operation.hpp, as IntForm's): the converted arguments,
  // which it copies (their arrays, the contiguous types) before this shape ends, read by the int
  // form's shape. None where a value has no int form: the library's own _c function gets the call.
  using IntShape = IntForm<Shape>;
  template <typename... Args>
  std::optional<CallArguments<Shape::collective>> int_arguments(Args...) const {
    if (!fits()) return std::nullopt;
    return this->converted;
  }
};

}  // namespace collshim
#endif
