// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Replacing variables in IR, the one utility every pass and the frontend use (Halide's src/Substitute.h is
// the model): scalar references by expressions (copy propagation and CSE, an index fixed to its only value,
// a traced variable by its current value), one expression by another, and variables by other variables
// (fresh loop indices, a reused buffer, an array handle by the binding a swap makes of it).
#pragma once

#include <unordered_map>

#include "ir/stmt.hpp"
#include "ir/visitor.hpp"

namespace kiln::ir {

/// Scalar variable -> the expression that replaces its references.
using Replacements = std::unordered_map<const VarNode*, Expr>;

struct SubstituteOptions {
  /// A replacement may itself mention replaced variables, which are replaced in turn (the map has no cycle).
  bool transitive = false;
  /// The Let of each replaced variable is deleted: nothing refers to the variable any more.
  bool drop_lets = false;
};

/// `e` (or `s`, or `f`'s body and result) with each reference to a variable of `with` replaced by its
/// expression. Assignments, declarations and array accesses are left as they are.
Expr substitute(const Expr& e, const Replacements& with);
Stmt substitute(const Stmt& s, const Replacements& with, SubstituteOptions options = {});
Function substitute(const Function& f, const Replacements& with, SubstituteOptions options = {});

/// `e` with every subexpression structurally equal to `find` replaced by `replacement`.
Expr substitute(const Expr& find, const Expr& replacement, const Expr& e);

/// Renames variables: scalar references (and assignments) to other variables, and arrays wherever they are
/// used (loads, stores, dims, the target of a map or stencil into an existing array, stencil windows,
/// bindings and reduction clauses) to other arrays. Declarations keep their variables (fresh_copy renames
/// those too).
class Renamer : public IRMutator {
 public:
  std::unordered_map<const VarNode*, Var> vars;

 protected:
  using IRMutator::visit;
  const Var& map(const Var& v) const;
  Expr visit(const VarRefExpr& e, const Expr& self) override;
  Expr visit(const LoadExpr& e, const Expr& self) override;
  Expr visit(const DimExpr& e, const Expr& self) override;
  Stmt visit(const AssignStmt& s, const Stmt& self) override;
  Stmt visit(const StoreStmt& s, const Stmt& self) override;
  Stmt visit(const AtomicStmt& s, const Stmt& self) override;
  Stmt visit(const MapStmt& s, const Stmt& self) override;
  Stmt visit(const StencilStmt& s, const Stmt& self) override;
  Stmt visit(const ParforStmt& s, const Stmt& self) override;
  Stmt visit(const BindStmt& s, const Stmt& self) override;
  Stmt visit(const SortStmt& s, const Stmt& self) override;
  Stmt visit(const ScanStmt& s, const Stmt& self) override;
};

/// A copy of `s` whose own variables (every variable declared in it: ir::declared_in) are new ones with the
/// same names and types: a statement placed twice in a function must not define a variable twice.
Stmt fresh_copy(const Stmt& s);

}  // namespace kiln::ir
