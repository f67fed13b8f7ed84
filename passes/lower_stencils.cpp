// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Stencil lowering. The interpreter answers every out-of-range window read through border_index; compiled
// code cannot afford a test per read. The index space is cut along each dimension into a low band, the
// interior and a high band (passes/lower_stencils.hpp), tested per position inside one parfor. In the interior every read `w[i + c]` with c in the
// declared neighbourhood is in range by construction, so it stays a plain load and the innermost loop
// vectorizes. Only the bands (O(surface) work) remap indices, and only on the sides a constant offset can
// leave: `w[i - 1]` can fall below 0 but never past the end. Reads of other shapes (an index of another
// dimension, a computed index) are remapped everywhere, which is exact for any position the size check
// admits.
#include "passes/lower_stencils.hpp"

#include <algorithm>
#include <optional>
#include <unordered_set>

#include <fmt/format.h>

#include "ir/analysis.hpp"
#include "ir/builder.hpp"
#include "ir/ops.hpp"
#include "ir/printer.hpp"
#include "ir/substitute.hpp"
#include "ir/visitor.hpp"
#include "kiln/abi.hpp"
#include "kiln/error.hpp"
#include "passes/extent_facts.hpp"
#include "passes/loop_analysis.hpp"
#include "passes/statement_lists.hpp"

namespace kiln::passes {
namespace {

using namespace kiln::ir;

Expr i64c(std::int64_t v) { return make_i64(v); }
Expr bin(BinaryOp op, Expr a, Expr b) { return make_binary(op, std::move(a), std::move(b)); }


/// True if `e` is `index + x` or `x + index` with x the same for every element (no index of `indices`).
bool plus_index(const Expr& e, const VarNode* index, const std::vector<Var>& indices) {
  const auto* b = dyn<BinaryExpr>(e);
  if (!b || b->op != BinaryOp::Add) return false;
  auto is_index = [&](const Expr& x) {
    const auto* r = dyn<VarRefExpr>(x);
    return r && r->var.get() == index;
  };
  const Expr x = is_index(b->a) ? b->b : is_index(b->b) ? b->a : nullptr;
  if (!x) return false;
  for (const auto& i : indices)
    if (uses(x, i.get())) return false;
  return true;
}

/// Rewrites the window reads of a stencil's value for one of its parfors. `interior[k]` says that the
/// parfor's index k stays within [-lo_k, n_k - hi_k), so declared offsets along k are in range.
class WindowReads : public IRMutator {
 public:
  WindowReads(const StencilStmt& st, std::vector<bool> interior, bool read_first)
      : st_(st), interior_(std::move(interior)), read_first_(read_first) {
    for (const auto& w : st.windows) windows_.insert(w.get());
  }

  /// With `read_first` (host targets), a constant border's remapped reads as lets that element() places
  /// before the store: `let v = w[clamped]` and `select(inside, v, cval)`. The clamped index is inside the
  /// window, whose extents are the space's (size_checks), and an element exists only where every extent is
  /// at least 1, so the load is in range wherever it runs, and read unconditionally the select has no load
  /// left in its operands: the CPU backend emits it as a select instead of a branch around the load (a
  /// branch per tap in each border loop: three copies of conv5x5's 25 taps). Only reads whose index has no
  /// load of its own are taken out: such an index may be in range only under the condition around it.
  std::vector<Stmt> lets;

 protected:
  using IRMutator::visit;
  const StencilStmt& st_;
  std::vector<bool> interior_;
  bool read_first_;
  std::unordered_set<const VarNode*> windows_;

