// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
#include "passes/pass.hpp"

namespace kiln::passes {

/// An allocated array that is not the result, is used by exactly one parfor after its allocation, and
/// is written and read there only at one subscript tuple, written first (by a statement directly in the
/// parfor's body) and never inside a nested parfor, holds one value per iteration: it becomes a scalar
/// `let` in the body and the allocation disappears. Dims of it become its allocated extents.
ir::Function eliminate_temporaries(const ir::Function& f, PassContext& ctx);

}  // namespace kiln::passes
