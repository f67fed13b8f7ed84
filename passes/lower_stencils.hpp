// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Stencils to parfors: one parfor whose interior elements use plain loads (no bounds checks, no border
// logic, so the vectorizer sees straight-line code) and whose border elements remap indices per the border mode.
#pragma once

#include "passes/pass.hpp"

namespace kiln::passes {

/// Replaces every StencilStmt by (allocation,) a size check where the border mode needs one and ONE parfor
/// over the whole space (a single fork and join of the team), whose body tests the position per axis:
/// along dimension d the space splits into [0, a_d) [a_d, b_d) [b_d, n_d) with a_d = min(-lo_d, n_d) and
/// b_d = max(a_d, n_d - hi_d), so arrays smaller than the neighbourhood get an empty interior.
///   if (a_0 <= i_0 < b_0) { if (a_1 <= i_1 < b_1) { ... plain loads ... } else <remapped along axes >= 1> }
///   else <remapped along every axis>
/// For host targets partition_loops cuts the innermost loop at these bounds (passes/partition_loops.hpp),
/// so each row runs its low band, a vectorized interior of plain loads and its high band in turn. A skip border into an
/// existing target computes nothing on the border: a parfor over the interior alone.
ir::Function lower_stencils(const ir::Function& f, PassContext& ctx);

}  // namespace kiln::passes
