// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "passes/extent_facts.hpp"

#include "ir/analysis.hpp"
#include "ir/builder.hpp"

namespace kiln::passes {

using namespace kiln::ir;

namespace {

/// Values fixed for the whole kernel: no loads, no local scalars (they may be reassigned), no bindings
/// (they may be rebound to arrays of other shapes).
bool fixed(const Expr& e) {
  if (!e || e->type != DType::I64 || has_load(e)) return false;
  for (const Var& v : free_vars(e)) {
    if (v->kind == VarKind::Binding) return false;
    if (v->type.is_scalar() && v->kind != VarKind::Param) return false;
  }
  return true;
}

}  // namespace

size_t ExtentFacts::node(const Expr& e) {
  for (size_t k = 0; k < exprs_.size(); ++k)
    if (equal(exprs_[k], e)) return k;
  exprs_.push_back(e);
  parent_.push_back(parent_.size());
  return parent_.size() - 1;
}

size_t ExtentFacts::root(size_t x) {
  while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
  return x;
}

void ExtentFacts::unite(const Expr& a, const Expr& b) {
  if (!fixed(a) || !fixed(b)) return;
  const size_t ra = root(node(a)), rb = root(node(b));
  parent_[ra] = rb;
}

void ExtentFacts::learn_condition(const Expr& c) {
  const auto* b = dyn<BinaryExpr>(c);
  if (!b) return;
  if (b->op == BinaryOp::And) {
    learn_condition(b->a);
    learn_condition(b->b);
  } else if (b->op == BinaryOp::Eq) {
    unite(b->a, b->b);
  }
}

void ExtentFacts::learn(const Stmt& s) {
  auto shape = [&](const Var& a, const std::vector<Expr>& extents) {
    if (a->kind == VarKind::Binding) return;
    for (size_t d = 0; d < extents.size(); ++d) unite(make_dim(a, static_cast<int>(d)), extents[d]);
  };
  if (const auto* c = dyn<CheckStmt>(s)) learn_condition(c->cond);
  else if (const auto* a = dyn<AllocateStmt>(s)) shape(a->array, a->shape);
  else if (const auto* st = dyn<StencilStmt>(s); st && st->allocate) shape(st->target, st->shape);
}

bool ExtentFacts::same(const Expr& a, const Expr& b) {
  if (equal(a, b)) return true;
  if (!fixed(a) || !fixed(b)) return false;
  return root(node(a)) == root(node(b));
}

}  // namespace kiln::passes
