// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "passes/early_checks.hpp"

#include <string>

#include "ir/analysis.hpp"
#include "ir/visitor.hpp"

namespace kiln::passes {
namespace {

using namespace kiln::ir;

/// True if an extent is never negative by its form (so allocating it cannot fail).
bool nonnegative(const Expr& e) {
  if (dyn<DimExpr>(e)) return true;
  if (const auto* c = dyn<ConstExpr>(e); c && c->type == DType::I64) return c->i >= 0;
  const auto* b = dyn<BinaryExpr>(e);
  if (!b) return false;
  switch (b->op) {
    case BinaryOp::Max: return nonnegative(b->a) || nonnegative(b->b);
    case BinaryOp::Min: case BinaryOp::Add: case BinaryOp::Mul: return nonnegative(b->a) && nonnegative(b->b);
    default: return false;
  }
}

/// True if a check reading `reads` (and the elements of `loaded`) may run before s instead of after it
/// (checks_early says when). Nothing outside the kernel can tell the difference, and the facts of the check
/// then hold for s too, which lets fusion see s's space as equal to the others.
bool check_may_precede(const Stmt& s, const VarSet& reads, const VarSet& loaded) {
  for (const VarSet& changed : {declared_in(s), assigned_vars(s)})
    for (const VarNode* v : changed)
      if (reads.count(v)) return false;
  // s may write only its own arrays, and none the check reads.
  for (const VarNode* array : stored_arrays(s))
    if (array->kind != VarKind::Local || loaded.count(array)) return false;
  // Nor may it fail on its own: no check of its own, no allocation of a possibly negative extent.
  struct Scan : IRVisitor {
    bool ok = true;
    void extents(const std::vector<Expr>& shape) {
      for (const Expr& e : shape) ok &= nonnegative(e);
    }
    void visit(const CheckStmt&) override { ok = false; }
    void visit(const AllocateStmt& a) override {
      extents(a.shape);
      IRVisitor::visit(a);
    }
    void visit(const MapStmt& m) override {
      if (m.allocate) extents(m.shape);
      IRVisitor::visit(m);
    }
    void visit(const ReduceAxisStmt& r) override {
      extents(r.shape);
      IRVisitor::visit(r);
    }
    void visit(const StencilStmt& st) override {
      if (st.allocate) extents(st.shape);
      IRVisitor::visit(st);
    }
  } scan;
  scan.walk(s);
  return scan.ok;
}

}  // namespace

std::vector<Stmt> checks_early(const std::vector<Stmt>& in, PassContext& ctx) {
  std::vector<Stmt> out;
  for (const Stmt& s : in) {
    size_t at = out.size();
    if (const auto* c = dyn<CheckStmt>(s)) {
      VarSet reads, loaded;
      for (const Var& v : free_vars(s)) reads.insert(v.get());
      struct Loads : IRVisitor {
        VarSet& loaded;
        explicit Loads(VarSet& l) : loaded(l) {}
        void visit(const LoadExpr& e) override {
          loaded.insert(e.array.get());
          IRVisitor::visit(e);
        }
      } loads(loaded);
      loads.walk(s);
      while (at > 0 && check_may_precede(out[at - 1], reads, loaded)) --at;
      if (at < out.size())
        ctx.note("array_analysis: moved check `" + c->message.substr(0, c->message.find(':')) + "` before " +
                 std::to_string(out.size() - at) + " statement(s) nobody outside the kernel can observe");
    }
    out.insert(out.begin() + static_cast<long>(at), s);
  }
  return out;
}

}  // namespace kiln::passes
