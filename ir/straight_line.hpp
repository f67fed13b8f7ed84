// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A body's statements in the order they run once: what passes that look for one statement among a body's
// (a branch to decide, a loop to cut) walk.
#pragma once

#include <vector>

#include "ir/stmt.hpp"

namespace kiln::ir {

/// Appends the statements of `s` that run once, in order, to `out`: Blocks opened, anything else (a loop, a
/// condition) as one statement.
void straight_line(const Stmt& s, std::vector<Stmt>& out);

}  // namespace kiln::ir
