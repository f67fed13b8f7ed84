// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Run-time checks moved up past statements that nothing outside the kernel can observe: part of
// array_analysis, so that the facts of a check hold for the statements it moved past.
#pragma once

#include <vector>

#include "ir/stmt.hpp"
#include "passes/pass.hpp"

namespace kiln::passes {

/// The statements of one list with each check moved up as far as it may run before the statement above it
/// (checks keep their order): that statement defines and assigns nothing the check reads, writes no array
/// the caller can see nor one whose elements the check reads (a bounds check's data-dependent index),
/// checks nothing itself, and allocates only extents that cannot be negative. (Its loads stay in bounds:
/// the frontend checks shapes before it reads arrays of those shapes.) Each move is noted in `ctx`.
std::vector<ir::Stmt> checks_early(const std::vector<ir::Stmt>& in, PassContext& ctx);

}  // namespace kiln::passes
