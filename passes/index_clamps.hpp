// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Clamps of a loop index, as users write the reads of a stencil that stay inside the array:
// `in(min(max(k - 1, 0), n - 1))`. A clamp is a test of the index in disguise: over the range of k where
// no clamp is active each one equals its plain term `k + c`, an affine subscript the vectorizer turns into
// contiguous loads, where the clamped one needs a gather per read. partition_loops cuts the loop there.
#pragma once

#include <functional>
#include <vector>

#include "ir/stmt.hpp"

namespace kiln::passes {

/// The clamps of one index in a loop body, and the range of the index where all of them are inactive.
struct IndexClamps {
  /// The body with every clamp of the index replaced by its plain term; null when the body has no clamp.
  ir::Stmt plain;
  /// Every clamp equals its plain term, computed without overflow, when `index >= x` for each x of `lower`
  /// and `index < y` for each y of `upper`. The bounds may describe less than the whole such range (they
  /// saturate where the exact bound would overflow), never more. Each is invariant in the loop; constant
  /// bounds are folded into one.
  std::vector<ir::Expr> lower, upper;
};

/// Finds the clamps of `index` in `body`: `min` and `max` nested in any order and with their operands in
/// either order, with bounds for which `invariant` holds, around `index`, `index + d`, `d + index` or
/// `index - d` with d invariant (a constant or not), all of the index's integer type, wherever they occur
/// (in subscripts, inside other arithmetic, in nested loops). A clamp of anything else (`2 * index`, a
/// load, another index) is left as it is; the clamps of the index inside it are still found.
IndexClamps find_index_clamps(const ir::Stmt& body, const ir::Var& index, const std::function<bool(const ir::Expr&)>& invariant);

}  // namespace kiln::passes
