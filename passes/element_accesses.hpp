// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The element accesses of an expression, each with the condition under which it is evaluated: what
// insert_bounds_checks guards with a check.
#pragma once

#include <vector>

#include "ir/expr.hpp"

namespace kiln::passes::bounds {

/// An element access found in an expression: `array[indices]`, evaluated only when `guard` holds (null:
/// always).
struct Access {
  ir::Var array;
  std::vector<ir::Expr> indices;
  ir::Expr guard;
};

/// Appends the accesses of `e`, evaluated under `guard`, to `out` in evaluation order (an index's own loads
/// before the load it indexes), each with the condition under which `&&`, `||` and select evaluate it.
void accesses(const ir::Expr& e, const ir::Expr& guard, std::vector<Access>& out);

/// a && b, where a null condition means "always".
ir::Expr both(const ir::Expr& a, const ir::Expr& b);
/// !a.
ir::Expr negate(const ir::Expr& a);

}  // namespace kiln::passes::bounds
