// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
#include "passes/pass.hpp"

namespace kiln::passes {

/// Finds the scalars declared outside a parfor and written inside it. Writes of the forms `s = s + e`,
/// `s = s - e`, `s = s * e`, `s = s / e`, `s = min(s, e)`, `s = max(s, e)` (e not reading s) become the
/// parfor's reductions, with the identity of their operator; any other write, mixed operators, or a read of
/// s elsewhere in the loop is a TraceError naming s, the loop and what to write instead. Also:
/// `if (x < v) { v = x; k = i }` pairs become argmin (argmax with >) reductions, and arrays updated as
/// `a[k] = a[k] op e` at indices that may repeat across iterations become array reductions.
ir::Function detect_reductions(const ir::Function& f, PassContext& ctx);

}  // namespace kiln::passes
