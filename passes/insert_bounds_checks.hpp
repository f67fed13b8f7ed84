// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
#include <string>

#include "passes/pass.hpp"

namespace kiln::passes {

/// Bounds-checked mode (kiln::Options::boundscheck): before every element read or write the kernel's own
/// code makes, a check `0 <= index < dim(array, axis)` per axis that stops the kernel with
/// kIndexOutOfRange, "index {} out of range for axis A of array 'x' with extent {}" (kiln::IndexError).
/// Runs on the traced IR, so every backend and the interpreter see the same checks.
/// - Reads under `&&`, `||` or a select arm are checked only when they would be evaluated: the check's
///   condition carries the guard.
/// - A term is left out when it holds by construction: a loop index starting at a constant >= 0 is never
///   negative, and one running to dim(x, d) indexes x along d (x not rebound in the loop).
/// - A check at the top level of a loop body (no branch in between) whose index is a loop index plus a
///   constant, or does not change in the loop, is made once before the loop for its whole range, guarded by
///   the loop being non-empty: bodies stay free of checks and vectorize. Moved out of an inner loop, a check
///   of an outer loop's index moves on out of that one too (guarded by both loops being non-empty, when the
///   inner loop's extent does not depend on the outer index), so nested pranges still collapse. A failing
///   kernel then stops before the loop runs rather than part-way through it.
/// - Array-level operations (maps, reductions, stencils) index their own spaces, which the frontend checks
///   against the operands' shapes; only their fixed indices (a view such as `x(i, kiln::all)`) are checked,
///   once before the operation when its space is not empty.
ir::Function insert_bounds_checks(const ir::Function& f, PassContext& ctx);

/// The names of every array `f` mentions (those the checks of `f` would write into their messages, and those
/// a host function's run-time errors name), in a fixed order of the IR's structure. The cache key of a
/// bounds-checked kernel, and of a target whose stored code names arrays, includes it: the key's canonical IR
/// leaves names out, and two kernels that differ only in names must not share code whose messages name the
/// other's arrays.
std::string check_message_names(const ir::Function& f);

}  // namespace kiln::passes
