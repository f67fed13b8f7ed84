// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Loop partitioning. lower_stencils writes a stencil as one parfor over the whole space whose body tests
// whether the position is inside the interior (`if (a <= j && j < b) plain else remapped`): a per-element
// branch that would keep the loop from vectorizing, or make the vectorizer run both arms. Here the range
// [begin, end) of the innermost index is cut at the bounds of such tests into loops whose bodies no longer
// test anything, and a test of values that do not change in the loop (the row's own test) is decided once,
// around the loops. A clamp of the index (`min(max(k - 1, 0), n - 1)`, a user's stencil that stays inside
// the array) is a test too: where no clamp is active the middle loop reads `k - 1`, an affine subscript
// (contiguous vector loads instead of a gather per read; passes/index_clamps.hpp), and the rims keep the
// clamps. Clamps are cut at only when no test is left to cut at. The loops are parfors: their iterations are the original parfor's, independent, so the
// CPU backend marks each one parallel (llvm.loop.parallel_accesses) and vectorizes it without alias checks.
// The pass runs for the targets whose loops run on the host: the CUDA backend maps a stencil's parfor onto
// a grid of threads (codegen/cuda/emit_stencil.cpp), where a per-element test costs little and a parfor per
// band would cost a launch each.
#include "passes/partition_loops.hpp"

#include <unordered_set>

#include "ir/analysis.hpp"
#include "ir/builder.hpp"
#include "ir/substitute.hpp"
#include "ir/straight_line.hpp"
#include "ir/visitor.hpp"
#include "passes/index_clamps.hpp"

namespace kiln::passes {
namespace {

using namespace kiln::ir;

// A 4-d stencil needs 6 loops (an else-arm loop for each outer axis and 3 for the innermost); beyond this
// the code growth is not worth it and the rest runs as one loop.
constexpr int kMaxLoops = 8;

/// `stmts` with statement k replaced by `with` (dropped when null), as one block.
Stmt replaced(const std::vector<Stmt>& stmts, size_t k, const Stmt& with) {
  std::vector<Stmt> out;
  for (size_t i = 0; i < stmts.size(); ++i) {
    if (i != k) out.push_back(stmts[i]);
    else if (with) out.push_back(with);
  }
  return make_block(std::move(out));
}

/// What a condition says about the loop index: `index >= lower[k]` for every k, `index < upper[k]` for every
/// k, and `rest` (the terms that do not depend on the index; null when there are none).
struct IndexRange {
  std::vector<Expr> lower, upper;
  Expr rest;
};

/// Cuts the innermost dimension of one parfor.
class Partition {
 public:
  Partition(const ParforStmt& p, std::string& log) : p_(p), index_(p.indices.back()), log_(log) {
    for (const Var& v : free_vars(p.body)) outside_.insert(v.get());
    for (const VarNode* v : assigned_vars(p.body)) outside_.erase(v);
    outside_.erase(index_.get());
  }

  /// The statements running `s` over [from, to) of the index, `room` loops at most (one if nothing splits);
  /// `loops` counts the loops made. A `sequential` loop is a for loop (run inline in the enclosing
  /// parfor's chunk, as the nested parfors are).
  Stmt run(const Stmt& s, const Expr& from, const Expr& to, int room, bool sequential = false) {
    std::vector<Stmt> stmts;
    straight_line(s, stmts);
    for (size_t k = 0; k < stmts.size() && room > 1; ++k) {
      const auto* branch = dyn<IfStmt>(stmts[k]);
      if (!branch) continue;
      const Stmt then_version = replaced(stmts, k, branch->then_body);
      const Stmt else_version = replaced(stmts, k, branch->else_body);
      if (invariant(branch->cond)) {
        // Decided once: the loops of each arm.
        note("a test fixed in the loop decided around it");
        Stmt then_loops = run(then_version, from, to, room - 1);
        return make_if(branch->cond, then_loops, run(else_version, from, to, 1));
      }
      IndexRange r;
      if (!range_of(branch->cond, r)) continue;
      const int n = sides(r.lower, r.upper);
      if (n == 0 || room < n + 1) continue;
      // [from, mid_lo) fails a lower bound, [mid_hi, to) an upper bound, [mid_lo, mid_hi) only tests `rest`.
      const Stmt middle = r.rest ? replaced(stmts, k, make_if(r.rest, branch->then_body, branch->else_body)) : then_version;
      note("cut at a test of " + index_->name);
      return cut(else_version, middle, r.lower, r.upper, from, to, room);
    }
    // No test to cut at: the range where the clamps of the index are inactive runs them as plain `index + c`
    // (affine subscripts: contiguous vector loads instead of gathers), the rims run the body as it is.
    // Inside an outer dimension the rims are sequential loops, which LLVM keeps scalar (their accesses are
    // not affine, and no parallel_accesses vouches for them): a stencil's rim is an element or two of a
    // row, and vectorized each would be gathers, compile time for nothing (a 27-point stencil's parfor
    // rims held 110 masked gathers). A 1-d parfor's rims stay parallel loops: they may be long.
    if (room > 1) {
      IndexClamps c = find_index_clamps(s, index_, [this](const Expr& e) { return invariant(e); });
      // A constant lower bound that the range's constant start meets needs no rim (`min(j - 1, hi)` must
      // not wrap below MIN, which an index from 0 cannot).
      if (const auto* start = dyn<ConstExpr>(from))
        std::erase_if(c.lower, [&](const Expr& x) {
          const auto* k = dyn<ConstExpr>(x);
          return k && k->i <= start->i;
        });
      if (c.plain && room >= sides(c.lower, c.upper) + 1) {
        note("cut at a clamp of " + index_->name);
        return cut(s, c.plain, c.lower, c.upper, from, to, room, p_.indices.size() > 1);
      }
    }
    ++loops;
    // Each loop has its own index and its own copies of the body's variables: none is defined twice.
    const Var j = make_var(index_->name, index_->type, VarKind::Index, index_->where);
    Renamer rename;
    rename.vars[index_.get()] = j;
    // Inside an outer dimension, a loop that reads at clamps of its index and selects by a test of it (a
    // constant border's rows: `select(0 <= j + c && j + c < n, a[.., clamp(j + c)], cval)`, the else arm of
    // the row's test) is sequential, as the rims are: vectorized, each read would be a gather whose value the
    // test may discard, on O(surface) work (conv5x5's border rows: 428 -> 480 million instructions of code
    // generation with their vector loops). A loop that only clamps (a nearest border) is left as it was.
    if (!sequential && reads_at_clamps(s) && selects_by_index(s)) {
      note("a loop reading at clamps of " + index_->name + " and selecting by it kept sequential");
      sequential = true;
    }
    if (sequential) return make_for(j, from, to, fresh_copy(rename.mutate(s)));
    return make_parfor({j}, {from}, {to}, fresh_copy(rename.mutate(s)), {}, p_.origin);
  }

