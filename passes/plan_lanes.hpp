// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Which parfors the host backend runs in vector lanes, and why (ir/lanes.hpp holds the rule; the CPU backend
// applies it when it emits each parfor's innermost loop). The pass changes nothing in the IR: it puts the
// decision, with its reason, in the diagnostics, where a user looks for why a loop did or did not vectorize.
#pragma once

#include "passes/pass.hpp"

namespace kiln::passes {

/// Notes, for every parfor whose body holds a loop carrying a float value in order, whether its iterations
/// run in lanes, and if not, what in the body prevents it.
ir::Function plan_lanes(const ir::Function& f, PassContext& ctx);

}  // namespace kiln::passes
