// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// NumPy broadcasting at trace time: operands of an array operation, their common shape, and run-time
// checks for the extents that must agree but cannot be proven to while tracing.
#pragma once

#include <string>
#include <vector>

#include "frontend/array_info.hpp"

namespace kiln::detail {

/// One operand of an array operation, ready to be read inside the operation's index space.
struct Input {
  const ArrayHandle* array = nullptr;  ///< an array (or view) ...
  std::vector<ir::Expr> extents;
  ir::Expr scalar;                     ///< ... or a scalar value, stable at this point of the trace
  std::string label;                   ///< how the operand is named in messages
};

/// Reads the operand (scalars are copied to a variable first if they read memory or mutable variables).
Input prepare(TraceContext& ctx, const OpArg& arg);

/// The broadcast shape of `inputs`. Emits a CheckStmt (ShapeError) for each pair of operands whose extents
/// must be equal but are not known to be; fails the trace if they are known to differ. `what` names the
/// expression in messages.
std::vector<ir::Expr> broadcast(TraceContext& ctx, const std::vector<Input>& inputs, const std::string& what,
                                const Where& w);

/// Checks that `value` broadcasts to exactly `shape` (an assignment target's), as broadcast() does.
void check_broadcast_to(TraceContext& ctx, const Input& value, const std::vector<ir::Expr>& shape,
                        const std::string& what, const Where& w);

/// The operand's element at `index` of a space of rank index.size() (trailing dimensions aligned; broadcast
/// dimensions read at 0), converted to type t.
ir::Expr read(const Input& in, const std::vector<ir::Expr>& index, DType t);

/// Short enough to nest inside another label.
std::string nested_label(const std::string& label);

}  // namespace kiln::detail
