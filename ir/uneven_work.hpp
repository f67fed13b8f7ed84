// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Parfors whose iterations do unequal work: a loop in the body whose trip count changes with the parfor's
// outermost index (a triangular nest: row i of a lower triangle holds i + 1 dot products). Cut into pieces of
// equal length, the last piece of such a parfor does most of the work while the other threads wait (syrk's
// 520 rows on 16 threads: the last piece about twice the mean). The CPU backend then cuts the range into
// pieces of equal work instead, from the body's work at the first and at the last index (kiln_rt_parfor_split);
// passes/plan_splits.cpp puts the decision in the diagnostics. Iterations of a parfor may run in any order,
// so the cut changes no result; a parfor with reductions keeps equal pieces, since its pieces (or blocks) fix
// the order of its sums.
#pragma once

#include <string>

#include "ir/stmt.hpp"

namespace kiln::ir {

/// The first loop (sequential, or a nested parfor) in p's body whose bounds use p's outermost index and
/// nothing the body declares (so the caller can evaluate them at any index), printed as `for j in 0 .. (i + 1)`;
/// empty when there is none.
std::string uneven_work(const ParforStmt& p);

/// True if the CPU backend cuts p into pieces of equal work: uneven_work(p) is not empty and p has no
/// reductions (scalar or array).
bool splits_by_work(const ParforStmt& p);

}  // namespace kiln::ir
