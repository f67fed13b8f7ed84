// The innermost loop of a parfor chunk, split where its body branches on the loop index or on values fixed
// for the whole loop. lower_stencils writes a stencil as one parfor over the whole space whose body tests
// whether the position is inside the interior (`if (a <= j && j < b) plain else remapped`): a per-element
// branch that would keep the loop from vectorizing, or make the vectorizer run both arms. Here the range
// [lo, hi) is cut at the bounds of such tests into loops whose bodies no longer test anything, and a test of
// values that do not change in the loop (the row's own test) is decided once before the loop. Every loop
// covers a sub-range of the parfor's iterations, in order, so each keeps the parfor's parallel marking and
// the results are those of the unsplit loop.
#include <algorithm>
#include <unordered_set>

#include "codegen/llvm/emitter.hpp"
#include "ir/analysis.hpp"
#include "ir/builder.hpp"

namespace kiln::codegen::cpu::detail {
namespace {

// A 4-d stencil needs 6 loops (an else-arm loop for each outer axis and 3 for the innermost); beyond this
// the code growth is not worth it and the rest runs as one loop.
constexpr int kMaxSplitLoops = 8;

/// The statements of `s` in order, nested blocks flattened.
void flatten(const ir::Stmt& s, std::vector<ir::Stmt>& out) {
  if (!s) return;
  if (const auto* b = ir::dyn<ir::BlockStmt>(s)) {
    for (const auto& x : b->stmts) flatten(x, out);
    return;
  }
  out.push_back(s);
}

/// What a condition says about the loop index: `index >= lower[k]` for every k, `index < upper[k]` for every
/// k, and `rest` (the terms that do not depend on the index; null when there are none).
struct IndexRange {
  std::vector<ir::Expr> lower, upper;
  ir::Expr rest;
};

class Splitter {
 public:
  Splitter(const ir::Var& index, const ir::Stmt& body) : index_(index.get()) {
    for (const ir::Var& v : ir::free_vars(body)) outside_.insert(v.get());
    for (const ir::VarNode* v : ir::assigned_vars(body)) outside_.erase(v);
    outside_.erase(index_);
  }

  /// True if `e` can be evaluated before the loop with the value it has in every iteration: no loads, and
  /// only variables defined outside the body and never assigned in it.
  bool invariant(const ir::Expr& e) const {
    if (ir::has_load(e)) return false;
    for (const ir::Var& v : ir::free_vars(e))
      if (!outside_.count(v.get())) return false;
    return true;
  }

  /// Splits a conjunction into bounds on the index and invariant terms; false if some term is neither.
  bool range_of(const ir::Expr& cond, IndexRange& r) const {
    if (const auto* b = ir::dyn<ir::BinaryExpr>(cond); b && b->op == BinaryOp::And && b->type == DType::Bool)
      return range_of(b->a, r) && range_of(b->b, r);
    if (invariant(cond)) {
      r.rest = r.rest ? ir::make_binary(BinaryOp::And, r.rest, cond) : cond;
      return true;
    }
    const auto* b = ir::dyn<ir::BinaryExpr>(cond);
    if (!b) return false;
    auto is_index = [&](const ir::Expr& x) {
      const auto* v = ir::dyn<ir::VarRefExpr>(x);
      return v && v->var.get() == index_;
    };
    // x <= i, i >= x: a lower bound; i < y, y > i: an upper bound.
    if ((b->op == BinaryOp::Le && is_index(b->b) && invariant(b->a)) || (b->op == BinaryOp::Ge && is_index(b->a) && invariant(b->b))) {
      r.lower.push_back(b->op == BinaryOp::Le ? b->a : b->b);
      return true;
    }
    if ((b->op == BinaryOp::Lt && is_index(b->a) && invariant(b->b)) || (b->op == BinaryOp::Gt && is_index(b->b) && invariant(b->a))) {
      r.upper.push_back(b->op == BinaryOp::Lt ? b->b : b->a);
      return true;
    }
    return false;
  }

