// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The statement shapes that update reductions inside a parfor. The verifier, detect_reductions and the
// backends agree on them through these functions.
#pragma once

#include <optional>

#include "ir/stmt.hpp"

namespace kiln::ir {

/// `var = var op e` (or `e op var` for commutative op), e not reading var. Sub counts as Add; Div counts
/// as Mul for floats only (truncating integer division does not regroup).
bool is_reduction_update(const AssignStmt& s, ReduceOp op);

/// The parts of an argmin/argmax update `if cond { var = x; index = k }`.
struct ArgUpdate {
  Expr value;  ///< x
  Expr index;  ///< k
  Expr cond;
};

/// Matches the update of an ArgMin/ArgMax reduction r. The condition is a disjunction (||) of:
///   `x < var` (`x > var` for ArgMax) — required;
///   `isnan(x) && !isnan(var)`        — NaN wins over numbers (NumPy's rule);
///   `index < 0`                      — anything beats "nothing yet" (for floats only together with the NaN
///                                      rule: otherwise a NaN first in a block would stick there).
/// x and k must not read var or index; there is no else branch. The same condition, evaluated with a later
/// block's partial as x and the running result as (var, index), combines partials in order exactly.
std::optional<ArgUpdate> match_arg_update(const IfStmt& s, const Reduction& r);

/// `a[k] = a[k] op e` for the array reduction r (same k; neither e nor k loads from a, though they may read
/// its extents). Sub/Div as above.
bool is_array_update(const StoreStmt& s, const ArrayReduction& r);
/// The same for a write given by its parts (a StoreStmt, or a MapStmt into an existing array).
bool is_array_update(const Var& array, const std::vector<Expr>& index, const Expr& value, const ArrayReduction& r);

}  // namespace kiln::ir
