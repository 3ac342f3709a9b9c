#include "intercept/reduction_properties.hpp"

#include <algorithm>
#include <array>
#include <vector>

namespace collshim {
namespace {

// Operations whose result is exact whatever the order: comparisons, bitwise and logical ones.
bool exact_operation(MPI_Op op) {
  const std::array exact{MPI_MIN,  MPI_MAX,  MPI_MINLOC, MPI_MAXLOC, MPI_BAND,    MPI_BOR,
                         MPI_BXOR, MPI_LAND, MPI_LOR,    MPI_LXOR,   MPI_REPLACE, MPI_NO_OP};
  return std::find(exact.begin(), exact.end(), op) != exact.end();
}

bool floating_point_named(MPI_Datatype type) {
  const std::array floating{MPI_FLOAT,
                            MPI_DOUBLE,
                            MPI_LONG_DOUBLE,
                            MPI_C_FLOAT_COMPLEX,
                            MPI_C_DOUBLE_COMPLEX,
                            MPI_C_LONG_DOUBLE_COMPLEX,
                            MPI_REAL,
                            MPI_DOUBLE_PRECISION,
                            MPI_COMPLEX,
                            MPI_DOUBLE_COMPLEX,
                            MPI_REAL4,
                            MPI_REAL8,
                            MPI_COMPLEX8,
                            MPI_COMPLEX16,
                            MPI_FLOAT_INT,
                            MPI_DOUBLE_INT,
                            MPI_LONG_DOUBLE_INT};
  if (type == MPI_DATATYPE_NULL) return false;
  if (std::find(floating.begin(), floating.end(), type) != floating.end()) return true;
#ifndef COLLSHIM_SMPI  // SMPI's header names the C++ complex types but its library does not define them
  return type == MPI_CXX_FLOAT_COMPLEX || type == MPI_CXX_DOUBLE_COMPLEX || type == MPI_CXX_LONG_DOUBLE_COMPLEX;
#else
  return false;
#endif
}

// Whether a (possibly derived) type contains floating-point elements, by decoding its constructors.
bool contains_floating_point(MPI_Datatype type, int depth = 0) {
  int integers = 0, addresses = 0, types = 0, combiner = 0;
  if (PMPI_Type_get_envelope(type, &integers, &addresses, &types, &combiner) != MPI_SUCCESS) return true;
  if (combiner == MPI_COMBINER_NAMED) return floating_point_named(type);
  if (depth > 32) return true;  // unreasonably deep: assume the worst
  std::vector<int> int_args(static_cast<std::size_t>(integers));
  std::vector<MPI_Aint> address_args(static_cast<std::size_t>(addresses));
  std::vector<MPI_Datatype> type_args(static_cast<std::size_t>(types));
  if (PMPI_Type_get_contents(type, integers, addresses, types, int_args.data(), address_args.data(),
                             type_args.data()) != MPI_SUCCESS)
    return true;
  bool floating = false;
  for (MPI_Datatype& inner : type_args) {
    floating = floating || contains_floating_point(inner, depth + 1);
    int inner_integers = 0, inner_addresses = 0, inner_types = 0, inner_combiner = 0;
    PMPI_Type_get_envelope(inner, &inner_integers, &inner_addresses, &inner_types, &inner_combiner);
    if (inner_combiner != MPI_COMBINER_NAMED) PMPI_Type_free(&inner);  // get_contents made a handle
  }
  return floating;
}

}  // namespace

int reduction_properties(MPI_Datatype type, MPI_Op op) {
  int properties = 0;
  int commutative = 1;
  if (PMPI_Op_commutative(op, &commutative) == MPI_SUCCESS && !commutative) properties |= non_commutative;
  if (!exact_operation(op) && contains_floating_point(type)) properties |= rounding_depends_on_order;
  return properties;
}

bool predefined_operation(MPI_Op op) { return exact_operation(op) || op == MPI_SUM || op == MPI_PROD; }

}  // namespace collshim
