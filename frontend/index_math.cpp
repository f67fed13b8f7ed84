// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "frontend/index_math.hpp"

#include <utility>

#include "ir/analysis.hpp"
#include "ir/builder.hpp"
#include "ir/semantics.hpp"

namespace kiln::detail::ix {
namespace {

/// e as (x, k) with e == x + k; x is null when e is the constant k.
std::pair<ir::Expr, std::int64_t> split(const ir::Expr& e) {
  if (auto v = value(e)) return {nullptr, *v};
  if (const auto* b = ir::dyn<ir::BinaryExpr>(e)) {
    const auto k = value(b->b);
    if (k && b->op == BinaryOp::Add) return {b->a, *k};
    if (k && b->op == BinaryOp::Sub) return {b->a, ir::sem::binary<std::int64_t>(BinaryOp::Sub, 0, *k)};
  }
  return {e, 0};
}

/// x + k, spelled `x - |k|` for negative k.
ir::Expr offset(const ir::Expr& x, std::int64_t k) {
  if (!x) return c(k);
  if (k == 0) return x;
  if (k < 0 && k != INT64_MIN) return ir::make_binary(BinaryOp::Sub, x, c(-k));
  return ir::make_binary(BinaryOp::Add, x, c(k));
}

std::int64_t wrap(BinaryOp op, std::int64_t a, std::int64_t b) { return ir::sem::binary<std::int64_t>(op, a, b); }

}  // namespace

ir::Expr c(std::int64_t v) { return ir::make_i64(v); }

std::optional<std::int64_t> value(const ir::Expr& e) {
  const auto* k = ir::dyn<ir::ConstExpr>(e);
  if (!k || k->type != DType::I64) return std::nullopt;
  return k->i;
}

ir::Expr add(const ir::Expr& a, const ir::Expr& b) {
  const auto [x, kx] = split(a);
  const auto [y, ky] = split(b);
  if (x && y) return offset(ir::make_binary(BinaryOp::Add, x, y), wrap(BinaryOp::Add, kx, ky));
  return offset(x ? x : y, wrap(BinaryOp::Add, kx, ky));
}

ir::Expr sub(const ir::Expr& a, const ir::Expr& b) {
  const auto [x, kx] = split(a);
  const auto [y, ky] = split(b);
  const std::int64_t k = wrap(BinaryOp::Sub, kx, ky);
  if (!y) return offset(x, k);
  if (x && ir::equal(x, y)) return c(k);
  return offset(ir::make_binary(BinaryOp::Sub, x ? x : c(0), y), k);
}

ir::Expr mul(const ir::Expr& a, const ir::Expr& b) {
  const auto va = value(a), vb = value(b);
  if (va && vb) return c(wrap(BinaryOp::Mul, *va, *vb));
  if ((va && *va == 0) || (vb && *vb == 0)) return c(0);
  if (va && *va == 1) return b;
  if (vb && *vb == 1) return a;
  return ir::make_binary(BinaryOp::Mul, a, b);
}

ir::Expr div(const ir::Expr& a, const ir::Expr& b) {
  const auto va = value(a), vb = value(b);
  if (va && vb) return c(wrap(BinaryOp::Div, *va, *vb));
  if (vb && *vb == 1) return a;
  return ir::make_binary(BinaryOp::Div, a, b);
}

ir::Expr min(const ir::Expr& a, const ir::Expr& b) {
  const auto [x, kx] = split(a);
  const auto [y, ky] = split(b);
  if ((!x && !y) || (x && y && ir::equal(x, y))) return kx <= ky ? a : b;
  return ir::make_binary(BinaryOp::Min, a, b);
}

ir::Expr max(const ir::Expr& a, const ir::Expr& b) {
  const auto [x, kx] = split(a);
  const auto [y, ky] = split(b);
  if ((!x && !y) || (x && y && ir::equal(x, y))) return kx >= ky ? a : b;
  // An array extent is never negative.
  if (ir::dyn<ir::DimExpr>(a) && !y && ky <= 0) return a;
  if (ir::dyn<ir::DimExpr>(b) && !x && kx <= 0) return b;
  return ir::make_binary(BinaryOp::Max, a, b);
}

ir::Expr select(const ir::Expr& cond, const ir::Expr& a, const ir::Expr& b) {
  if (const auto* k = ir::dyn<ir::ConstExpr>(cond)) return k->i ? a : b;
  if (ir::equal(a, b)) return a;
  return ir::make_select(cond, a, b);
}

ir::Expr lt(const ir::Expr& a, const ir::Expr& b) {
  const auto [x, kx] = split(a);
  const auto [y, ky] = split(b);
  if ((!x && !y) || (x && y && ir::equal(x, y))) return ir::make_bool(kx < ky);
  return ir::make_binary(BinaryOp::Lt, a, b);
}

ir::Expr eq(const ir::Expr& a, const ir::Expr& b) {
  const auto [x, kx] = split(a);
  const auto [y, ky] = split(b);
  if ((!x && !y) || (x && y && ir::equal(x, y))) return ir::make_bool(kx == ky);
  return ir::make_binary(BinaryOp::Eq, a, b);
}

ir::Expr both(const ir::Expr& a, const ir::Expr& b) {
  if (!a) return b;
  if (!b) return a;
  if (const auto* k = ir::dyn<ir::ConstExpr>(a)) return k->i ? b : a;
  if (const auto* k = ir::dyn<ir::ConstExpr>(b)) return k->i ? a : b;
  return ir::make_binary(BinaryOp::And, a, b);
}

}  // namespace kiln::detail::ix