 private:
  const ir::VarNode* index_;
  std::unordered_set<const ir::VarNode*> outside_;
};

/// `stmts` with statement k replaced by `with` (dropped when null), as one block.
ir::Stmt replaced(const std::vector<ir::Stmt>& stmts, size_t k, const ir::Stmt& with) {
  std::vector<ir::Stmt> out;
  for (size_t i = 0; i < stmts.size(); ++i) {
    if (i != k) out.push_back(stmts[i]);
    else if (with) out.push_back(with);
  }
  return ir::make_block(std::move(out));
}

/// True if an iteration of `s` updates a scalar that the next one reads: a reduction's accumulator.
/// Only such loops are left to LLVM's interleaving, whose several accumulators hide the add latency. A
/// loop without one is a stream of independent elements, where interleaving only adds vectors in flight:
/// on the 2-core znver4 VM with huge-page arrays, triad ran 1.04-1.15x the hand-written loop (GCC does not
/// interleave) with LLVM's 4 vectors per iteration, 1.10-1.16x with 2 and 1.00-1.03x with 1 (three runs each).
bool carries_scalars(const ir::Stmt& s) {
  const ir::VarSet assigned = ir::assigned_vars(s);
  for (const ir::Var& v : ir::free_vars(s))
    if (assigned.count(v.get())) return true;
  return false;
}

}  // namespace

std::int64_t iteration_work(const ir::Stmt& s) {
  std::int64_t n = 0;
  std::vector<ir::Stmt> stmts;
  flatten(s, stmts);
  for (const auto& x : stmts) {
    const auto* branch = ir::dyn<ir::IfStmt>(x);
    if (!branch) {
      n += static_cast<std::int64_t>(ir::node_count(x));
      continue;
    }
    const std::int64_t then_work = iteration_work(branch->then_body);
    const std::int64_t else_work = branch->else_body ? iteration_work(branch->else_body) : 0;
    n += 1 + static_cast<std::int64_t>(ir::node_count(branch->cond)) + std::max(then_work, else_work);
  }
  return n;
}

void Emitter::innermost_loops(const ir::Var& index, llvm::Value* lo, llvm::Value* hi, const ir::Stmt& body,
                              const std::function<void(llvm::Value*, llvm::MDNode*, const ir::Stmt&)>& iteration) {
  const Splitter split(index, body);
  // Emits the loops for `s` over [from, to), `room` loops at most (one if nothing is split).
  std::function<void(const ir::Stmt&, llvm::Value*, llvm::Value*, int)> emit = [&](const ir::Stmt& s, llvm::Value* from,
                                                                                    llvm::Value* to, int room) {
    std::vector<ir::Stmt> stmts;
    flatten(s, stmts);
    for (size_t k = 0; k < stmts.size() && room > 1; ++k) {
      const auto* branch = ir::dyn<ir::IfStmt>(stmts[k]);
      if (!branch) continue;
      const ir::Stmt then_version = replaced(stmts, k, branch->then_body);
      const ir::Stmt else_version = replaced(stmts, k, branch->else_body);
      if (split.invariant(branch->cond)) {
        // Decided once: a loop nest for each arm.
        auto* then_bb = llvm::BasicBlock::Create(ctx_, "split.then", fs_->fn);
        auto* else_bb = llvm::BasicBlock::Create(ctx_, "split.else", fs_->fn);
        auto* join = llvm::BasicBlock::Create(ctx_, "split.end", fs_->fn);
        b_.CreateCondBr(expr(branch->cond), then_bb, else_bb);
        b_.SetInsertPoint(then_bb);
        emit(then_version, from, to, room - 1);
        b_.CreateBr(join);
        b_.SetInsertPoint(else_bb);
        emit(else_version, from, to, 1);
        b_.CreateBr(join);
        b_.SetInsertPoint(join);
        return;
      }
      IndexRange r;
      if (!split.range_of(branch->cond, r)) continue;
      const int sides = (r.lower.empty() ? 0 : 1) + (r.upper.empty() ? 0 : 1);
      if (sides == 0 || room < sides + 1) continue;
      // [from, mid_lo) fails a lower bound, [mid_hi, to) an upper bound, [mid_lo, mid_hi) only tests `rest`;
      // each range is empty or inside [from, to), whatever the bounds.
      llvm::Value* mid_lo = from;
      for (const auto& x : r.lower) mid_lo = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, mid_lo, expr(x));
      mid_lo = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, mid_lo, to);
      llvm::Value* mid_hi = to;
      for (const auto& y : r.upper) mid_hi = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, mid_hi, expr(y));
      mid_hi = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, mid_hi, mid_lo);
      const ir::Stmt middle = r.rest ? replaced(stmts, k, ir::make_if(r.rest, branch->then_body, branch->else_body)) : then_version;
      if (!r.lower.empty()) emit(else_version, from, mid_lo, 1);
      emit(middle, mid_lo, mid_hi, room - sides);
      if (!r.upper.empty()) emit(else_version, mid_hi, to, 1);
      return;
    }
    llvm::MDNode* group = llvm::MDNode::getDistinct(ctx_, {});
    loop(from, to, index->name, group, [&](llvm::Value* i) { iteration(i, group, s); }, !carries_scalars(s));
  };
  emit(body, lo, hi, kMaxSplitLoops);
}

}  // namespace kiln::codegen::cpu::detail
