// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "ir/reductions.hpp"

#include <functional>

#include "ir/analysis.hpp"
#include "ir/builder.hpp"
#include "ir/visitor.hpp"

namespace kiln::ir {
namespace {

bool is_ref(const Expr& e, const VarNode* v) {
  const auto* r = dyn<VarRefExpr>(e);
  return r && r->var.get() == v;
}

/// For `target op' e` shapes: is `op'` acceptable for reduction op on values of type t?
bool update_op_ok(BinaryOp b, ReduceOp op, DType t) {
  return b == combiner(op) || (op == ReduceOp::Add && b == BinaryOp::Sub) ||
         (op == ReduceOp::Mul && b == BinaryOp::Div && is_float(t));
}

/// Flattens an || tree into its terms.
void disjuncts(const Expr& e, std::vector<Expr>& out) {
  if (const auto* b = dyn<BinaryExpr>(e); b && b->op == BinaryOp::Or) {
    disjuncts(b->a, out);
    disjuncts(b->b, out);
    return;
  }
  out.push_back(e);
}

bool is_isnan_of(const Expr& e, const std::function<bool(const Expr&)>& arg) {
  const auto* c = dyn<CallExpr>(e);
  return c && c->fn == Intrinsic::IsNan && arg(c->args[0]);
}

}  // namespace

bool is_reduction_update(const AssignStmt& s, ReduceOp op) {
  if (is_arg_reduction(op)) return false;
  const auto* b = dyn<BinaryExpr>(s.value);
  if (!b || !update_op_ok(b->op, op, b->type)) return false;
  const VarNode* v = s.var.get();
  if (is_ref(b->a, v) && !uses(b->b, v)) return true;
  return is_commutative(b->op) && is_ref(b->b, v) && !uses(b->a, v);
}

std::optional<ArgUpdate> match_arg_update(const IfStmt& s, const Reduction& r) {
  if (!is_arg_reduction(r.op) || !r.index || s.else_body) return std::nullopt;
  const auto* block = dyn<BlockStmt>(s.then_body);
  if (!block || block->stmts.size() != 2) return std::nullopt;
  const auto* set_value = dyn<AssignStmt>(block->stmts[0]);
  const auto* set_index = dyn<AssignStmt>(block->stmts[1]);
  if (!set_value || !set_index || set_value->var != r.var || set_index->var != r.index) return std::nullopt;
  const Expr& x = set_value->value;
  const Expr& k = set_index->value;
  const VarNode *v = r.var.get(), *i = r.index.get();
  if (uses(x, v) || uses(x, i) || uses(k, v) || uses(k, i)) return std::nullopt;

  const BinaryOp better = r.op == ReduceOp::ArgMin ? BinaryOp::Lt : BinaryOp::Gt;
  std::vector<Expr> terms;
  disjuncts(s.cond, terms);
  bool has_compare = false, has_empty = false, has_nan = false;
  for (const Expr& t : terms) {
    const auto* b = dyn<BinaryExpr>(t);
    if (!b) return std::nullopt;
    if (b->op == better && equal(b->a, x) && is_ref(b->b, v)) {
      has_compare = true;
    } else if (b->op == BinaryOp::Lt && is_ref(b->a, i) && is_const_value(b->b, 0)) {
      has_empty = true;  // index < 0: nothing found yet
    } else if (b->op == BinaryOp::And && is_isnan_of(b->a, [&](const Expr& a) { return equal(a, x); })) {
      const auto* n = dyn<UnaryExpr>(b->b);
      if (!n || n->op != UnaryOp::Not || !is_isnan_of(n->a, [&](const Expr& a) { return is_ref(a, v); }))
        return std::nullopt;
      has_nan = true;
    } else {
      return std::nullopt;
    }
  }
  if (!has_compare) return std::nullopt;
  // "Nothing yet" lets a NaN in as a block's first element; without the NaN rule it could never be
  // replaced there, although in sequential order a number before that block would have kept it out.
  if (has_empty && !has_nan && is_float(x->type)) return std::nullopt;
  return ArgUpdate{x, k, s.cond};
}

bool is_array_update(const StoreStmt& s, const ArrayReduction& r) {
  return is_array_update(s.array, s.indices, s.value, r);
}

bool is_array_update(const Var& array, const std::vector<Expr>& index, const Expr& value, const ArrayReduction& r) {
  if (array != r.array) return false;
  const auto* b = dyn<BinaryExpr>(value);
  if (!b || !update_op_ok(b->op, r.op, b->type)) return false;
  const VarNode* a = r.array.get();
  for (const auto& k : index)
    if (loads_from(k, a)) return false;
  auto is_same_element = [&](const Expr& e) {
    const auto* l = dyn<LoadExpr>(e);
    if (!l || l->array != r.array) return false;
    for (size_t d = 0; d < l->indices.size(); ++d)
      if (!equal(l->indices[d], index[d])) return false;
    return true;
  };
  if (is_same_element(b->a) && !loads_from(b->b, a)) return true;
  return is_commutative(b->op) && is_same_element(b->b) && !loads_from(b->a, a);
}

}  // namespace kiln::ir
