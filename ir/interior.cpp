// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "ir/interior.hpp"

#include <cstdlib>
#include <map>
#include <set>
#include <unordered_set>

#include "ir/builder.hpp"
#include "ir/straight_line.hpp"
#include "ir/visitor.hpp"

namespace kiln::ir {
bool bounds_test(const Expr& cond, const std::vector<Var>& indices, const std::function<bool(const Expr&)>& fixed) {
  const auto* b = dyn<BinaryExpr>(cond);
  if (!b) return false;
  if (b->op == BinaryOp::And && b->type == DType::Bool) return bounds_test(b->a, indices, fixed) && bounds_test(b->b, indices, fixed);
  auto index = [&](const Expr& x) {
    const auto* v = dyn<VarRefExpr>(x);
    if (!v) return false;
    for (const Var& i : indices)
      if (v->var.get() == i.get()) return true;
    return false;
  };
  switch (b->op) {
    case BinaryOp::Le:
    case BinaryOp::Lt:
    case BinaryOp::Ge:
    case BinaryOp::Gt: return (index(b->a) && fixed(b->b)) || (index(b->b) && fixed(b->a));
    default: return false;
  }
}

Stmt split_interior(const Stmt& body, std::vector<Expr>& tests, const std::function<bool(const Expr&)>& fixed,
                    const std::vector<Var>& indices, Stmt* border) {
  std::vector<Stmt> stmts;
  straight_line(body, stmts);
  for (std::size_t k = 0; k < stmts.size(); ++k) {
    const auto* branch = dyn<IfStmt>(stmts[k]);
    if (!branch || !bounds_test(branch->cond, indices, fixed)) continue;
    tests.push_back(branch->cond);
    const std::size_t known = tests.size();
    Stmt inner_border;
    const Stmt interior = split_interior(branch->then_body, tests, fixed, indices, &inner_border);
    if (border) {
      std::vector<Stmt> b = stmts;
      b[k] = make_if(branch->cond, tests.size() > known ? inner_border : make_block({}), branch->else_body);
      *border = make_block(std::move(b));
    }
    stmts[k] = interior;
    return make_block(std::move(stmts));
  }
  if (border) *border = body;
  return body;
}

std::vector<PlaneReads> plane_reads(const Stmt& body, const ParforStmt& p, std::int64_t reach, const LetValues* lets) {
  std::vector<PlaneReads> out;
  if (p.indices.size() != 3) return out;
  struct Loads : IRVisitor {
    std::vector<const LoadExpr*> found;
    std::unordered_set<const VarNode*> stored;
    void visit(const LoadExpr& l) override {
      found.push_back(&l);
      IRVisitor::visit(l);
    }
    void visit(const StoreStmt& s) override {
      stored.insert(s.array.get());
      IRVisitor::visit(s);
    }
  } loads;
  loads.walk(body);
  std::map<const VarNode*, std::set<std::int64_t>> planes;
  for (const LoadExpr* l : loads.found) {
    const std::size_t n = l->indices.size();
    if (n < 3 || loads.stored.count(l->array.get())) continue;
    std::optional<std::int64_t> at[3];
    for (std::size_t k = 0; k < 3; ++k) at[k] = index_offset(l->indices[n - 3 + k], p.indices[k].get(), lets);
    bool near = true;
    for (const auto& o : at) near = near && o && std::llabs(*o) <= reach;
    if (near) planes[l->array.get()].insert(*at[0]);
  }
  for (const auto& [array, dz] : planes)
    if (dz.size() >= 2) out.push_back({array, *dz.begin(), *dz.rbegin()});
  return out;
}

}  // namespace kiln::ir
