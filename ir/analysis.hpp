// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Small queries over IR trees shared by the verifier, passes and backends.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/stmt.hpp"

namespace kiln::ir {

using VarSet = std::unordered_set<const VarNode*>;

/// True if `e` (or `s`) mentions variable `v`: reads it, assigns it, loads from or stores to it.
bool uses(const Expr& e, const VarNode* v);
bool uses(const Stmt& s, const VarNode* v);
/// True if evaluating `e` reads any array element.
bool has_load(const Expr& e);
/// True if evaluating `e` loads an element of `array` (reading its extents is no load).
bool loads_from(const Expr& e, const VarNode* array);
/// True if evaluating `e` can fault or trap when executed speculatively (loads; nothing else can, since
/// integer division is total in kiln).
inline bool is_speculatable(const Expr& e) { return !has_load(e); }

/// Variables read by `s` (or `e`) that are not defined inside it, in first-use order.
std::vector<Var> free_vars(const Stmt& s);
std::vector<Var> free_vars(const Expr& e);

/// The variables `s` itself declares for the statements after it in its block: a Let's variable, an Atomic's result, an array it
/// allocates (Allocate, an allocating Map or Stencil, ReduceAxis's target), a Reduce's result, a declaring
/// Bind's binding. A loop's index, and what its body declares, are not visible after it: none.
std::vector<Var> declared_by(const Stmt& s);
/// The indices `s` declares for its own body or index space: a For's index, the indices of a Parfor, Map,
/// Reduce, ReduceAxis or Stencil; none for other statements.
std::vector<Var> indices_of(const Stmt& s);
/// Every variable declared anywhere inside `s`: declared_by and indices_of of each statement in it.
VarSet declared_in(const Stmt& s);

/// Scalars assigned (and array bindings rebound) and arrays stored to inside `s`.
VarSet assigned_vars(const Stmt& s);
VarSet stored_arrays(const Stmt& s);

/// True if array variables a and b may name the same memory as the kernel's meaning sees it: the same
/// variable, or a Binding and any array of its element type. Two parameters never do: a call means what it
/// means for distinct arrays (docs/aliasing.md), and the call-time check, computed from the final lowered
/// code (ir/argument_access.hpp), copies an argument or refuses the call wherever running that code on
/// overlapping memory could differ. So the passes may treat parameters as distinct, as a Fortran compiler
/// treats dummy arguments. Arrays allocated by the kernel alias nothing else.
bool may_alias(const VarNode* a, const VarNode* b);

/// Structural equality: same operators, constants (bitwise, so NaN == NaN) and variables (by identity).
bool equal(const Expr& a, const Expr& b);

/// Values of variables that are never assigned (lets), which index_offset looks through.
using LetValues = std::unordered_map<const VarNode*, Expr>;

/// c when `e` is `index + c` for a constant c: `index`, and sums and differences of it with i64 constants
/// (`(i + 1) - 3`, `2 + i`), through `lets` when given; nullopt when it is not, or c would overflow. How a
/// stencil's window offsets are read back from its index expressions (lower_stencils, the CUDA emitter).
std::optional<std::int64_t> index_offset(const Expr& e, const VarNode* index, const LetValues* lets = nullptr);

/// Whether `s` runs a sequential loop (a For statement anywhere inside it).
bool runs_a_loop(const Stmt& s);

/// The launches of `f` whose reductions' values only the function's scalar results read: launches that run
/// once (in the body's straight-line statements, not under a loop or a condition) and whose reduction
/// variables no later statement mentions, in a function whose scalar results read no array element. Their
/// totals may arrive after the body has run: the results are computed when they do (an asynchronous CUDA
/// call's kiln::cuda::Future).
std::vector<const LaunchStmt*> result_only_launches(const Function& f);

/// Whether running `s` can fail: an allocation or a run-time check anywhere inside it (the code after a parfor
/// must read the status; a GPU thread that fails leaves its iterations early).
bool can_fail(const Stmt& s);

/// Number of expression nodes: a rough cost measure.
size_t node_count(const Expr& e);
size_t node_count(const Stmt& s);

}  // namespace kiln::ir
