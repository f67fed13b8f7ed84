// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "passes/element_accesses.hpp"

#include "ir/builder.hpp"

namespace kiln::passes::bounds {

using namespace kiln::ir;

Expr both(const Expr& a, const Expr& b) { return a ? (b ? make_binary(BinaryOp::And, a, b) : a) : b; }
Expr negate(const Expr& a) { return make_unary(UnaryOp::Not, a); }

void accesses(const Expr& e, const Expr& guard, std::vector<Access>& out) {
  switch (e->kind) {
    case ExprKind::Load: {
      const auto& l = e->as<LoadExpr>();
      for (const Expr& i : l.indices) accesses(i, guard, out);
      out.push_back({l.array, l.indices, guard});
      return;
    }
    case ExprKind::Unary: return accesses(e->as<UnaryExpr>().a, guard, out);
    case ExprKind::Cast: return accesses(e->as<CastExpr>().a, guard, out);
    case ExprKind::Binary: {
      const auto& b = e->as<BinaryExpr>();
      accesses(b.a, guard, out);
      if (b.op == BinaryOp::And) return accesses(b.b, both(guard, b.a), out);
      if (b.op == BinaryOp::Or) return accesses(b.b, both(guard, negate(b.a)), out);
      return accesses(b.b, guard, out);
    }
    case ExprKind::Select: {
      const auto& s = e->as<SelectExpr>();
      accesses(s.cond, guard, out);
      accesses(s.a, both(guard, s.cond), out);
      return accesses(s.b, both(guard, negate(s.cond)), out);
    }
    case ExprKind::Call:
      for (const Expr& a : e->as<CallExpr>().args) accesses(a, guard, out);
      return;
    case ExprKind::Const:
    case ExprKind::VarRef:
    case ExprKind::Dim: return;
  }
}

}  // namespace kiln::passes::bounds
