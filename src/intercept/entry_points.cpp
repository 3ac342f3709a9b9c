// The MPI entry points of libcollshim.so, the only C ABI of the shim, and the lookup of the next
// definition of each (another PMPI tool, or the MPI library). Each collective takes its fast path
// (straight to the library) where nothing can route it to an algorithm; otherwise its flow:
// blocking_call.hpp for the blocking forms, collective_operation.hpp for the nonblocking and
// persistent ones. docs/design.md draws a call's path.
#include <dlfcn.h>
#include <mpi.h>

#include "intercept/blocking_call.hpp"
#include "intercept/collective_operation.hpp"
#include "intercept/large_count.hpp"
#include "intercept/next_functions.hpp"
#include "intercept/runtime.hpp"

#define COLLSHIM_EXPORT extern "C" __attribute__((visibility("default")))

namespace collshim {
namespace {

// `own` is the shim's definition: a lookup that finds it again (the shim linked into the program
// itself) must not make a call loop.
template <typename Function>
void look_up_next(Function& next, const char* name, const void* own) {
  void* found = dlsym(RTLD_NEXT, name);
  if (found != nullptr && found != own) next = reinterpret_cast<Function>(found);
}

// MPI_COMM_NULL is reported by the shim itself, as MPI_ERR_COMM through MPI_COMM_WORLD's error
// handler (where MPI 3.1 raises errors that have no valid communicator): Open MPI 4.1.4's own
// MPI_Allgather dereferences it and crashes, even under MPI_ERRORS_RETURN.
[[gnu::noinline]] int null_communicator_error() {
  PMPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_COMM);
  return MPI_ERR_COMM;
}

// Null when the call passes straight through.
Runtime* runtime_for(Collective collective) {
  Runtime* runtime = Runtime::active();
  return runtime == nullptr || runtime->passes_through(collective) ? nullptr : runtime;
}

}  // namespace
}  // namespace collshim

using namespace collshim;

COLLSHIM_EXPORT int MPI_Init(int* argc, char*** argv) {
  const int rc = next_mpi.MPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) Runtime::start();
  return rc;
}

COLLSHIM_EXPORT int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = next_mpi.MPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) Runtime::start();
  return rc;
}

COLLSHIM_EXPORT int MPI_Finalize() {
  Runtime::stop();
  return next_mpi.MPI_Finalize();
}

// Every row of the table: the exported function, its fast path and the shim's path. A call the shim
// passes on goes to the next definition of the same MPI_* function in load order (another PMPI tool
// preloaded after the shim, such as a profiler, or the MPI library), as PMPI tools stack; the shim's
// own messages go to PMPI_* and are not the application's.
#define COLLSHIM_ARGUMENTS(...) __VA_ARGS__
#define COLLSHIM_ENTRY_POINT(Function, Pmpi, Shape, parameters, arguments)                                          \
  COLLSHIM_EXPORT int Function parameters {                                                                         \
    Runtime* runtime = runtime_for(Shape::collective);                                                              \
    if (comm == MPI_COMM_NULL && Runtime::active() != nullptr) return null_communicator_error();                    \
    if (runtime == nullptr && !OperationTable::running()) return next_mpi.Function arguments;                       \
    if (runtime == nullptr) return call_library<Shape::collective, &next_##Function>(COLLSHIM_ARGUMENTS arguments); \
    return intercept<Shape, &next_##Function>(runtime, comm, COLLSHIM_ARGUMENTS arguments);                         \
  }
COLLSHIM_DECIDED_ENTRY_POINTS(COLLSHIM_ENTRY_POINT)

// Every nonblocking and persistent form: run by the shim (start_collective), or passed straight on
// where nothing can route it to an algorithm and there is no report (Runtime::started_forms_pass).
// `library` is the operation's way to the library's int nonblocking form (the int form's arguments,
// a large-count call's converted, on the communicator's lane), `pass_on` the call unchanged.
#define COLLSHIM_STARTED_ENTRY_POINT(Function, Pmpi, Shape, parameters, shape_arguments, arguments, form, nonblocking) \
  COLLSHIM_EXPORT int Function parameters {                                                                            \
    Runtime* runtime = Runtime::active();                                                                              \
    if (runtime == nullptr || runtime->started_forms_pass(Shape::collective)) return next_mpi.Function arguments;      \
    if (comm == MPI_COMM_NULL) return null_communicator_error();                                                       \
    return start_collective<Shape>(                                                                                    \
        *runtime, StartedFunction::Function, #Function, CallForm::form == CallForm::persistent, comm, request,         \
        [](CallArguments<Shape::collective> kept, MPI_Comm lane, MPI_Request* started) {                               \
          kept.comm = lane;                                                                                            \
          const auto [COLLSHIM_ARGUMENTS shape_arguments] = kept;                                                      \
          return next_##nonblocking(COLLSHIM_ARGUMENTS shape_arguments, started);                                      \
        },                                                                                                             \
        [=] { return next_mpi.Function arguments; }, COLLSHIM_ARGUMENTS shape_arguments);                              \
  }
COLLSHIM_STARTED_ENTRY_POINTS(COLLSHIM_STARTED_ENTRY_POINT)

// Runs when the library is loaded, before the program's main.
[[gnu::constructor]] static void collshim_look_up_next_functions() {
#define COLLSHIM_LOOK_UP(Function, ...) \
  look_up_next(next_mpi.Function, #Function, reinterpret_cast<const void*>(&Function));
  COLLSHIM_DECIDED_ENTRY_POINTS(COLLSHIM_LOOK_UP)
  COLLSHIM_STARTED_ENTRY_POINTS(COLLSHIM_LOOK_UP)
  COLLSHIM_LOOK_UP(MPI_Init)
  COLLSHIM_LOOK_UP(MPI_Init_thread)
  COLLSHIM_LOOK_UP(MPI_Finalize)
#undef COLLSHIM_LOOK_UP
}