  Expr visit(const LoadExpr& l, const Expr& self) override {
    std::vector<Expr> idx;
    const bool changed = mutate_all(l.indices, idx);
    if (!windows_.count(l.array.get())) return changed ? make_load(l.array, std::move(idx)) : self;
    Expr inside;  // constant border: the conjunction of the in-range tests
    bool remapped = false;
    for (size_t k = 0; k < idx.size(); ++k) {
      bool low = true, high = true;  // the sides on which the read may leave the array
      // `i + e` with e computed (a uniform or clamped offset): the IR promises e within [lo, hi].
      if (interior_[k] && plus_index(l.indices[k], st_.indices[k].get(), st_.indices)) continue;
      if (const auto c = index_offset(l.indices[k], st_.indices[k].get())) {
        if (*c == 0 || (interior_[k] && *c >= st_.lo[k] && *c <= st_.hi[k])) continue;
        low = *c < 0;
        high = *c > 0;
      }
      remapped = true;
      const Expr q = idx[k];
      const Expr n = make_dim(l.array, static_cast<int>(k));
      const Expr below = bin(BinaryOp::Lt, q, i64c(0)), beyond = bin(BinaryOp::Ge, q, n);
      Expr r = q;
      switch (st_.border) {
        case Border::constant:
        case Border::nearest:
        case Border::skip:  // skipped positions are not computed; a computed index reads as nearest would
          if (high) r = bin(BinaryOp::Min, r, bin(BinaryOp::Sub, n, i64c(1)));
          if (low) r = bin(BinaryOp::Max, r, i64c(0));
          if (st_.border == Border::constant) {
            Expr test;
            if (low) test = bin(BinaryOp::Ge, q, i64c(0));
            if (high) {
              const Expr t = bin(BinaryOp::Lt, q, n);
              test = test ? bin(BinaryOp::And, test, t) : t;
            }
            inside = inside ? bin(BinaryOp::And, inside, test) : test;
          }
          break;
        case Border::wrap:
          if (high) r = make_select(beyond, bin(BinaryOp::Sub, q, n), r);
          if (low) r = make_select(below, bin(BinaryOp::Add, q, n), r);
          break;
        case Border::reflect:  // -q - 1 below, 2n - q - 1 beyond
          if (high) r = make_select(beyond, bin(BinaryOp::Sub, bin(BinaryOp::Sub, bin(BinaryOp::Add, n, n), q), i64c(1)), r);
          if (low) r = make_select(below, bin(BinaryOp::Sub, i64c(-1), q), r);
          break;
        case Border::mirror:  // -q below, 2n - 2 - q beyond
          if (high) r = make_select(beyond, bin(BinaryOp::Sub, bin(BinaryOp::Sub, bin(BinaryOp::Add, n, n), i64c(2)), q), r);
          if (low) r = make_select(below, make_unary(UnaryOp::Neg, q), r);
          break;
      }
      idx[k] = r;
    }
    if (!remapped && !changed) return self;
    const bool read_first = inside && read_first_ && std::none_of(idx.begin(), idx.end(), [](const Expr& q) { return has_load(q); });
    Expr load = make_load(l.array, std::move(idx));
    if (!inside) return load;
    if (!read_first) return make_select(inside, load, st_.cval);
    const Var v = make_var(l.array->name + "_read", Type::scalar(self->type), VarKind::Local);
    lets.push_back(make_let(v, std::move(load)));
    return make_select(inside, make_ref(v), st_.cval);
  }
};

/// True if `e` is cheap and has no effects: it may be repeated in every parfor bound.
bool trivial(const Expr& e) { return dyn<ConstExpr>(e) || dyn<VarRefExpr>(e) || dyn<DimExpr>(e); }

class Lowering : public SplicingMutator {
 public:
  explicit Lowering(PassContext& ctx) : ctx_(ctx) {}

 protected:
  using SplicingMutator::visit;
  PassContext& ctx_;
  int count_ = 0;
  ExtentFacts facts_;  ///< what the statements before the one being lowered established

  // A lowered stencil is spliced into its block: what it declares (its target) must stay visible to the
  // statements after it. The facts of a block hold only inside it.
  Stmt visit(const BlockStmt& b, const Stmt& self) override {
    const ExtentFacts outer = facts_;
    Stmt r = SplicingMutator::visit(b, self);
    facts_ = outer;
    return r;
  }
  void mutated(const Stmt& s) override { facts_.learn(s); }

