// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Structural checks every Function must pass between passes: scoping, mutability and parallel safety.
#pragma once

#include <string>
#include <vector>

#include "ir/reductions.hpp"
#include "ir/stmt.hpp"

namespace kiln::ir {

/// Returns one message per problem found (empty when the function is well formed).
std::vector<std::string> verify(const Function& f);

/// Throws IRError listing every problem and the printed function, prefixed by `context` (e.g. a pass name).
void verify_or_throw(const Function& f, const std::string& context);

}  // namespace kiln::ir
