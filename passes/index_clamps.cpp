// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Clamps of a loop index. `min(max(k + c, lo), hi)` equals `k + c` exactly when lo <= k + c <= hi, that is
// when lo - c <= k < hi - c + 1; a chain of min/max in any order holds the same for all its bounds, and a
// clamp on one side only also needs `k + c` not to overflow on the other (MIN <= k + c <= MAX), which bounds
// k too. The bounds on k are computed here, before the loop. Integers wrap in kiln (ir/semantics.hpp), so
// `lo - c` and `hi - c + 1` are built to saturate at the i64 limits instead: a saturated bound excludes
// only values of k for which the clamp is active or `k + c` would overflow, so the range it gives is never
// too wide. A stencil clamps one bound at several constant offsets (`min(k - 1, hi)`, `min(k, hi)`,
// `min(k + 1, hi)`): of those only the tightest (k + 1 <= hi) is a bound of the range.
#include "passes/index_clamps.hpp"

#include <cstdint>
#include <limits>
#include <optional>
#include <utility>

#include "ir/analysis.hpp"
#include "ir/builder.hpp"
#include "ir/visitor.hpp"

namespace kiln::passes {
namespace {

using namespace kiln::ir;

// Parfor indices are i64 (ir/builder.cpp), and so are their clamps.
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

std::optional<std::int64_t> constant(const Expr& e) {
  if (const auto* c = dyn<ConstExpr>(e); c && c->type == DType::I64) return c->i;
  return std::nullopt;
}

/// `x - y` (op Sub) or `x + y` (op Add) for a y known only at run time, saturated to the i64 limits: exact
/// where the result is representable. x is first moved away from the limit the result would cross
/// (`max(x, MIN + y) - y` where y >= 0), so no step overflows; y's sign is tested once per row.
Expr saturated(BinaryOp op, const Expr& x, const Expr& y) {
  // Subtracting y >= 0 (or adding y < 0) moves toward MIN: x is raised to MIN + y (MIN - y) first.
  const BinaryOp back = op == BinaryOp::Add ? BinaryOp::Sub : BinaryOp::Add;
  auto guarded = [&](bool y_nonneg) {
    const bool down = (op == BinaryOp::Sub) == y_nonneg;
    const Expr edge = make_binary(back, make_i64(down ? kMin : kMax), y);
    return make_binary(down ? BinaryOp::Max : BinaryOp::Min, x, edge);
  };
  return make_binary(op, make_select(make_binary(BinaryOp::Ge, y, make_i64(0)), guarded(true), guarded(false)), y);
}

/// `x + k` saturated to the i64 limits, for a constant k that may lie outside them (|k| <= 2^63 + 1: the
/// negation of an offset, plus one): x is first moved away from the limit the sum would cross; the
/// addition then wraps to the exact sum, which is inside the limits.
Expr shifted(const Expr& x, __int128 k) {
  if (const auto cx = constant(x)) {
    const __int128 r = *cx + k;
    return make_i64(static_cast<std::int64_t>(r < kMin ? kMin : r > kMax ? kMax : r));
  }
  if (k == 0) return x;
  const auto edge = static_cast<std::int64_t>(k > 0 ? kMax - k : kMin - k);  // inside the limits for every such k
  const Expr kept = make_binary(k > 0 ? BinaryOp::Min : BinaryOp::Max, x, make_i64(edge));
  if (k < 0 && -k <= kMax) return make_binary(BinaryOp::Sub, kept, make_i64(static_cast<std::int64_t>(-k)));
  return make_binary(BinaryOp::Add, kept, make_i64(static_cast<std::int64_t>(static_cast<std::uint64_t>(static_cast<unsigned __int128>(k)))));
}

/// One clamp: its plain term `index + offset` (`index - offset` when `minus`; the index alone when offset
/// is null) and the bounds of the min (highs) and max (lows) around it.
struct Clamp {
  Expr plain, offset;
  bool minus = false;
  std::vector<Expr> lows, highs;
};

class Unclamp : public IRMutator {
 public:
  Unclamp(const Var& index, const std::function<bool(const Expr&)>& invariant) : index_(index), invariant_(invariant) {}

  std::vector<Expr> lower, upper;
  bool found = false;

 protected:
  using IRMutator::visit;

  Expr visit(const BinaryExpr& e, const Expr& self) override {
    if (e.op == BinaryOp::Min || e.op == BinaryOp::Max) {
      Clamp c;
      if (chain(self, c)) {
        record(c);
        return c.plain;
      }
    }
    return IRMutator::visit(e, self);
  }

 private:
  const Var& index_;
  const std::function<bool(const Expr&)>& invariant_;

  bool is_index(const Expr& e) const {
    const auto* v = dyn<VarRefExpr>(e);
    return v && v->var.get() == index_.get();
  }