  Stmt visit(const StencilStmt& st, const Stmt&) override {
    const size_t rank = st.indices.size();
    const int id = count_++;
    std::string tag = "s";  // (not "s" + to_string: GCC 12 warns falsely about that form, -Wrestrict)
    tag += std::to_string(id);
    std::vector<Stmt> out;
    if (st.allocate) out.push_back(make_allocate(st.target, st.shape));
    std::vector<Expr> n(rank), a(rank), b(rank);
    auto let = [&](const std::string& name, Expr e) {
      if (trivial(e)) return e;
      const Var v = make_var(name, Type::scalar(DType::I64), VarKind::Local);
      out.push_back(make_let(v, std::move(e)));
      return make_ref(v);
    };
    for (size_t d = 0; d < rank; ++d) n[d] = let(tag + "_n" + std::to_string(d), st.shape[d]);
    size_checks(st, n, out, ctx_.halo_reads);
    for (size_t d = 0; d < rank; ++d) {
      const std::string dd = std::to_string(d);
      a[d] = st.lo[d] == 0 ? i64c(0) : let(tag + "_lo" + dd, bin(BinaryOp::Min, i64c(-st.lo[d]), n[d]));
      b[d] = st.hi[d] == 0 ? n[d] : let(tag + "_hi" + dd, bin(BinaryOp::Max, a[d], bin(BinaryOp::Sub, n[d], i64c(st.hi[d]))));
    }
    const std::string origin = st.origin.empty() ? "stencil" : st.origin;
    const bool skip = st.border == Border::skip;
    if (ctx_.halo_reads) {
      // The arrays are blocks inside ghost layers that hold what the border rule (or another rank) gives:
      // every element is interior, every read a plain load at index + offset.
      halo_reads_only(st, origin);
      out.push_back(parfor(st, std::vector<Expr>(rank, i64c(0)), n, std::vector<bool>(rank, true), false, origin + " (halo reads)"));
      ctx_.note(Topic::other, fmt::format("lower_stencils: {} (into {}) -> one parfor reading the ghost layers (halo reads)",
                                          origin, st.target->name));
    } else if (skip && !st.allocate) {
      // Nothing to compute on the border: the interior alone.
      out.push_back(parfor(st, a, b, std::vector<bool>(rank, true), false, origin + " (interior)"));
      ctx_.note(Topic::other, fmt::format("lower_stencils: {} (skip, into {}) -> interior parfor (border skipped)", origin,
                                          st.target->name));
    } else {
      // One parfor over the whole space, the band tests inside: one fork and join of the team per stencil,
      // and each row's border elements are computed while the row is in cache. For host targets
      // partition_loops cuts the innermost loop at the tests' bounds, so the interior stays a loop of plain
      // loads; the CUDA backend sees an elementwise parfor reading at index + constant offsets.
      std::vector<Var> idx;
      for (const auto& i : st.indices) idx.push_back(fresh(i));
      out.push_back(make_parfor(idx, std::vector<Expr>(rank, i64c(0)), n, banded(st, idx, a, b, 0, skip, !ctx_.device), {}, origin));
      ctx_.note(Topic::other,
                fmt::format("lower_stencils: {} ({}, into {}) -> one parfor, interior tested per axis{}{}", origin,
                            name_of(st.border), st.target->name,
                            skip ? fmt::format(" copying {} on the border", st.windows[0]->name) : std::string(),
                            st.border == Border::constant && !ctx_.device
                                ? "; border reads loaded first (clamped into the window), the constant chosen by a select"
                                : ""));
    }
    return splice(std::move(out));
  }

  /// The store of one element of the stencil at `at` (variables standing for its indices), its window reads
  /// rewritten for positions where axes with `interior` set are inside the interior; with `read_first`, a
  /// constant border's remapped reads first, as lets (WindowReads::lets).
  static Stmt element(const StencilStmt& st, const std::vector<Var>& at, const std::vector<bool>& interior, bool copy_first,
                      bool read_first = false) {
    Renamer rename;
    for (size_t k = 0; k < at.size(); ++k) rename.vars[st.indices[k].get()] = at[k];
    Expr value;
    std::vector<Stmt> out;
    if (copy_first) {
      std::vector<Expr> q;
      for (const auto& i : at) q.push_back(make_ref(i));
      value = make_load(st.windows[0], std::move(q));
    } else {
      WindowReads reads(st, interior, read_first);
      value = rename.mutate(reads.mutate(st.value));
      for (const Stmt& let : reads.lets) out.push_back(rename.mutate(let));
    }
    std::vector<Expr> ti;
    for (const auto& e : st.target_index) ti.push_back(rename.mutate(e));
    Stmt store = make_store(st.target, std::move(ti), value);
    if (out.empty()) return store;
    out.push_back(std::move(store));
    return make_block(std::move(out));
  }

  static Var fresh(const Var& i) { return make_var(i->name, i->type, VarKind::Index, i->where); }

  /// The body of the whole-space parfor from axis d on, at positions whose axes < d are in the interior:
  /// `if (a_d <= i_d && i_d < b_d) <axes > d> else <element, remapped along axes >= d>` (tests that always
  /// hold, for sides the neighbourhood does not reach, are left out). With `copy_first` (skip border, new
  /// target) the border elements copy windows[0]; `read_first` as element() takes it.
  static Stmt banded(const StencilStmt& st, const std::vector<Var>& idx, const std::vector<Expr>& a,
                     const std::vector<Expr>& b, size_t d, bool copy_first, bool read_first) {
    const size_t rank = idx.size();
    if (d == rank) return make_block({element(st, idx, std::vector<bool>(rank, true), false)});
    Expr test;
    if (st.lo[d] != 0) test = bin(BinaryOp::Le, a[d], make_ref(idx[d]));
    if (st.hi[d] != 0) {
      const Expr t = bin(BinaryOp::Lt, make_ref(idx[d]), b[d]);
      test = test ? bin(BinaryOp::And, test, t) : t;
    }
    Stmt inner = banded(st, idx, a, b, d + 1, copy_first, read_first);
    if (!test) return inner;  // offset 0 only: every position is inside along d
    std::vector<bool> interior(rank, false);
    for (size_t k = 0; k < d; ++k) interior[k] = true;
    return make_block({make_if(test, inner, make_block({element(st, idx, interior, copy_first, read_first)}))});
  }

