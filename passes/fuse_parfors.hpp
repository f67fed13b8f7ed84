// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
#include "passes/pass.hpp"

namespace kiln::passes {

/// Fuses each parfor with the next one in its block when their index spaces are structurally equal and
/// every element the second touches of an array the first writes (or the first reads of an array the
/// second writes) is the same element in the same iteration: one subscript tuple, equal up to renaming
/// the indices, that addresses one element per iteration. Statements between the two move above the
/// first or below the second when that changes nothing they depend on. Refuses, with the reason as a
/// note, on different spaces, a shifted or otherwise different subscript (a cross-iteration dependence),
/// a use of the first parfor's reduction result (`a / max(a)`), an array reduction of either, and a
/// statement between them that depends on the first and is needed by the second. Fills ctx.parfors.
ir::Function fuse_parfors(const ir::Function& f, PassContext& ctx);

}  // namespace kiln::passes
