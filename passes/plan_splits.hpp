// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Which parfors the host backend cuts into pieces of equal work rather than equal length, and why (ir/uneven_work.hpp
// holds the rule; the CPU backend applies it when it hands each parfor to the runtime). The pass changes nothing
// in the IR: it puts the decision, with the loop whose trip count makes the iterations unequal, in the diagnostics.
#pragma once

#include "passes/pass.hpp"

namespace kiln::passes {

/// Notes, for every outermost parfor whose iterations do unequal work, how the CPU backend splits it.
ir::Function plan_splits(const ir::Function& f, PassContext& ctx);

}  // namespace kiln::passes
