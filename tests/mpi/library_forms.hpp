#pragma once
// Which persistent collectives the MPI library declares, for the test programs: MPI-4's
// MPI_<Name>_init (MPICH 4; Open MPI 5 declares them at MPI_VERSION 3), else Open MPI 4.1's
// MPIX_<Name>_init (its pcollreq extension, in mpi-ext.h), else none. LIBRARY_PERSISTENT(Allgather)
// names the function and LIBRARY_PERSISTENT_NAME(Allgather) spells it, where
// LIBRARY_HAS_PERSISTENT is 1.
#include <mpi.h>
#if defined(OPEN_MPI) && __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#if MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
#define LIBRARY_HAS_PERSISTENT 1
#define LIBRARY_PERSISTENT(Name) MPI_##Name##_init
#elif defined(OMPI_HAVE_MPI_EXT_PCOLLREQ)
#define LIBRARY_HAS_PERSISTENT 1
#define LIBRARY_PERSISTENT(Name) MPIX_##Name##_init
#else
#define LIBRARY_HAS_PERSISTENT 0
#endif
#define LIBRARY_PERSISTENT_NAME(Name) LIBRARY_SPELLED(LIBRARY_PERSISTENT(Name))
#define LIBRARY_SPELLED(function) LIBRARY_SPELLED_(function)
#define LIBRARY_SPELLED_(function) #function
