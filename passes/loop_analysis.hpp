// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Dependence facts shared by the loop passes (fusion, temporaries, buffer reuse, hoisting): what a
// statement reads and writes, which arrays may share memory, and which subscripts touch one element per
// iteration.
#pragma once

#include <string>
#include <vector>

#include "ir/analysis.hpp"
#include "ir/stmt.hpp"
#include "ir/visitor.hpp"

namespace kiln::passes::loops {

/// True if `a` may share memory with an array of `set` (ir::may_alias: the same variable, or a binding and an
/// array of its type; parameters are distinct by the calling convention, allocated arrays share nothing).
bool may_alias_any(const ir::VarNode* a, const ir::VarSet& set);

/// The arrays some binding is bound to in `s` (BindStmt sources): a binding may name them anywhere after,
/// so their memory is alive as long as any binding is, and accesses through a binding are theirs too.
ir::VarSet bound_arrays(const ir::Stmt& s);

/// One array element access, with the subscripts as written.
struct Access {
  ir::Var array;
  std::vector<ir::Expr> index;
  bool store;
};

/// What a statement does, as seen by the statements around it.
struct Effects {
  ir::VarSet uses;     ///< variables defined outside it that it mentions (scalars and arrays, Dim included)
  ir::VarSet writes;   ///< scalars it assigns (reduction variables of a parfor included)
  ir::VarSet defines;  ///< variables it declares for the statements after it (ir::declared_by)
  ir::VarSet loaded;   ///< arrays whose elements it reads
  ir::VarSet stored;   ///< arrays whose elements it writes
  std::vector<Access> accesses;  ///< element accesses, loads and stores
  bool checks = false;           ///< contains a run-time check (it may stop the kernel)
};
Effects effects_of(const ir::Stmt& s);

/// True if running `a` then `b` may give other results than `b` then `a`: one writes a scalar the other
/// mentions, or an array the other reads or writes (through may_alias). Definitions are not considered.
bool conflict(const Effects& a, const Effects& b);
/// True if `user` mentions a variable `e` declares.
bool needs(const Effects& user, const Effects& e);

/// Variables whose value may differ between two iterations of a loop body: those it declares (lets, inner
/// indices, allocations: ir::declared_in) and those it assigns (ir::assigned_vars).
ir::VarSet variant_in(const ir::Stmt& body);

/// True if `e` has one value in every iteration of a loop over `indices` whose body's variant variables are
/// `variant` (variant_in): it loads nothing and reads neither an index nor a variable of `variant`.
bool invariant_in(const ir::Expr& e, const std::vector<ir::Var>& indices, const ir::VarSet& variant);

/// True if subscripts `index` address a different element at every point of the space of `indices`
/// (each index is the whole of one subscript or one side of `i + e`, `e + i`, `i - e`; `e` and the other
/// subscripts read no index, no array element and nothing in `variant`).
bool one_element_per_iteration(const std::vector<ir::Expr>& index, const std::vector<ir::Var>& indices,
                               const ir::VarSet& variant);

bool equal_all(const std::vector<ir::Expr>& a, const std::vector<ir::Expr>& b);

/// True if the extents evaluate the same anywhere after the allocation that declares them: they load
/// nothing and read no variable in `assigned` (the variables ever reassigned).
bool stable_extents(const std::vector<ir::Expr>& shape, const ir::VarSet& assigned);

/// The statements of a body (a block's list, or the statement itself).
std::vector<ir::Stmt> statements(const ir::Stmt& body);

/// Separates the origins of fused parfors in their origin ("exp at f.cpp:3 | sum at f.cpp:3").
inline constexpr const char* kOriginSeparator = " | ";

/// The origin of a parfor fused from parfors of origins `a` and `b`: "exp at f.cpp:3 | sum at f.cpp:3", each
/// origin once (" + " would be ambiguous: "a + b" is an origin).
std::string joined_origin(const std::string& a, const std::string& b);
/// A parfor's origin for notes: "prange at f.cpp:3", or "a parfor" when it has none; for a parfor fused
/// from more than two, the first origin and how many more.
std::string origin_text(const ir::ParforStmt& p);
/// `(i in 0 .. n, j in 0 .. m)`
std::string space_text(const ir::ParforStmt& p);
/// The first line of a statement's text, for notes.
std::string first_line(const ir::Stmt& s);

}  // namespace kiln::passes::loops
