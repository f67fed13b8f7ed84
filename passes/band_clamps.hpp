// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Clamped indices on the device. A stencil written with prange clamps its reads into the array
// (`in(min(max(k - 1, 0), n - 1), ...)`); such a read is a plain `k - 1` wherever the clamp is inactive
// (passes/index_clamps.hpp), which on the host partition_loops cuts the loops at. On the device a loop per
// band would be a launch each, so the body tests the position instead, as lower_stencils writes a
// kiln::stencil: `if (<no clamp active>) <the body with plain index terms> else <the body as written>`.
// The CUDA backend then treats both forms alike: the interior arm's reads are the index plus constant
// offsets that it tiles (codegen/cuda/emit_stencil.cpp), the other arm runs for the few border elements.
#pragma once

#include "passes/pass.hpp"

namespace kiln::passes {

/// Rewrites every parfor outside parfors (each one a kernel launch) without reductions whose body clamps
/// one or more of its indices with bounds fixed in the parfor, as described above. The test is the
/// conjunction, over the clamped indices, of the ranges where every clamp of that index equals its plain
/// term (find_index_clamps), so both arms compute the same values wherever the interior arm runs.
ir::Function band_clamps(const ir::Function& f, PassContext& ctx);

}  // namespace kiln::passes
