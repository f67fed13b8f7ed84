// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
#include "passes/pass.hpp"

namespace kiln::passes {

/// A parfor whose body is exactly one parfor, whose bounds read neither the outer indices nor any array,
/// becomes one parfor over the product space (outer dimensions first, so the iteration order is the
/// same), with the reductions of both, up to kMaxRank dimensions. Innermost nests first, so a 3-deep
/// nest becomes one 3-d parfor.
ir::Function collapse_parfors(const ir::Function& f, PassContext& ctx);

}  // namespace kiln::passes
