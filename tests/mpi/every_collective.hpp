#pragma once
// Every intercepted function, from the rows of src/intercept/entry_point_table.hpp, called with one
// set of arguments that fits every collective: each rank has n ints for each rank. Send and receive
// buffers hold p * n ints, every count is n, every displacement i * n, the root is 0, the type
// MPI_INT and the operation MPI_SUM. The programs that must reach every function (stacking_calls,
// unhandled_calls) iterate these lists, so a new collective is covered by its row alone.
#include <mpi.h>

#include <string>
#include <vector>

#include "intercept/entry_point_table.hpp"
#include "library_forms.hpp"

namespace every_collective {

struct Arguments {
  int n = 0;
  const int* send = nullptr;
  int* recv = nullptr;
  const int* counts = nullptr;
  const int* displs = nullptr;
  MPI_Comm comm = MPI_COMM_NULL;
  int root = 0;
  // The same counts and displacements as the large-count forms take them (MPI-4).
  const MPI_Count* large_counts = nullptr;
  const MPI_Aint* large_displs = nullptr;
};

// The arguments of a large-count form, under the names the role macros below read.
struct LargeCountArguments {
  int n;
  const int* send;
  int* recv;
  const MPI_Count* counts;
  const MPI_Aint* displs;
  MPI_Comm comm;
  int root;
};
inline LargeCountArguments large_count(const Arguments& a) {
  return {a.n, a.send, a.recv, a.large_counts, a.large_displs, a.comm, a.root};
}

// A function and its blocking reference through PMPI_* (which no PMPI tool sees). `start` makes a
// request for the nonblocking and persistent forms (the blocking form leaves it MPI_REQUEST_NULL).
struct Function {
  std::string name;
  int (*call)(const Arguments&, MPI_Request*);
  int (*reference)(const Arguments&);
  bool persistent = false;
};

// Each row's parameters as arguments, by role.
#define EVERY_COLLECTIVE_ARGUMENTS(a, parameters) \
  COLLSHIM_EACH(EVERY_COLLECTIVE_ARGUMENT, COLLSHIM_COMMA, a, COLLSHIM_SPLAT parameters)
#define EVERY_COLLECTIVE_ARGUMENT(a, parameter) EVERY_COLLECTIVE_BY_ROLE(a, EVERY_COLLECTIVE_ROLE parameter)
#define EVERY_COLLECTIVE_ROLE(role, name) role
#define EVERY_COLLECTIVE_BY_ROLE(a, role) EVERY_COLLECTIVE_BY_ROLE_(a, role)
#define EVERY_COLLECTIVE_BY_ROLE_(a, role) EVERY_COLLECTIVE_VALUE_##role(a)
#define EVERY_COLLECTIVE_VALUE_send_or_in_place(a) (a).send
#define EVERY_COLLECTIVE_VALUE_send(a) (a).send
#define EVERY_COLLECTIVE_VALUE_recv(a) (a).recv
#define EVERY_COLLECTIVE_VALUE_recv_or_in_place(a) (a).recv
#define EVERY_COLLECTIVE_VALUE_uniform_count(a) (a).n
#define EVERY_COLLECTIVE_VALUE_count(a) (a).n
#define EVERY_COLLECTIVE_VALUE_counts(a) (a).counts
#define EVERY_COLLECTIVE_VALUE_displs(a) (a).displs
#define EVERY_COLLECTIVE_VALUE_type(a) MPI_INT
#define EVERY_COLLECTIVE_VALUE_op(a) MPI_SUM
#define EVERY_COLLECTIVE_VALUE_root(a) (a).root
#define EVERY_COLLECTIVE_VALUE_comm(a) (a).comm

// The blocking MPI_<Name> of every row, in table order.
inline std::vector<Function> blocking() {
  return {
#define EVERY_COLLECTIVE_BLOCKING(Name, lower, UPPER, parameters, ...)                                     \
  {"MPI_" #Name,                                                                                           \
   [](const Arguments& a, MPI_Request*) { return MPI_##Name(EVERY_COLLECTIVE_ARGUMENTS(a, parameters)); }, \
   [](const Arguments& a) { return PMPI_##Name(EVERY_COLLECTIVE_ARGUMENTS(a, parameters)); }},
      COLLSHIM_COLLECTIVES(EVERY_COLLECTIVE_BLOCKING, -)
#undef EVERY_COLLECTIVE_BLOCKING
  };
}

// The nonblocking MPI_I<name> of every row and, where the library has them, the persistent forms
// (library_forms.hpp: MPI_<Name>_init, or Open MPI 4.1's MPIX_<Name>_init) and, under MPI-4, the
// large-count MPI_I<name>_c and MPI_<Name>_init_c: what the shim passes on unhandled.
inline std::vector<Function> unhandled() {
  std::vector<Function> functions = {
#define EVERY_COLLECTIVE_NONBLOCKING(Name, lower, UPPER, parameters, ...)     \
  {"MPI_I" #lower,                                                            \
   [](const Arguments& a, MPI_Request* request) {                             \
     return MPI_I##lower(EVERY_COLLECTIVE_ARGUMENTS(a, parameters), request); \
   },                                                                         \
   [](const Arguments& a) { return PMPI_##Name(EVERY_COLLECTIVE_ARGUMENTS(a, parameters)); }},
      COLLSHIM_COLLECTIVES(EVERY_COLLECTIVE_NONBLOCKING, -)
#undef EVERY_COLLECTIVE_NONBLOCKING
  };
#if LIBRARY_HAS_PERSISTENT
  const std::vector<Function> persistent = {
#define EVERY_COLLECTIVE_PERSISTENT(Name, lower, UPPER, parameters, ...)                                 \
  {LIBRARY_PERSISTENT_NAME(Name),                                                                        \
   [](const Arguments& a, MPI_Request* request) {                                                        \
     return LIBRARY_PERSISTENT(Name)(EVERY_COLLECTIVE_ARGUMENTS(a, parameters), MPI_INFO_NULL, request); \
   },                                                                                                    \
   [](const Arguments& a) { return PMPI_##Name(EVERY_COLLECTIVE_ARGUMENTS(a, parameters)); }, true},
      COLLSHIM_COLLECTIVES(EVERY_COLLECTIVE_PERSISTENT, -)
#undef EVERY_COLLECTIVE_PERSISTENT
  };
  functions.insert(functions.end(), persistent.begin(), persistent.end());
#endif
#if MPI_VERSION >= 4
  const std::vector<Function> large_count = {
#define EVERY_COLLECTIVE_LARGE_COUNT(Name, lower, UPPER, parameters, ...)                               \
  {"MPI_I" #lower "_c",                                                                                 \
   [](const Arguments& a, MPI_Request* request) {                                                       \
     const LargeCountArguments c = every_collective::large_count(a);                                    \
     return MPI_I##lower##_c(EVERY_COLLECTIVE_ARGUMENTS(c, parameters), request);                       \
   },                                                                                                   \
   [](const Arguments& a) { return PMPI_##Name(EVERY_COLLECTIVE_ARGUMENTS(a, parameters)); }},          \
      {"MPI_" #Name "_init_c",                                                                          \
       [](const Arguments& a, MPI_Request* request) {                                                   \
         const LargeCountArguments c = every_collective::large_count(a);                                \
         return MPI_##Name##_init_c(EVERY_COLLECTIVE_ARGUMENTS(c, parameters), MPI_INFO_NULL, request); \
       },                                                                                               \
       [](const Arguments& a) { return PMPI_##Name(EVERY_COLLECTIVE_ARGUMENTS(a, parameters)); }, true},
      COLLSHIM_COLLECTIVES(EVERY_COLLECTIVE_LARGE_COUNT, -)
#undef EVERY_COLLECTIVE_LARGE_COUNT
  };
  functions.insert(functions.end(), large_count.begin(), large_count.end());
#endif
  return functions;
}

}  // namespace every_collective
