#pragma once
// What a reduction's decision depends on besides its size: whether the operation is commutative,
// and whether another combining order could change the result's rounding (floating-point data
// under an arithmetic operation). Every rank passes the same type and op, so every rank agrees.
#include <mpi.h>

#include "decide/decision_policy.hpp"

namespace collshim {

// A combination of ReductionProperty bits (decision_policy.hpp).
int reduction_properties(MPI_Datatype type, MPI_Op op);

// A predefined operation (MPI_SUM, ...), not one made by MPI_Op_create: some libraries decide by it.
bool predefined_operation(MPI_Op op);

}  // namespace collshim
