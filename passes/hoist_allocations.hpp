// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
#include "passes/pass.hpp"

namespace kiln::passes {

/// An allocation directly in the body of a sequential For loop whose extents are loop-invariant (and
/// read no array) moves before the loop, so every iteration reuses one buffer instead of allocating a new
/// one (allocations live until the kernel returns). An array cannot outlive the iteration that declares
/// it, and an element read before this iteration writes it was undefined anyway, so sharing is safe.
/// Extents not known to be non-negative are guarded by the loop being non-empty, so a loop that runs zero
/// times still allocates nothing and fails on nothing. Innermost loops first.
ir::Function hoist_allocations(const ir::Function& f, PassContext& ctx);

}  // namespace kiln::passes
