// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Shorthands for building IR in tests: the CPU and GPU backend tests write their kernels with these.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ir/builder.hpp"

namespace kiln::test_support {

using ir::Expr;
using ir::Stmt;
using ir::Var;

inline Var param(const std::string& name, DType t) { return ir::make_var(name, ir::Type::scalar(t), ir::VarKind::Param); }
inline Var array_param(const std::string& name, DType t, int rank = 1, bool unit_stride = false) {
  return ir::make_var(name, ir::Type::array(t, rank, unit_stride), ir::VarKind::Param);
}
/// `where`: where the user declared it ("file.cpp:12"), for diagnostics; may be empty.
inline Var local(const std::string& name, DType t, const std::string& where = {}) {
  return ir::make_var(name, ir::Type::scalar(t), ir::VarKind::Local, where);
}
inline Var local_array(const std::string& name, DType t, int rank) {
  return ir::make_var(name, ir::Type::array(t, rank, true), ir::VarKind::Local);
}
inline Var index(const std::string& name) { return ir::make_var(name, ir::Type::scalar(DType::I64), ir::VarKind::Index); }

inline Expr val(const Var& v) { return ir::make_ref(v); }
inline Expr i64c(std::int64_t v) { return ir::make_i64(v); }
inline Expr num(DType t, double v) { return ir::make_const(t, v); }
inline Expr dim(const Var& a, int axis = 0) { return ir::make_dim(a, axis); }
inline Expr at(const Var& a, std::vector<Expr> idx) { return ir::make_load(a, std::move(idx)); }
inline Expr bin(BinaryOp op, Expr a, Expr b) { return ir::make_binary(op, std::move(a), std::move(b)); }
inline Expr operator+(Expr a, Expr b) { return bin(BinaryOp::Add, std::move(a), std::move(b)); }
inline Expr operator-(Expr a, Expr b) { return bin(BinaryOp::Sub, std::move(a), std::move(b)); }
inline Expr operator*(Expr a, Expr b) { return bin(BinaryOp::Mul, std::move(a), std::move(b)); }
inline Expr operator/(Expr a, Expr b) { return bin(BinaryOp::Div, std::move(a), std::move(b)); }
inline Expr cast(DType t, Expr e) { return ir::make_cast(t, std::move(e)); }
inline Expr call(Intrinsic fn, std::vector<Expr> args) { return ir::make_call(fn, std::move(args)); }

inline Stmt store(const Var& a, std::vector<Expr> idx, Expr v) { return ir::make_store(a, std::move(idx), std::move(v)); }
inline Stmt let(const Var& v, Expr e) { return ir::make_let(v, std::move(e)); }
inline Stmt assign(const Var& v, Expr e) { return ir::make_assign(v, std::move(e)); }
inline Stmt block(std::vector<Stmt> s) { return ir::make_block(std::move(s)); }
/// parfor over [0, ends...).
inline Stmt parfor(std::vector<Var> idx, std::vector<Expr> ends, Stmt body, std::vector<ir::Reduction> red = {}) {
  std::vector<Expr> begins(idx.size(), i64c(0));
  return ir::make_parfor(std::move(idx), std::move(begins), std::move(ends), std::move(body), std::move(red), "test");
}
/// 1-d parfor over [0, end).
inline Stmt parfor1(const Var& i, Expr end, Stmt body, std::vector<ir::Reduction> red = {},
                    std::string origin = "test") {
  return ir::make_parfor({i}, {i64c(0)}, {std::move(end)}, std::move(body), std::move(red), std::move(origin));
}
inline Stmt for_loop(const Var& i, Expr begin, Expr end, Stmt body) {
  return ir::make_for(i, std::move(begin), std::move(end), std::move(body));
}

inline ir::Function function(std::string name, std::vector<Var> params, std::vector<Stmt> body, Expr result = nullptr,
                             Var result_array = nullptr) {
  ir::Function f;
  f.name = std::move(name);
  f.params = std::move(params);
  f.body = block(std::move(body));
  f.result = std::move(result);
  f.result_array = std::move(result_array);
  return f;
}

}  // namespace kiln::test_support
