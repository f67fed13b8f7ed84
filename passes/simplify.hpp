// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
#include "passes/pass.hpp"

namespace kiln::passes {

/// Constant folding (with kiln's arithmetic, ir/semantics.hpp) and safe algebraic identities, copy
/// propagation of variables never reassigned, common-subexpression elimination between lets of one block,
/// and dead-code elimination (unread lets and assignments, unused allocations, empty loops), to a fixpoint.
ir::Function simplify(const ir::Function& f, PassContext& ctx);

}  // namespace kiln::passes
