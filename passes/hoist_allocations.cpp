// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Allocation hoisting. Runs after fusion, temporaries and buffer reuse, so only the allocations that are
// still needed are hoisted; a parfor body's allocations stay where they are (iterations run concurrently
// and each needs its own buffer), but a For nested in a parfor body hoists into that body.
#include "passes/hoist_allocations.hpp"

#include "ir/builder.hpp"
#include "ir/printer.hpp"
#include "passes/loop_analysis.hpp"
#include "passes/statement_lists.hpp"

namespace kiln::passes {
namespace {

using namespace kiln::ir;

/// True if `e` cannot be negative: extents, non-negative constants, and sums, products, maxima and
/// selections of such (all i64; i64 overflow is not considered, an allocation that large fails anyway).
bool non_negative(const Expr& e) {
  switch (e->kind) {
    case ExprKind::Const: return e->as<ConstExpr>().i >= 0;
    case ExprKind::Dim: return true;
    case ExprKind::Binary: {
      const auto& b = e->as<BinaryExpr>();
      if (b.op == BinaryOp::Add || b.op == BinaryOp::Mul || b.op == BinaryOp::Min)
        return non_negative(b.a) && non_negative(b.b);
      if (b.op == BinaryOp::Max) return non_negative(b.a) || non_negative(b.b);
      return false;
    }
    case ExprKind::Select: return non_negative(e->as<SelectExpr>().a) && non_negative(e->as<SelectExpr>().b);
    default: return false;
  }
}

class Hoister {
 public:
  explicit Hoister(PassContext& ctx) : ctx_(ctx) {}

  /// The statements that replace `loop` (its body already done): the allocations hoisted out of a For,
  /// then the loop. A parfor keeps its allocations.
  std::vector<Stmt> hoist(const Stmt& loop) {
    const auto* f = dyn<ForStmt>(loop);
    if (!f) return {loop};
    return hoist(loop, *f);
  }

 private:
  PassContext& ctx_;

  std::vector<Stmt> hoist(const Stmt& loop, const ForStmt& f) {
    const Stmt& b = f.body;
    VarSet variant = loops::variant_in(b);
    variant.insert(f.index.get());
    std::vector<Stmt> out, kept;
    for (const auto& s : loops::statements(b)) {
      const auto* a = dyn<AllocateStmt>(s);
      bool invariant = a != nullptr;
      for (size_t d = 0; invariant && d < a->shape.size(); ++d) {
        invariant = !has_load(a->shape[d]);
        for (const Var& v : free_vars(a->shape[d])) invariant = invariant && !variant.count(v.get());
      }
      if (!invariant) {
        kept.push_back(s);
        continue;
      }
      std::vector<Expr> shape;
      for (const auto& e : a->shape)
        shape.push_back(non_negative(e) ? e : make_select(make_binary(BinaryOp::Lt, f.begin, f.end), e, make_i64(0)));
      out.push_back(make_allocate(a->array, std::move(shape)));
      variant.erase(a->array.get());
      ctx_.note(Topic::allocations, "hoisted the allocation of " + a->array->name + " (" + to_string(a->shape.front()) +
                                        (a->shape.size() > 1 ? ", ..." : "") + ") out of for " + f.index->name +
                                        ": one buffer for all iterations");
    }
    out.push_back(out.empty() ? loop : make_for(f.index, f.begin, f.end, make_block(std::move(kept))));
    return out;
  }
};

}  // namespace

ir::Function hoist_allocations(const ir::Function& f, PassContext& ctx) {
  Hoister h(ctx);
  ir::Function out = f;
  out.body = expand_loops(f.body, [&h](const ir::Stmt& loop) { return h.hoist(loop); });
  return out;
}

}  // namespace kiln::passes