  /// `index`, `index + d`, `d + index` or `index - d` with d invariant.
  bool plain_term(const Expr& e, Clamp& c) const {
    if (is_index(e)) {
      c.plain = e;
      return true;
    }
    const auto* b = dyn<BinaryExpr>(e);
    if (!b || b->type != DType::I64) return false;
    if (b->op == BinaryOp::Add || b->op == BinaryOp::Sub) {
      const bool index_first = is_index(b->a);
      const Expr& d = index_first ? b->b : b->a;
      if ((index_first || (b->op == BinaryOp::Add && is_index(b->b))) && invariant_(d)) {
        c.plain = e;
        c.offset = d;
        c.minus = b->op == BinaryOp::Sub;
        return true;
      }
    }
    return false;
  }

  /// A plain term under any number of min (max) with an invariant other operand; `c` changes only on success.
  bool chain(const Expr& e, Clamp& c) const {
    if (invariant_(e)) return false;  // no index inside; also keeps the search linear in the depth
    const auto* b = dyn<BinaryExpr>(e);
    if (!b || (b->op != BinaryOp::Min && b->op != BinaryOp::Max)) return plain_term(e, c);
    if (b->type != DType::I64) return false;
    for (const auto& [inner, bound] : {std::pair{b->a, b->b}, std::pair{b->b, b->a}})
      if (invariant_(bound) && chain(inner, c)) {
        (b->op == BinaryOp::Min ? c.highs : c.lows).push_back(bound);
        return true;
      }
    return false;
  }

  /// lo <= index + c  <=>  index >= lo - c;  index + c <= hi  <=>  index < hi - c + 1. A constant c is kept
  /// with its bound (the bounds are built in `finish`); another is built here.
  void record(Clamp c) {
    found = true;
    // `index + c` must not overflow either: a clamp with no upper bound is as one with hi = MAX (and one
    // with no lower bound as lo = MIN). For the usual `min(k + 1, hi)` and `max(k - 1, lo)` that bound
    // saturates and is dropped.
    if (c.lows.empty()) c.lows.push_back(make_i64(kMin));
    if (c.highs.empty()) c.highs.push_back(make_i64(kMax));
    std::optional<__int128> k;  // the constant c of index + c (-d for index - d, which may be 2^63)
    if (!c.offset) k = 0;
    else if (const auto d = constant(c.offset)) k = c.minus ? -static_cast<__int128>(*d) : static_cast<__int128>(*d);
    if (k) {
      for (const auto& lo : c.lows) tightest(lows_, lo, *k, /*largest=*/false);
      for (const auto& hi : c.highs) tightest(highs_, hi, *k, /*largest=*/true);
      return;
    }
    const BinaryOp undo = c.minus ? BinaryOp::Add : BinaryOp::Sub;
    for (const auto& lo : c.lows) add(lower, saturated(undo, lo, c.offset), BinaryOp::Max);
    // hi - c + 1 is `hi undo (d - 1)` for index + d, `hi undo (d + 1)` for index - d. d - 1 wraps to MAX
    // at d = MIN (d + 1 to MIN at d = MAX), which makes the bound 2^64 smaller than exact before it
    // saturates: a range narrower than exact, never wider.
    const Expr d_less = make_binary(c.minus ? BinaryOp::Add : BinaryOp::Sub, c.offset, make_i64(1));
    for (const auto& hi : c.highs) add(upper, saturated(undo, hi, d_less), BinaryOp::Min);
  }

 public:
  /// Adds the bounds of the clamps with constant offsets to `lower` and `upper`.
  void finish() {
    for (const auto& [lo, c] : lows_) add(lower, shifted(lo, -c), BinaryOp::Max);
    for (const auto& [hi, c] : highs_) add(upper, shifted(hi, 1 - c), BinaryOp::Min);
  }

 private:
  /// Each bound of a constant-offset clamp with the offset that makes it tightest.
  std::vector<std::pair<Expr, __int128>> lows_, highs_;

  static void tightest(std::vector<std::pair<Expr, __int128>>& bounds, const Expr& bound, __int128 c, bool largest) {
    for (auto& [x, k] : bounds)
      if (equal(x, bound)) {
        k = largest ? std::max(k, c) : std::min(k, c);
        return;
      }
    bounds.emplace_back(bound, c);
  }

  /// Adds a bound unless an equal one is there, or it holds for every index (index >= MIN, index < MAX:
  /// a loop's end is at most MAX); constant bounds are kept as one, the tightest (`keep`).
  static void add(std::vector<Expr>& bounds, const Expr& x, BinaryOp keep) {
    const auto cx = constant(x);
    if (cx && *cx == (keep == BinaryOp::Max ? kMin : kMax)) return;
    for (auto& y : bounds) {
      if (equal(x, y)) return;
      if (const auto cy = constant(y); cx && cy) {
        if (keep == BinaryOp::Max ? *cx > *cy : *cx < *cy) y = x;
        return;
      }
    }
    bounds.push_back(x);
  }
};

}  // namespace

IndexClamps find_index_clamps(const Stmt& body, const Var& index, const std::function<bool(const Expr&)>& invariant) {
  if (index->type.elem != DType::I64) return {};
  Unclamp u(index, invariant);
  Stmt plain = u.mutate(body);
  if (!u.found) return {};
  u.finish();
  return {std::move(plain), std::move(u.lower), std::move(u.upper)};
}

}  // namespace kiln::passes
