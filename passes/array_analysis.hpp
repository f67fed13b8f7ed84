// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
#include "passes/pass.hpp"

namespace kiln::passes {

/// Equivalence classes of array extents. Walking the kernel in execution order, it learns which i64
/// extents are equal, also up to a constant offset (`len(a[1:-1]) == dim(a, 0) - 2`):
/// - an array allocated (or made by an array operation) with shape s has dim(array, d) == s[d], and s[d] >= 0
///   from then on (the allocation would have failed otherwise);
/// - after a run-time check `x == y && ...` passed, x == y (and after `0 < x`, x >= 1);
/// - a variable bound once by `let` equals its initializer; `max(x, c)` is x once x >= c is known.
/// Facts learned inside a loop or branch hold only there. Checks it can prove are removed, and partly
/// proven ones keep only what is left to check (ShapeError/ValueError at run time as before). Every extent
/// (parfor and loop bounds, allocation and array-operation shapes, every dim(a, d)) is rewritten to the
/// simplest member of its class that is in scope, so equal index spaces become syntactically equal for
/// fusion. Mutable variables and array elements are never reasoned about.
ir::Function array_analysis(const ir::Function& f, PassContext& ctx);

}  // namespace kiln::passes
