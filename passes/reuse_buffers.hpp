// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
#include "passes/pass.hpp"

namespace kiln::passes {

/// An allocation takes over the buffer of an earlier allocation of the same block with the same type and
/// structurally equal, stable extents when that array is dead: either no statement after the new
/// allocation uses it, or the only one that does is the parfor that first writes the new array and it
/// reads the old one only at the subscripts where it writes the new one, before writing (an in-place
/// update, `out = e / s` into e's buffer). The new array's variable is replaced by the old one.
ir::Function reuse_buffers(const ir::Function& f, PassContext& ctx);

}  // namespace kiln::passes
