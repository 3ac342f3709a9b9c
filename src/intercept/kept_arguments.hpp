#pragma once
// What a nonblocking or persistent collective keeps of its call's arguments for the operation's
// life. A program may release the count and displacement arrays once the nonblocking call returns
// (the libraries build their schedules from them inside the call; mpi4py frees its arrays there),
// free a derived datatype while the operation is pending (MPI_Type_free: pending communication
// completes normally), and change a persistent call's arrays after MPI_*_init (the libraries'
// schedules are fixed there). So the operation copies the arrays and duplicates the derived
// datatypes at the call, and everything after it, the shim's schedule or the library's nonblocking
// call, reads the copies. The buffers stay the program's, as MPI defines.
#include <mpi.h>

#include <array>
#include <utility>
#include <vector>

#include "intercept/call_arguments.hpp"
#include "intercept/comm_shape.hpp"

namespace collshim {

// The storage behind kept arguments, and the conversion of each parameter by its role: note()
// sees every parameter first (a root makes the arrays root-only), then keep() gives each one's kept
// value.
class ArgumentStore : public NotedRoot {
 public:
  explicit ArgumentStore(CommShape shape) : shape_(shape) {}
  ~ArgumentStore() {
    for (auto& [given, copy] : types_) PMPI_Type_free(&copy);
  }
  ArgumentStore(const ArgumentStore&) = delete;
  ArgumentStore& operator=(const ArgumentStore&) = delete;

  template <typename Role, typename Value>
  Value keep(Role, Value value) {
    return value;
  }
  const int* keep(roles::counts, const int* array) { return copy(array); }
  const int* keep(roles::displs, const int* array) { return copy(array); }
  // A derived type as a duplicate the operation owns (one per distinct type); a predefined one as it is.
  MPI_Datatype keep(roles::type, MPI_Datatype type) {
    if (type == MPI_DATATYPE_NULL) return type;
    for (const auto& [given, copy] : types_) {
      if (given == type) return copy;
    }
    int integers = 0, addresses = 0, datatypes = 0, combiner = MPI_COMBINER_NAMED;
    if (PMPI_Type_get_envelope(type, &integers, &addresses, &datatypes, &combiner) != MPI_SUCCESS ||
        combiner == MPI_COMBINER_NAMED)
      return type;
    MPI_Datatype copy = MPI_DATATYPE_NULL;
    if (PMPI_Type_dup(type, &copy) != MPI_SUCCESS) return type;  // then the library reports what is wrong
    types_.emplace_back(type, copy);
    return copy;
  }

  static constexpr int max_arrays = 4;  // Alltoallv's

 private:
  // An array this rank reads, copied; one it does not read (a rooted call's off the root) as given.
  const int* copy(const int* array) {
    if (array == nullptr || !reads_arrays(shape_)) return array;
    std::vector<int>& to = arrays_[arrays_used_++];
    to.assign(array, array + shape_.size);
    return to.data();
  }

  CommShape shape_;
  std::array<std::vector<int>, max_arrays> arrays_;
  int arrays_used_ = 0;
  std::vector<std::pair<MPI_Datatype, MPI_Datatype>> types_;  // (the program's, the duplicate)
};

// Each row's conversion into kept arguments.
#define COLLSHIM_KEPT_NOTE(store, parameter) store.note(COLLSHIM_ROLE(parameter), given.COLLSHIM_ARGUMENT(-, parameter))
#define COLLSHIM_KEPT_ARGUMENT(store, parameter) \
  store.keep(COLLSHIM_ROLE(parameter), given.COLLSHIM_ARGUMENT(-, parameter))
#define COLLSHIM_KEEP_ARGUMENTS(Name, lower, UPPER, parameters, ...)                                      \
  inline CallArguments<Collective::lower> keep_arguments(ArgumentStore& store,                            \
                                                         const CallArguments<Collective::lower>& given) { \
    (COLLSHIM_EACH(COLLSHIM_KEPT_NOTE, COLLSHIM_COMMA, store, COLLSHIM_SPLAT parameters));                \
    return {COLLSHIM_EACH(COLLSHIM_KEPT_ARGUMENT, COLLSHIM_COMMA, store, COLLSHIM_SPLAT parameters)};     \
  }
COLLSHIM_COLLECTIVES(COLLSHIM_KEEP_ARGUMENTS)
#undef COLLSHIM_KEEP_ARGUMENTS
#undef COLLSHIM_KEPT_ARGUMENT
#undef COLLSHIM_KEPT_NOTE

// One call's arguments as the operation keeps them. Not movable: the arguments point into the store.
template <Collective collective>
class KeptArguments {
 public:
  // `shape`: of the call's communicator, as this rank sees it.
  KeptArguments(const CallArguments<collective>& given, CommShape shape)
      : store_(shape), arguments_(keep_arguments(store_, given)) {}
  const CallArguments<collective>& get() const { return arguments_; }

 private:
  ArgumentStore store_;
  CallArguments<collective> arguments_;
};

}  // namespace collshim
