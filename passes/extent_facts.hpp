// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Equal extents known at a point of the program, for the stencil passes: array_analysis makes equal extents
// syntactically equal where it can, but an equality it could not prove stays a run-time check, and the
// extents of an allocation equal its shape. Both are facts once the statement has run.
#pragma once

#include <vector>

#include "ir/stmt.hpp"

namespace kiln::passes {

/// Union-find over i64 expressions that never change value (constants, scalar parameters, extents of
/// arrays other than bindings).
class ExtentFacts {
 public:
  /// What `s` establishes for the statements after it: the equalities of a check's conjuncts, the extents
  /// of an allocation (or of an allocating stencil's target).
  void learn(const ir::Stmt& s);
  /// True if a and b are structurally equal or known equal.
  bool same(const ir::Expr& a, const ir::Expr& b);

 private:
  std::vector<ir::Expr> exprs_;
  std::vector<size_t> parent_;
  size_t node(const ir::Expr& e);
  size_t root(size_t x);
  void unite(const ir::Expr& a, const ir::Expr& b);
  void learn_condition(const ir::Expr& c);
};

}  // namespace kiln::passes
