#pragma once
// The arguments of each collective's int form, as a struct whose members are the row's parameters
// (entry_point_table.hpp): what a call shape (call_shapes.hpp's <Name>Shape) is built from, whichever
// form the call came in (blocking, large-count, nonblocking, persistent).
#include <mpi.h>

#include <optional>

#include "algorithms/engine/collective.hpp"
#include "intercept/entry_point_table.hpp"

namespace collshim {

template <Collective collective>
struct CallArguments;

#define COLLSHIM_CALL_ARGUMENTS(Name, lower, UPPER, parameters, ...) \
  template <>                                                        \
  struct CallArguments<Collective::lower> {                          \
    COLLSHIM_MEMBERS(parameters)                                     \
  };
COLLSHIM_COLLECTIVES(COLLSHIM_CALL_ARGUMENTS)
#undef COLLSHIM_CALL_ARGUMENTS

// A call shape `Shape` built from the int form's arguments, in the row's order.
template <typename Shape>
struct IntForm : Shape {
  template <typename... Args>
  explicit IntForm(Args... args) : Shape(CallArguments<Shape::collective>{args...}) {}
  explicit IntForm(const CallArguments<Shape::collective>& arguments) : Shape(arguments) {}

  // What a started call keeps of its arguments and reads them with (collective_operation.hpp): the
  // int form's arguments, here the call's own, and this shape. (LargeCountShape has its own.)
  using IntShape = IntForm;
  template <typename... Args>
  std::optional<CallArguments<Shape::collective>> int_arguments(Args... args) const {
    return CallArguments<Shape::collective>{args...};
  }
};

}  // namespace collshim
