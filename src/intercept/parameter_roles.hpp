#pragma once
// The parameter roles of entry_point_table.hpp's rows, and the preprocessor loop that turns a row's
// parameters into each form's parameter list, argument list, struct members or conversions.
//
// A row's parameters are a parenthesised list of (role, name) pairs. The role decides the C type of
// the parameter in each form, and what the large-count and Fortran conversions do with it:
//
//   role              int form      _c form            Fortran (Open MPI)  large count (_c -> int)
//   send_or_in_place  const void*   const void*        const void*         as it is   (Fortran: IN_PLACE, BOTTOM)
//   send              const void*   const void*        const void*         as it is   (Fortran: BOTTOM)
//   recv              void*         void*              void*               as it is   (Fortran: BOTTOM)
//   recv_or_in_place  void*         void*              void*               as it is   (Fortran: IN_PLACE, BOTTOM)
//   uniform_count     int           MPI_Count          const MPI_Fint*     beyond int: one element of a contiguous
//                                                                          type of that many of the next `type`
//   count             int           MPI_Count          const MPI_Fint*     narrowed (beyond int: the library's _c)
//   counts            const int*    const MPI_Count*   const MPI_Fint*     copied to ints when every value fits
//   displs            const int*    const MPI_Aint*    const MPI_Fint*     copied to ints when every value fits
//   type              MPI_Datatype  MPI_Datatype       const MPI_Fint*     as it is, or the contiguous type above
//   op                MPI_Op        MPI_Op             const MPI_Fint*     as it is
//   root              int           int                const MPI_Fint*     as it is; makes the arrays root-only
//   comm              MPI_Comm      MPI_Comm           const MPI_Fint*     as it is; sizes the arrays
//
// A uniform count is one every rank converts alike (Allgather's, Alltoall's): a rank running the
// shim's algorithm with a contiguous type then meets only ranks doing the same. A plain count may be
// beyond int on one rank only (Gatherv's sendcount: the root's counts say so), so it is not converted.

// COLLSHIM_EACH(F, SEP, form, a, b, ...): F(form, a) SEP() F(form, b) SEP() ..., for up to 12 items.
#define COLLSHIM_EACH(F, SEP, form, ...) COLLSHIM_EACH_N(COLLSHIM_COUNT_ITEMS(__VA_ARGS__))(F, SEP, form, __VA_ARGS__)
#define COLLSHIM_COUNT_ITEMS(...) COLLSHIM_COUNT_ITEMS_(__VA_ARGS__, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define COLLSHIM_COUNT_ITEMS_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, n, ...) n
#define COLLSHIM_EACH_N(n) COLLSHIM_EACH_N_(n)
#define COLLSHIM_EACH_N_(n) COLLSHIM_EACH_##n
#define COLLSHIM_EACH_1(F, S, d, x) F(d, x)
#define COLLSHIM_EACH_2(F, S, d, x, ...) F(d, x) S() COLLSHIM_EACH_1(F, S, d, __VA_ARGS__)
#define COLLSHIM_EACH_3(F, S, d, x, ...) F(d, x) S() COLLSHIM_EACH_2(F, S, d, __VA_ARGS__)
#define COLLSHIM_EACH_4(F, S, d, x, ...) F(d, x) S() COLLSHIM_EACH_3(F, S, d, __VA_ARGS__)
#define COLLSHIM_EACH_5(F, S, d, x, ...) F(d, x) S() COLLSHIM_EACH_4(F, S, d, __VA_ARGS__)
#define COLLSHIM_EACH_6(F, S, d, x, ...) F(d, x) S() COLLSHIM_EACH_5(F, S, d, __VA_ARGS__)
#define COLLSHIM_EACH_7(F, S, d, x, ...) F(d, x) S() COLLSHIM_EACH_6(F, S, d, __VA_ARGS__)
#define COLLSHIM_EACH_8(F, S, d, x, ...) F(d, x) S() COLLSHIM_EACH_7(F, S, d, __VA_ARGS__)
#define COLLSHIM_EACH_9(F, S, d, x, ...) F(d, x) S() COLLSHIM_EACH_8(F, S, d, __VA_ARGS__)
#define COLLSHIM_EACH_10(F, S, d, x, ...) F(d, x) S() COLLSHIM_EACH_9(F, S, d, __VA_ARGS__)
#define COLLSHIM_EACH_11(F, S, d, x, ...) F(d, x) S() COLLSHIM_EACH_10(F, S, d, __VA_ARGS__)
#define COLLSHIM_EACH_12(F, S, d, x, ...) F(d, x) S() COLLSHIM_EACH_11(F, S, d, __VA_ARGS__)
#define COLLSHIM_COMMA() ,
#define COLLSHIM_SEMICOLON() ;
#define COLLSHIM_NOTHING()
#define COLLSHIM_SPLAT(...) __VA_ARGS__

