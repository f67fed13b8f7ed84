// Stencils to parfors: an interior parfor with plain loads (no bounds checks, no border logic, so the
// vectorizer sees straight-line code) plus border parfors that apply the border mode by remapping indices.
#pragma once

#include "passes/pass.hpp"

namespace kiln::passes {

/// Replaces every StencilStmt by (allocation,) a size check where the border mode needs one, the interior
/// parfor and the border slabs: a parfor per band of axis 0, and per later axis one parfor running both of
/// its bands. The slabs and the interior partition the index space:
/// along dimension d the space splits into [0, a_d) [a_d, b_d) [b_d, n_d) with a_d = min(-lo_d, n_d) and
/// b_d = max(a_d, n_d - hi_d), so arrays smaller than the neighbourhood get an empty interior and slabs
/// that never overlap. Slab d covers the interior range of dimensions < d, a band of d and all of > d.
ir::Function lower_stencils(const ir::Function& f, PassContext& ctx);

}  // namespace kiln::passes
