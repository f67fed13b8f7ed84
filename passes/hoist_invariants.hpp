// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
#include "passes/pass.hpp"

namespace kiln::passes {

/// Loop-invariant code motion out of For and Parfor bodies, innermost loops first (so a value can rise
/// through several levels). A `let` directly in the body moves before the loop when its variable is never
/// reassigned in the loop and its initializer reads nothing the loop declares or assigns, and loads only
/// arrays the loop cannot write (no store to the array or to a parameter that may be the same array);
/// a hoisted load is guarded by the loop being non-empty and is not moved past a run-time check. Then
/// every maximal invariant pure subexpression of two or more nodes becomes a `let` before the loop, except
/// inside argmin/argmax updates, whose shape the verifier and backends match.
ir::Function hoist_invariants(const ir::Function& f, PassContext& ctx);

}  // namespace kiln::passes