// Each (role, name) of a row's `parameters`, in one form: the parameter list (`form` int, c or
// fortran), the argument list, and the parameters as struct members (int form).
#define COLLSHIM_PARAMETERS(form, parameters) \
  COLLSHIM_EACH(COLLSHIM_PARAMETER, COLLSHIM_COMMA, form, COLLSHIM_SPLAT parameters)
#define COLLSHIM_ARGUMENT_NAMES(parameters) \
  COLLSHIM_EACH(COLLSHIM_ARGUMENT, COLLSHIM_COMMA, -, COLLSHIM_SPLAT parameters)
#define COLLSHIM_MEMBERS(parameters) \
  COLLSHIM_EACH(COLLSHIM_PARAMETER, COLLSHIM_SEMICOLON, int, COLLSHIM_SPLAT parameters);

#define COLLSHIM_PARAMETER(form, parameter) COLLSHIM_PARAMETER_##form parameter
#define COLLSHIM_PARAMETER_int(role, name) COLLSHIM_INT_TYPE_##role name
#define COLLSHIM_PARAMETER_c(role, name) COLLSHIM_C_TYPE_##role name
#define COLLSHIM_PARAMETER_fortran(role, name) COLLSHIM_FORTRAN_TYPE_##role name
#define COLLSHIM_ARGUMENT(form, parameter) COLLSHIM_ARGUMENT_ parameter
#define COLLSHIM_ARGUMENT_(role, name) name
// The role as a value of its tag type (collshim::roles): what overloads on roles dispatch on.
#define COLLSHIM_ROLE(parameter) COLLSHIM_ROLE_ parameter
#define COLLSHIM_ROLE_(role, name) \
  ::collshim::roles::role {}

#define COLLSHIM_INT_TYPE_send_or_in_place const void*
#define COLLSHIM_INT_TYPE_send const void*
#define COLLSHIM_INT_TYPE_recv void*
#define COLLSHIM_INT_TYPE_recv_or_in_place void*
#define COLLSHIM_INT_TYPE_uniform_count int
#define COLLSHIM_INT_TYPE_count int
#define COLLSHIM_INT_TYPE_counts const int*
#define COLLSHIM_INT_TYPE_displs const int*
#define COLLSHIM_INT_TYPE_type MPI_Datatype
#define COLLSHIM_INT_TYPE_op MPI_Op
#define COLLSHIM_INT_TYPE_root int
#define COLLSHIM_INT_TYPE_comm MPI_Comm

#define COLLSHIM_C_TYPE_send_or_in_place const void*
#define COLLSHIM_C_TYPE_send const void*
#define COLLSHIM_C_TYPE_recv void*
#define COLLSHIM_C_TYPE_recv_or_in_place void*
#define COLLSHIM_C_TYPE_uniform_count MPI_Count
#define COLLSHIM_C_TYPE_count MPI_Count
#define COLLSHIM_C_TYPE_counts const MPI_Count*
#define COLLSHIM_C_TYPE_displs const MPI_Aint*
#define COLLSHIM_C_TYPE_type MPI_Datatype
#define COLLSHIM_C_TYPE_op MPI_Op
#define COLLSHIM_C_TYPE_root int
#define COLLSHIM_C_TYPE_comm MPI_Comm

#define COLLSHIM_FORTRAN_TYPE_send_or_in_place const void*
#define COLLSHIM_FORTRAN_TYPE_send const void*
#define COLLSHIM_FORTRAN_TYPE_recv void*
#define COLLSHIM_FORTRAN_TYPE_recv_or_in_place void*
#define COLLSHIM_FORTRAN_TYPE_uniform_count const MPI_Fint*
#define COLLSHIM_FORTRAN_TYPE_count const MPI_Fint*
#define COLLSHIM_FORTRAN_TYPE_counts const MPI_Fint*
#define COLLSHIM_FORTRAN_TYPE_displs const MPI_Fint*
#define COLLSHIM_FORTRAN_TYPE_type const MPI_Fint*
#define COLLSHIM_FORTRAN_TYPE_op const MPI_Fint*
#define COLLSHIM_FORTRAN_TYPE_root const MPI_Fint*
#define COLLSHIM_FORTRAN_TYPE_comm const MPI_Fint*

namespace collshim::roles {
// One tag type per role, for code that treats a parameter by its role (large_count.hpp).
struct send_or_in_place {};
struct send {};
struct recv {};
struct recv_or_in_place {};
struct uniform_count {};
struct count {};
struct counts {};
struct displs {};
struct type {};
struct op {};
struct root {};
struct comm {};
}  // namespace collshim::roles
