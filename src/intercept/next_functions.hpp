#pragma once
// The next definition of every MPI function the shim defines (entry_points.cpp looks them up), as
// functions of the call's arguments: what the shim's flows call when a call goes to the library.
#include <mpi.h>

#include "intercept/entry_point_table.hpp"

namespace collshim {

// The next definition, in load order, of every MPI function the shim defines: looked up when the
// library is loaded (every object is mapped by then), its PMPI_ twin where there is none.
struct NextFunctions {
#define COLLSHIM_NEXT_MEMBER(Function, Pmpi, ...) decltype(&Pmpi) Function = &Pmpi;
  COLLSHIM_DECIDED_ENTRY_POINTS(COLLSHIM_NEXT_MEMBER)
  COLLSHIM_STARTED_ENTRY_POINTS(COLLSHIM_NEXT_MEMBER)
  COLLSHIM_NEXT_MEMBER(MPI_Init, PMPI_Init)
  COLLSHIM_NEXT_MEMBER(MPI_Init_thread, PMPI_Init_thread)
  COLLSHIM_NEXT_MEMBER(MPI_Finalize, PMPI_Finalize)
#undef COLLSHIM_NEXT_MEMBER
};
inline NextFunctions next_mpi;  // filled in by entry_points.cpp when the library is loaded

// The pass-through of the shim's path: the next definition, as a function of the call's arguments.
#define COLLSHIM_NEXT_FUNCTION(Function, Pmpi, Shape, parameters, arguments) \
  int next_##Function parameters { return next_mpi.Function arguments; }
COLLSHIM_DECIDED_ENTRY_POINTS(COLLSHIM_NEXT_FUNCTION)
#undef COLLSHIM_NEXT_FUNCTION
// The library's int nonblocking forms, where a nonblocking or persistent operation runs the library's.
#define COLLSHIM_NEXT_FUNCTION(Function, Pmpi, Shape, parameters, shape_arguments, arguments, ...) \
  int next_##Function parameters { return next_mpi.Function arguments; }
COLLSHIM_NONBLOCKING_ENTRY_POINTS(COLLSHIM_NEXT_FUNCTION)
#undef COLLSHIM_NEXT_FUNCTION

// The library's nonblocking form of each collective (as the shim's next definition).
template <Collective collective>
struct NonblockingLibrary;
#define COLLSHIM_NONBLOCKING_LIBRARY(Name, lower, UPPER, parameters, ...) \
  template <>                                                             \
  struct NonblockingLibrary<Collective::lower> {                          \
    static constexpr auto function = &next_MPI_I##lower;                  \
  };
COLLSHIM_COLLECTIVES(COLLSHIM_NONBLOCKING_LIBRARY)
#undef COLLSHIM_NONBLOCKING_LIBRARY

}  // namespace collshim
