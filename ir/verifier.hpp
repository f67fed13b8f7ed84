// Structural checks every Function must pass between passes: scoping, mutability and parallel safety.
#pragma once

#include <string>
#include <vector>

#include "ir/stmt.hpp"

namespace kiln::ir {

/// Returns one message per problem found (empty when the function is well formed).
std::vector<std::string> verify(const Function& f);

/// Throws IRError listing every problem and the printed function, prefixed by `context` (e.g. a pass name).
void verify_or_throw(const Function& f, const std::string& context);

/// True when the statement `s` has the shape `var = var op e` (or `e op var` for commutative op) allowed
/// for a reduction `op` on var, with `e` not reading var. Sub is allowed for Add and Div for Mul.
bool is_reduction_update(const AssignStmt& s, ReduceOp op);

}  // namespace kiln::ir