  int loops = 0;

 private:
  const ParforStmt& p_;
  Var index_;
  std::unordered_set<const VarNode*> outside_;
  std::string& log_;

  static int sides(const std::vector<Expr>& lower, const std::vector<Expr>& upper) {
    return (lower.empty() ? 0 : 1) + (upper.empty() ? 0 : 1);
  }

  /// [from, mid_lo) and [mid_hi, to) run `rim`, [mid_lo, mid_hi) runs `middle` (cut further with the room
  /// left), where mid_lo is the largest of `from` and `lower`, mid_hi the smallest of `to` and `upper`; a
  /// side without bounds has no rim. Each range is empty or inside [from, to), whatever the bounds. With
  /// sequential rims the middle starts at mid_lo even past `to` (then it is empty, and so is the high rim,
  /// a for loop whose start is past its end): for a stencil that start is a constant, and LLVM's loop
  /// strength reduction took twice as long on the middle's loops with a start of `min(1, n)`.
  /// The bounds are expressions, not variables: the CPU backend computes the work of a row from the
  /// nested loops' trip counts before the parfor (work_estimate), which needs bounds it can evaluate there.
  Stmt cut(const Stmt& rim, const Stmt& middle, const std::vector<Expr>& lower, const std::vector<Expr>& upper,
           const Expr& from, const Expr& to, int room, bool sequential_rims = false) {
    Expr mid_lo = from;
    for (const auto& x : lower) mid_lo = make_binary(BinaryOp::Max, mid_lo, x);
    const Expr low_end = make_binary(BinaryOp::Min, mid_lo, to);
    if (!sequential_rims) mid_lo = low_end;
    Expr mid_hi = to;
    for (const auto& y : upper) mid_hi = make_binary(BinaryOp::Min, mid_hi, y);
    mid_hi = make_binary(BinaryOp::Max, mid_hi, mid_lo);
    std::vector<Stmt> out;
    if (!lower.empty() && !upper.empty() && (sequential_rims || reads_at_clamps(rim))) {
      out.push_back(run(middle, mid_lo, mid_hi, room - 2));
      out.push_back(both_rims(rim, from, low_end, mid_hi, to));
      return make_block(std::move(out));
    }
    if (!lower.empty()) out.push_back(run(rim, from, low_end, 1, sequential_rims));
    out.push_back(run(middle, mid_lo, mid_hi, room - sides(lower, upper)));
    if (!upper.empty()) out.push_back(run(rim, mid_hi, to, 1, sequential_rims));
    return make_block(std::move(out));
  }