  /// Halo reads are plain loads at index + offset: a window read anywhere else (along another axis's index,
  /// at a computed position) has no ghost cell to come from, and is a TraceError naming the stencil.
  static void halo_reads_only(const StencilStmt& st, const std::string& origin) {
    struct Reads : IRVisitor {
      const StencilStmt& st;
      std::unordered_set<const VarNode*> windows;
      std::string bad;
      explicit Reads(const StencilStmt& s) : st(s) {
        for (const auto& w : s.windows) windows.insert(w.get());
      }
      using IRVisitor::visit;
      void visit(const LoadExpr& l) override {
        IRVisitor::visit(l);
        if (!windows.count(l.array.get()) || !bad.empty()) return;
        for (size_t k = 0; k < l.indices.size(); ++k)
          if (!index_offset(l.indices[k], st.indices[k].get()) && !plus_index(l.indices[k], st.indices[k].get(), st.indices))
            bad = fmt::format("{} along axis {}", l.array->name, k);
      }
    } reads(st);
    reads.walk(st.value);
    const std::string& bad = reads.bad;
    if (!bad.empty())
      throw TraceError(fmt::format("{}: halo reads (kiln::Options::halo_reads, distributed arrays) need every window read "
                                   "at the element's index plus an offset, but the stencil reads {} elsewhere: read "
                                   "windows relative to the element (a(0, -1)), or run it on one process",
                                   origin, bad));
  }

  /// One parfor of the stencil over [begins, ends): the value with window reads rewritten for the range,
  /// or (skip border, new target) windows[0]'s element.
  static Stmt parfor(const StencilStmt& st, const std::vector<Expr>& begins, const std::vector<Expr>& ends,
                     const std::vector<bool>& interior, bool copy_first, const std::string& origin) {
    std::vector<Var> idx;
    for (const auto& i : st.indices) idx.push_back(fresh(i));
    return make_parfor(idx, begins, ends, make_block({element(st, idx, interior, copy_first)}), {}, origin);
  }

  /// Remapping is exact only while one reflection reaches back into the array: |offset| <= n (wrap,
  /// reflect), < n (mirror). The frontend checks |offset| < n before every stencil; this check keeps
  /// generated code in bounds for IR built any other way. Windows of another shape than the space would
  /// make interior reads leave them. Constant and nearest borders clamp, which holds for any offset.
  void size_checks(const StencilStmt& st, const std::vector<Expr>& n, std::vector<Stmt>& out, bool halo) {
    const size_t rank = st.indices.size();
    Expr empty;
    for (size_t d = 0; d < rank; ++d) {
      const Expr z = bin(BinaryOp::Eq, n[d], i64c(0));
      empty = empty ? bin(BinaryOp::Or, empty, z) : z;
    }
    // Halo reads fold nothing: the ghost layers hold what the border rule gives.
    const bool folds = !halo && (st.border == Border::wrap || st.border == Border::reflect || st.border == Border::mirror);
    for (size_t d = 0; d < rank && folds; ++d) {
      const std::int64_t reach = std::max(-st.lo[d], st.hi[d]);
      if (reach == 0) continue;
      const Expr fits = st.border == Border::mirror ? bin(BinaryOp::Lt, i64c(reach), n[d]) : bin(BinaryOp::Le, i64c(reach), n[d]);
      out.push_back(make_check(bin(BinaryOp::Or, empty, fits), kShapeMismatch,
                               "stencil " + std::string(name_of(st.border)) + " border: the neighbourhood reaches {} along axis " +
                                   std::to_string(d) + " of an array of extent {}",
                               {i64c(reach), n[d]}));
    }
    for (const auto& w : st.windows)
      for (size_t d = 0; d < rank; ++d) {
        const Expr extent = make_dim(w, static_cast<int>(d));
        if (equal(extent, n[d]) || facts_.same(extent, st.shape[d])) continue;
        out.push_back(make_check(bin(BinaryOp::Eq, extent, n[d]), kShapeMismatch,
                                 "stencil window " + w->name + " has extent {} along axis " + std::to_string(d) +
                                     ", the stencil's space {}",
                                 {extent, n[d]}));
      }
  }
};

}  // namespace

ir::Function lower_stencils(const ir::Function& f, PassContext& ctx) {
  Lowering l(ctx);
  ir::Function out = f;
  out.body = l.mutate(f.body);
  return out;
}

}  // namespace kiln::passes
