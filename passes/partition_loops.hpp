// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Loop partitioning (Halide's src/PartitionLoops.h is the model): a parfor whose body tests its innermost
// index against bounds that do not change in the loop, `if (a <= j && j < b) A else B` as lower_stencils
// writes a stencil, becomes loops over [begin, a) running B, [a, b) running A and [b, end) running B; a test
// of values fixed for the whole loop (another axis's band test) is decided once, around the loops. The
// backend then sees plain loops whose bodies test nothing: the interior of a stencil vectorizes as a loop of
// plain loads. A clamp of the index, `min(max(j + c, lo), hi)`, is cut at like a test: the range where it
// is inactive runs `j + c`, the rims keep the clamp (sequential loops inside an outer dimension).
#pragma once

#include "passes/pass.hpp"

namespace kiln::passes {

/// Partitions the innermost dimension of every parfor without reductions whose body branches on that index
/// or on values invariant in it, or clamps that index (min/max with invariant bounds). A parfor of rank
/// r > 1 keeps its outer r - 1 dimensions and its body becomes the sequence of parfors over sub-ranges of
/// the last one (nested parfors run inline in the enclosing one's chunk, each a loop marked parallel); a
/// parfor of rank 1 becomes that sequence itself.
/// Each sub-range is empty or inside the original range, in order, and together they cover it, so the
/// results are those of the original parfor. At most 8 loops per parfor (partition_loops.cpp says why).
ir::Function partition_loops(const ir::Function& f, PassContext& ctx);

}  // namespace kiln::passes