  /// Sequential rims on both sides as one loop: `for t in 0 .. low + high` with the index `from + t` for the
  /// first `low = max(low_end - from, 0)` trips and `high_begin + (t - low)` for the next `high = max(to -
  /// high_begin, 0)`. The iterations are the parfor's, independent, so their order is free; the body is
  /// copied once instead of twice (conv5x5's 25 taps with their border reads), and the loop's trip count
  /// stays bounded by the two rims' widths (codegen/llvm/trip_bound.hpp: neither vectorized nor unrolled).
  Stmt both_rims(const Stmt& rim, const Expr& from, const Expr& low_end, const Expr& high_begin, const Expr& to) {
    ++loops;
    note("both rims of " + index_->name + " in one loop");
    const Expr zero = make_i64(0);
    const Expr low = make_binary(BinaryOp::Max, make_binary(BinaryOp::Sub, low_end, from), zero);
    const Expr high = make_binary(BinaryOp::Max, make_binary(BinaryOp::Sub, to, high_begin), zero);
    const Var t = make_var(index_->name + "_rim", index_->type, VarKind::Index, index_->where);
    const Var j = make_var(index_->name, index_->type, VarKind::Local, index_->where);
    const Expr at = make_select(make_binary(BinaryOp::Lt, make_ref(t), low), make_binary(BinaryOp::Add, from, make_ref(t)),
                                make_binary(BinaryOp::Add, high_begin, make_binary(BinaryOp::Sub, make_ref(t), low)));
    Renamer rename;
    rename.vars[index_.get()] = j;
    return make_for(t, zero, make_binary(BinaryOp::Add, low, high), make_block({make_let(j, at), fresh_copy(rename.mutate(rim))}));
  }

  /// Inside an outer dimension, whether `s` reads at clamps of the index: its loop stays scalar (a rim).
  bool reads_at_clamps(const Stmt& s) const {
    return p_.indices.size() > 1 && find_index_clamps(s, index_, [this](const Expr& e) { return invariant(e); }).plain != nullptr;
  }

  /// Whether `s` has a select whose condition tests the index.
  bool selects_by_index(const Stmt& s) const {
    struct Finder : IRVisitor {
      const VarNode* index = nullptr;
      bool found = false;
      using IRVisitor::visit;
      void visit(const SelectExpr& e) override {
        found = found || uses(e.cond, index);
        IRVisitor::visit(e);
      }
    } f;
    f.index = index_.get();
    f.walk(s);
    return f.found;
  }

  void note(const std::string& what) {
    if (log_.find(what) == std::string::npos) log_ += (log_.empty() ? "" : "; ") + what;
  }

  /// True if `e` can be evaluated before the loop with the value it has in every iteration: no loads, and
  /// only variables defined outside the body and never assigned in it.
  bool invariant(const Expr& e) const {
    if (has_load(e)) return false;
    for (const Var& v : free_vars(e))
      if (!outside_.count(v.get())) return false;
    return true;
  }

  /// Splits a conjunction into bounds on the index and invariant terms; false if some term is neither.
  bool range_of(const Expr& cond, IndexRange& r) const {
    if (const auto* b = dyn<BinaryExpr>(cond); b && b->op == BinaryOp::And && b->type == DType::Bool)
      return range_of(b->a, r) && range_of(b->b, r);
    if (invariant(cond)) {
      r.rest = r.rest ? make_binary(BinaryOp::And, r.rest, cond) : cond;
      return true;
    }
    const auto* b = dyn<BinaryExpr>(cond);
    if (!b) return false;
    auto is_index = [&](const Expr& x) {
      const auto* v = dyn<VarRefExpr>(x);
      return v && v->var.get() == index_.get();
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
};

class Partitioner : public IRMutator {
 public:
  explicit Partitioner(PassContext& ctx) : ctx_(ctx) {}

 protected:
  using IRMutator::visit;
  PassContext& ctx_;

  Stmt visit(const ParforStmt& s, const Stmt& self) override {
    const Stmt inner = IRMutator::visit(s, self);  // nested parfors first
    const auto& p = inner->as<ParforStmt>();
    // A reduction's partial results would be folded per loop, in another order than the parfor's.
    if (!p.reductions.empty() || !p.array_reductions.empty()) return inner;
    std::string log;
    Partition cut(p, log);
    const size_t d = p.indices.size() - 1;
    Stmt loops = cut.run(p.body, p.begins[d], p.ends[d], kMaxLoops);
    if (cut.loops <= 1) return inner;
    ctx_.note(Topic::other, "partition_loops: " + (p.origin.empty() ? std::string("parfor") : p.origin) + " -> " +
                                std::to_string(cut.loops) + " loops over " + p.indices[d]->name + " (" + log + ")");
    if (d == 0) return loops;
    std::vector<Var> indices(p.indices.begin(), p.indices.end() - 1);
    std::vector<Expr> begins(p.begins.begin(), p.begins.end() - 1), ends(p.ends.begin(), p.ends.end() - 1);
    return make_parfor(std::move(indices), std::move(begins), std::move(ends), loops, {}, p.origin);
  }
};

}  // namespace

ir::Function partition_loops(const ir::Function& f, PassContext& ctx) {
  Partitioner p(ctx);
  return p.mutate(f);
}

}  // namespace kiln::passes
