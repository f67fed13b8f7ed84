// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A stencil body as one expression. The body lambda is traced like any kernel code, so it may declare
// variables, accumulate in `kiln::range` loops over offsets and branch with `kiln::if_`; a StencilStmt holds
// a single expression per element, so those statements are evaluated symbolically here: loops with bounds
// known at trace time are unrolled (their offsets become constants, as Ramba unrolls the loop over a general
// stencil's weights), variables are replaced by their current expressions, and branches whose condition is
// not known become selects. Anything else (stores, allocations, loops with traced bounds) is refused.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "ir/stmt.hpp"

namespace kiln::detail {

/// Folds integer and bool constants (kiln's arithmetic, ir/semantics.hpp) and selects on a constant
/// condition; floats are left to the simplify pass.
ir::Expr fold_constants(const ir::Expr& e);

/// The value of `result` after running `body` (statements traced inside the stencil body): one expression.
/// `fail` reports a construct that cannot be expressed (it throws). At most `max_unrolled` loop iterations
/// are unrolled in all.
ir::Expr flatten_stencil_body(const ir::Stmt& body, const ir::Expr& result,
                              const std::function<void(const std::string&)>& fail,
                              std::int64_t max_unrolled = 65536);

}  // namespace kiln::detail
