// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Checked constructors for IR nodes. They enforce the typing rules, so a node that exists is well typed.
#pragma once

#include <string>
#include <vector>

#include "ir/stmt.hpp"
#include "kiln/error.hpp"

namespace kiln::ir {

/// Malformed IR built by kiln itself (a compiler bug, or a frontend check that should have fired first).
class IRError : public Error {
 public:
  using Error::Error;
};

Expr make_bool(bool v);
Expr make_int(DType t, std::int64_t v);  ///< an integer type (value wrapped to its width) or Bool
Expr make_i64(std::int64_t v);
Expr make_float(DType t, double v);      ///< a float type (value rounded to it, f16/bf16 through f32)
Expr make_const(DType t, double v);      ///< any type; integers truncate and saturate, bool is v != 0
Expr make_ref(Var v);
Expr make_load(Var array, std::vector<Expr> indices);
Expr make_dim(Var array, int axis);
Expr make_unary(UnaryOp op, Expr a);
Expr make_binary(BinaryOp op, Expr a, Expr b);
Expr make_select(Expr cond, Expr a, Expr b);
Expr make_cast(DType t, Expr a);  ///< returns `a` itself when it already has type t
Expr make_call(Intrinsic fn, std::vector<Expr> args);

/// The identity element of a reduction on a type: 0 (-0.0 for floats, the exact additive identity), 1,
/// +inf / max, -inf / lowest.
Expr identity_of(ReduceOp op, DType t);

Stmt make_block(std::vector<Stmt> stmts);
Stmt make_let(Var v, Expr init);
Stmt make_assign(Var v, Expr value);
Stmt make_store(Var array, std::vector<Expr> indices, Expr value);
Stmt make_for(Var index, Expr begin, Expr end, Stmt body);
Stmt make_parfor(std::vector<Var> indices, std::vector<Expr> begins, std::vector<Expr> ends, Stmt body,
                 std::vector<Reduction> reductions = {}, std::string origin = {});
Stmt make_parfor(std::vector<Var> indices, std::vector<Expr> begins, std::vector<Expr> ends, Stmt body,
                 std::vector<Reduction> reductions, std::vector<ArrayReduction> array_reductions, std::string origin);
Stmt make_if(Expr cond, Stmt then_body, Stmt else_body = nullptr);
Stmt make_allocate(Var array, std::vector<Expr> shape);
Stmt make_check(Expr cond, std::int32_t code, std::string message, std::vector<Expr> args = {});
/// An allocating map: `target` is a new local array of rank shape.size(); target_index is the index.
Stmt make_map(Var target, std::vector<Var> indices, std::vector<Expr> shape, Expr value, std::string origin = {});
/// A map into an existing array at target_index.
Stmt make_map_into(Var target, std::vector<Var> indices, std::vector<Expr> shape, std::vector<Expr> target_index,
                   Expr value, std::string origin = {});
Stmt make_reduce(Var result, ReduceOp op, std::vector<Var> indices, std::vector<Expr> shape, Expr value,
                 std::string origin = {});
Stmt make_reduce_axis(Var target, ReduceOp op, int axis, bool keepdims, std::vector<Var> indices,
                      std::vector<Expr> shape, Expr value, std::string origin = {});

Stmt make_bind(Var target, Var source, bool declare);
/// Kernel number `kernel` (>= 0) running `parfor` on the device.
Stmt make_launch(int kernel, Stmt parfor);
/// A stencil; `target_index` empty means an allocating one (the index itself).
Stmt make_stencil(Var target, bool allocate, std::vector<Var> indices, std::vector<Expr> shape,
                  std::vector<Expr> target_index, Expr value, std::vector<Var> windows, std::vector<std::int64_t> lo,
                  std::vector<std::int64_t> hi, Border border, Expr cval, std::string origin = {});

/// Scans the rows of `source` into `out` (ir/stmt.hpp's ScanStmt); see ir/scan.hpp's scan_stmt_types.
Stmt make_scan(Var source, Var out, ReduceOp op, DType type, bool exclusive, std::string origin = {});
/// Sorts the rows of `keys` in place (ir/stmt.hpp's SortStmt); `positions` (i64, keys' rank) or null.
Stmt make_sort(Var keys, Var positions, std::string origin = {});

/// The element type a reduction produces from values of type t (i64 for ArgMin/ArgMax).
DType reduce_result_type(ReduceOp op, DType t);

/// Rebuilds a parfor with a different body or reductions, keeping everything else.
Stmt with_body(const ParforStmt& p, Stmt body);
Stmt with_reductions(const ParforStmt& p, std::vector<Reduction> reductions);
Stmt with_array_reductions(const ParforStmt& p, std::vector<ArrayReduction> array_reductions);

bool is_const(const Expr& e);
bool is_const_value(const Expr& e, double v);  ///< constant equal to v (as double)

}  // namespace kiln::ir
