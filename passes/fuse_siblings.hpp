// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Sibling launches on device targets. fuse_parfors joins parfors over one index space; two independent
// parfors over spaces that differ by a row or a column stay apart: FDTD's `ey[1:, :] -= c * (hz[1:, :] -
// hz[:-1, :])` runs over (nx - 1) x ny and `ex[:, 1:] -= c * (hz[:, 1:] - hz[:, :-1])` over nx x (ny - 1).
// On a GPU each is a launch, and each reads all of hz from memory: on an H100, fdtd-2d's two updates took
// 323 and 306 us a step, at the DRAM roofline, for five array passes of traffic where one launch needs five.
//
// Two such parfors run as one launch over the larger space, each body under a test of its own bounds: both
// bodies then read hz where it is, once per line of cache, and one launch goes. The rule is the waste: the
// spaces must have equal starts and ends that are provably within a few elements of each other (the shape
// checks between them say how the extents relate), so the larger space holds at most a few rows or columns
// that one of the bodies skips. Host targets keep the loops apart: each vectorizes on its own, and a test per
// element would cost lanes there.
#pragma once

#include "passes/pass.hpp"

namespace kiln::passes {

/// Within each block (loops and branches included, parfor bodies not: they run inside one launch already),
/// a parfor C whose nearest earlier parfor P has the same rank, neither with reductions, loops or nested
/// parfors, neither touching what the other writes (loops::conflict), equal begins and ends that differ by at
/// most kMaxSiblingSlack in every dimension (structurally, `max(n - k, 0)` within k of n for an extent n, and
/// through the equalities that earlier checks and allocations establish: ExtentFacts), the statements between
/// them commuting with P (they move above it), becomes one parfor over the maximum of the ends whose body runs
/// each body under `index < its end` for the dimensions where its end is not the maximum. Device targets only.
inline constexpr std::int64_t kMaxSiblingSlack = 2;
ir::Function fuse_siblings(const ir::Function& f, PassContext& ctx);

}  // namespace kiln::passes
