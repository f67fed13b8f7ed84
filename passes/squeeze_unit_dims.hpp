// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Unit dimensions of parfor spaces. A keepdims reduction makes (n, 1) spaces that are really the (n) space
// of the loops around them; fusion compares spaces, so it squeezes them first.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "ir/stmt.hpp"

namespace kiln::passes {

/// What squeeze_unit_dims did: the parfors it rebuilt and the indices each lost ("j, k").
struct SqueezedParfors {
  std::unordered_map<const ir::StmtNode*, std::string> dropped;
  std::vector<ir::Stmt> alive;  ///< keeps the rebuilt parfors alive, so that no address in `dropped` is reused
};

/// `f` with the dimensions `0 .. 1` of each n-d parfor dropped, their index replaced by 0 (one dimension
/// stays when all are unit).
ir::Function squeeze_unit_dims(const ir::Function& f, SqueezedParfors& out);

}  // namespace kiln::passes
