// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Immutable expression nodes. Expressions are pure except Load, which reads an array.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "ir/ops.hpp"
#include "ir/type.hpp"

namespace kiln::ir {

enum class ExprKind : std::uint8_t { Const, VarRef, Load, Dim, Unary, Binary, Select, Cast, Call };

struct ExprNode {
  const ExprKind kind;
  const DType type;  ///< expressions are always scalar-valued
  ExprNode(ExprKind k, DType t) : kind(k), type(t) {}
  virtual ~ExprNode() = default;
  ExprNode(const ExprNode&) = delete;
  ExprNode& operator=(const ExprNode&) = delete;

  /// Checked downcast: `e->as<BinaryExpr>()`.
  template <class T>
  const T& as() const {
    return static_cast<const T&>(*this);
  }
};
using Expr = std::shared_ptr<const ExprNode>;

/// Holds every scalar type: bool and integers in `i` (wrapped to the type: sign-extended for signed types,
/// zero-extended for unsigned ones, a u64 as its bits), floats (exact in double) in `f`.
struct ConstExpr final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Const;
  std::int64_t i = 0;
  double f = 0;
  ConstExpr(DType t, std::int64_t iv, double fv) : ExprNode(kKind, t), i(iv), f(fv) {}
  double as_double() const {
    if (is_float(type)) return f;
    return type == DType::U64 ? static_cast<double>(static_cast<std::uint64_t>(i)) : static_cast<double>(i);
  }
};

/// Reads a scalar variable (parameter, local or loop index).
struct VarRefExpr final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::VarRef;
  Var var;
  explicit VarRefExpr(Var v) : ExprNode(kKind, v->type.elem), var(std::move(v)) {}
};

/// array[indices...]; one index per dimension.
struct LoadExpr final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Load;
  Var array;
  std::vector<Expr> indices;
  LoadExpr(Var a, std::vector<Expr> idx) : ExprNode(kKind, a->type.elem), array(std::move(a)), indices(std::move(idx)) {}
};

/// The extent of `array` along `axis`, as i64.
struct DimExpr final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Dim;
  Var array;
  int axis;
  DimExpr(Var a, int ax) : ExprNode(kKind, DType::I64), array(std::move(a)), axis(ax) {}
};

struct UnaryExpr final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Unary;
  UnaryOp op;
  Expr a;
  UnaryExpr(DType t, UnaryOp o, Expr x) : ExprNode(kKind, t), op(o), a(std::move(x)) {}
};

struct BinaryExpr final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Binary;
  BinaryOp op;
  Expr a, b;
  BinaryExpr(DType t, BinaryOp o, Expr x, Expr y) : ExprNode(kKind, t), op(o), a(std::move(x)), b(std::move(y)) {}
};

/// cond ? a : b, evaluating only the chosen operand.
struct SelectExpr final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Select;
  Expr cond, a, b;
  SelectExpr(Expr c, Expr x, Expr y)
      : ExprNode(kKind, x->type), cond(std::move(c)), a(std::move(x)), b(std::move(y)) {}
};

/// Conversion to `type`. Float to integer saturates (NaN -> 0); integer narrowing wraps; x -> bool is x != 0.
struct CastExpr final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Cast;
  Expr a;
  CastExpr(DType t, Expr x) : ExprNode(kKind, t), a(std::move(x)) {}
};

struct CallExpr final : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Call;
  Intrinsic fn;
  std::vector<Expr> args;
  CallExpr(DType t, Intrinsic f, std::vector<Expr> as) : ExprNode(kKind, t), fn(f), args(std::move(as)) {}
};

/// Downcast helper returning nullptr on a kind mismatch.
template <class T>
const T* dyn(const Expr& e) {
  return e && e->kind == T::kKind ? static_cast<const T*>(e.get()) : nullptr;
}

}  // namespace kiln::ir
