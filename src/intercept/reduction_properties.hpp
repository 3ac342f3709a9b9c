#pragma once
// What a reduction's decision depends on besides its size: whether the operation is commutative,
// and whether another combining order could change the result's rounding (floating-point data
// under an arithmetic operation). Every rank passes the same type and op, so every rank agrees.
#include <mpi.h>

#include <string>

namespace collshim {

enum ReductionProperty : int {
  non_commutative = 1,
  rounding_depends_on_order = 2,
};

// A combination of ReductionProperty bits.
int reduction_properties(MPI_Datatype type, MPI_Op op);

// A predefined operation (MPI_SUM, ...), not one made by MPI_Op_create: some libraries decide by it.
bool predefined_operation(MPI_Op op);

// ", non-commutative operation" and the like, for the debug log; "" for none.
std::string properties_text(int properties);

}  // namespace collshim
