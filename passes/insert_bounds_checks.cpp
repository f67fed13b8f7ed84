// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Bounds-checked mode: a check before each element access of the kernel's own code. Runs right after
// detect_reductions, on the IR as traced, so the checks guard exactly the accesses the user wrote, and
// later passes (fusion, hoisting, simplification) and every backend treat them like any other check.
#include "passes/insert_bounds_checks.hpp"

#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "ir/analysis.hpp"
#include "ir/atomics.hpp"
#include "ir/builder.hpp"
#include "ir/visitor.hpp"
#include "kiln/abi.hpp"
#include "passes/element_accesses.hpp"

namespace kiln::passes {
namespace {

using namespace kiln::ir;

using bounds::Access;
using bounds::accesses;
using bounds::both;
using bounds::negate;

/// The element accesses of a Map's or Stencil's body: its index into the target, its value, and the write
/// itself unless the statement allocates the target (its shape is then the space's, so the write is in bounds).
std::vector<Access> body_accesses(const Var& target, const std::vector<Expr>& target_index, const Expr& value,
                                  bool allocate) {
  std::vector<Access> found;
  for (const Expr& e : target_index) accesses(e, nullptr, found);
  accesses(value, nullptr, found);
  if (!allocate) found.push_back({target, target_index, nullptr});
  return found;
}

Expr either(const Expr& a, const Expr& b) { return make_binary(BinaryOp::Or, a, b); }
Expr lt(const Expr& a, const Expr& b) { return make_binary(BinaryOp::Lt, a, b); }
Expr plus(const Expr& e, std::int64_t k) {
  if (k == 0) return e;
  return make_binary(BinaryOp::Add, e, make_i64(k));
}

/// What makes a check movable before its loop: `index + offset` indexes `array` along `axis`.
struct RangeForm {
  Var array;
  int axis;
  const VarNode* index;
  std::int64_t offset;
  bool lower, upper;  ///< which bounds still need checking
  /// When true, the access is not made (an inner loop the check was moved out of is empty); null: always made.
  Expr skipped = nullptr;
};

/// A loop index: where it runs, and what its loop's body assigns (rebound arrays included).
struct LoopIndex {
  Expr begin, end;
  const VarSet* assigned;
};

class Inserter {
 public:
  Inserter(const Function& f, PassContext& ctx) : f_(f), ctx_(ctx), assigned_(assigned_vars(f.body)) {}

  Function run() {
    Function out = f_;
    for (const Var& p : f_.params) depth_[p.get()] = 0;
    std::vector<Stmt> body = list(as_list(f_.body));
    // The result is evaluated after the body.
    for (const Expr& e : f_.result_exprs()) statement_level(e, nullptr, body);
    out.body = make_block(std::move(body));
    ctx_.note("insert_bounds_checks: " + std::to_string(inserted_) + " index check(s) inserted, " +
              std::to_string(hoisted_) + " of them made once before their loop; " + std::to_string(proven_) +
              " bound(s) hold by construction");
    return out;
  }

 private:
  const Function& f_;
  PassContext& ctx_;
  const VarSet assigned_;  ///< assigned anywhere in the kernel
  std::unordered_map<const VarNode*, int> depth_;  ///< loop depth where each variable is defined
  std::unordered_map<const VarNode*, Expr> lets_;  ///< lets never assigned: their value
  std::unordered_map<const VarNode*, LoopIndex> loop_index_;
  std::unordered_set<const StmtNode*> mine_;  ///< the checks this pass made
  std::unordered_map<const StmtNode*, RangeForm> range_form_;
  std::vector<Stmt> made_;  ///< keeps every check made alive, so that no address above is reused
  std::vector<Expr> known_;  ///< conditions checked on the way here whose inputs never change
  VarSet reduction_vars_;    ///< scalar reductions of the enclosing parfors (and argmin/argmax indices)
  VarSet arg_reduction_vars_;  ///< those of argmin/argmax reductions
  int depth_now_ = 0;
  int inserted_ = 0, hoisted_ = 0, proven_ = 0;

  static std::vector<Stmt> as_list(const Stmt& s) {
    if (const auto* b = dyn<BlockStmt>(s)) return b->stmts;
    return {s};
  }

  void define(const Var& v) { depth_[v.get()] = depth_now_; }

  /// `e` as `loop index + constant`, looking through lets that are never assigned.
  std::optional<std::pair<const VarNode*, std::int64_t>> affine(const Expr& e, int budget = 8) const {
    if (budget == 0) return std::nullopt;
    if (const auto* r = dyn<VarRefExpr>(e)) {
      if (loop_index_.count(r->var.get())) return std::make_pair(r->var.get(), std::int64_t{0});
      if (const auto it = lets_.find(r->var.get()); it != lets_.end()) return affine(it->second, budget - 1);
      return std::nullopt;
    }
    const auto* b = dyn<BinaryExpr>(e);
    if (!b || b->type != DType::I64 || (b->op != BinaryOp::Add && b->op != BinaryOp::Sub)) return std::nullopt;
    const auto* ka = dyn<ConstExpr>(b->a);
    const auto* kb = dyn<ConstExpr>(b->b);
    if (kb) {
      auto x = affine(b->a, budget - 1);
      if (x) x->second += b->op == BinaryOp::Add ? kb->i : -kb->i;
      return x;
    }
    if (ka && b->op == BinaryOp::Add) {
      auto x = affine(b->b, budget - 1);
      if (x) x->second += ka->i;
      return x;
    }
    return std::nullopt;
  }

  bool is_known(const Expr& c) const {
    for (const Expr& k : known_)
      if (equal(k, c)) return true;
    return false;
  }

  /// True if nothing `e` reads can change while it stays in scope: no loads, no assigned variables.
  bool stable(const Expr& e) const {
    if (has_load(e)) return false;
    for (const Var& v : free_vars(e))
      if (assigned_.count(v.get())) return false;
    return true;
  }

  /// The check of one axis of an access, or nothing when both bounds hold by construction or it was made
  /// already. With `remember`, later accesses in its scope take its condition as known.
  Stmt axis_check(const Access& a, int axis, RangeForm* form, bool remember) {
    const Expr idx = make_cast(DType::I64, a.indices[static_cast<size_t>(axis)]);
    const Expr extent = make_dim(a.array, axis);
    bool lower = true, upper = true;
    const auto k = dyn<ConstExpr>(idx);
    if (k && k->i >= 0) lower = false;
    const auto aff = affine(idx);
    if (aff) {
      const LoopIndex& li = loop_index_.at(aff->first);
      const auto* b = dyn<ConstExpr>(li.begin);
      if (b && b->i + aff->second >= 0) lower = false;  // i >= begin
      // i < dim(x, d) for every i of a loop to dim(x, d), so i + c < dim(x, d) for c <= 0.
      if (aff->second <= 0 && equal(li.end, extent) && !li.assigned->count(a.array.get())) upper = false;
    }
    proven_ += !lower + !upper;
    if (!lower && !upper) return nullptr;
    Expr term;
    if (lower) term = make_binary(BinaryOp::Ge, idx, make_i64(0));
    if (upper) term = both(term, lt(idx, extent));
    const Expr guard = without_reduction_state(a.guard);
    const Expr cond = guard ? either(negate(guard), term) : term;
    if (is_known(cond) || is_known(term)) return nullptr;
    if (remember && stable(cond)) known_.push_back(cond);
    Stmt check = make_check(cond, kIndexOutOfRange, message(a.array, axis), {idx, extent});
    if (form && aff && !a.guard) *form = RangeForm{a.array, axis, aff->first, aff->second, lower, upper};
    return check;
  }

  /// `guard` without its conjuncts that read a reduction variable. Only an argmin/argmax update reads one
  /// (`at < 0 || x < best`), and its candidate x is evaluated whenever its condition is or its update runs, so
  /// the candidate's accesses are checked unconditionally; a check may not read the reduction state anyway.
  Expr without_reduction_state(const Expr& guard) const {
    if (!guard || reduction_vars_.empty()) return guard;
    if (const auto* b = dyn<BinaryExpr>(guard); b && b->op == BinaryOp::And)
      return both(without_reduction_state(b->a), without_reduction_state(b->b));
    for (const Var& v : free_vars(guard))
      if (reduction_vars_.count(v.get())) return nullptr;
    return guard;
  }

  /// True if `i` is an argmin/argmax update, `if better(x, var) { var = x; index = k }`, whose shape the
  /// verifier and the backends rely on: no else, and a body of assignments to such reduction variables.
  bool is_arg_update(const IfStmt& i) const {
    if (i.else_body || arg_reduction_vars_.empty()) return false;
    const std::vector<Stmt> body = as_list(i.then_body);
    for (const Stmt& s : body) {
      const auto* a = dyn<AssignStmt>(s);
      if (!a || !arg_reduction_vars_.count(a->var.get())) return false;
    }
    return !body.empty();
  }

  static std::string message(const Var& array, int axis) {
    return "index {} out of range for axis " + std::to_string(axis) + " of array '" + array->name + "' with extent {}";
  }

  void add(Stmt check, const RangeForm* form, std::vector<Stmt>& out) {
    ++inserted_;
    made_.push_back(check);
    mine_.insert(check.get());
    if (form) range_form_[check.get()] = *form;
    out.push_back(std::move(check));
  }

  /// Checks for the accesses of an expression the statement evaluates itself (outside any loop of its own).
  void statement_level(const Expr& e, const Expr& guard, std::vector<Stmt>& out) {
    std::vector<Access> found;
    accesses(e, guard, found);
    for (const Access& a : found) check_access(a, out);
  }

  void check_access(const Access& a, std::vector<Stmt>& out) {
    for (int d = 0; d < static_cast<int>(a.indices.size()); ++d) {
      RangeForm form{};
      form.array = nullptr;
      if (Stmt c = axis_check(a, d, &form, true)) add(std::move(c), form.array ? &form : nullptr, out);
    }
  }

  /// Checks for an array-level operation over `indices` in [0, shape): only the terms its indices do not
  /// enter (the frontend matched the rest to the operands' shapes), made when the space is not empty.
  void array_level(const std::vector<Var>& indices, const std::vector<Expr>& shape, const std::vector<Access>& found,
                   std::vector<Stmt>& out) {
    auto varies = [&](const Expr& e) {
      for (const Var& v : free_vars(e))
        for (const Var& i : indices)
          if (v == i) return true;
      return false;
    };
    Expr empty;
    for (const Expr& s : shape) {
      const Expr e = make_binary(BinaryOp::Le, s, make_i64(0));
      empty = empty ? either(empty, e) : e;
    }
    for (const Access& a : found) {
      if (a.guard && varies(a.guard)) continue;
      for (int d = 0; d < static_cast<int>(a.indices.size()); ++d) {
        if (varies(a.indices[static_cast<size_t>(d)])) continue;
        // Not remembered: made only when the space is not empty.
        Stmt c = axis_check(a, d, nullptr, false);
        if (!c) continue;
        if (empty) {
          const auto& k = c->as<CheckStmt>();
          c = make_check(either(empty, k.cond), k.code, k.message, k.args);
        }
        add(std::move(c), nullptr, out);
      }
    }
  }

  std::vector<Stmt> list(const std::vector<Stmt>& in) {
    const size_t known_mark = known_.size();
    std::vector<Stmt> out;
    for (const Stmt& s : in) stmt(s, out);
    known_.resize(known_mark);
    return out;
  }

  /// A loop body: its own checks, then the ones that can be made before the loop move to `before`.
  Stmt loop_body(const Stmt& body, const std::vector<Var>& indices, const std::vector<Expr>& begins,
                 const std::vector<Expr>& ends, std::vector<Stmt>& before) {
    const VarSet assigned = assigned_vars(body);
    ++depth_now_;
    const int depth = depth_now_;
    for (size_t k = 0; k < indices.size(); ++k) {
      define(indices[k]);
      loop_index_[indices[k].get()] = LoopIndex{begins[k], ends[k], &assigned};
    }
    std::vector<Stmt> inner = list(as_list(body));
    for (const Var& i : indices) loop_index_.erase(i.get());
    --depth_now_;

    bool bounds_plain = true;  // the loop's extents can be evaluated again before it
    Expr empty;
    for (size_t k = 0; k < indices.size(); ++k) {
      bounds_plain = bounds_plain && !has_load(begins[k]) && !has_load(ends[k]);
      const Expr e = make_binary(BinaryOp::Le, ends[k], begins[k]);
      empty = empty ? either(empty, e) : e;
    }
    auto invariant = [&](const Var& v) {
      const auto it = depth_.find(v.get());
      return it != depth_.end() && it->second < depth && !assigned.count(v.get());
    };
    std::vector<Stmt> kept;
    for (const Stmt& s : inner) {
      if (!bounds_plain || !mine_.count(s.get())) {
        kept.push_back(s);
        continue;
      }
      const auto& c = s->as<CheckStmt>();
      bool moves = !has_load(c.cond);
      for (const Var& v : free_vars(s)) moves = moves && invariant(v);
      Stmt moved;
      std::optional<RangeForm> carried;  // an outer loop's index: the range form moves along
      const auto form = range_form_.find(s.get());
      if (moves) {  // the same condition for every iteration
        moved = make_check(either(empty, c.cond), c.code, c.message, c.args);
        if (form != range_form_.end()) {
          carried = form->second;
          carried->skipped = carried->skipped ? either(empty, carried->skipped) : empty;
        }
      } else if (form != range_form_.end() && invariant(form->second.array)) {
        const RangeForm& r = form->second;
        size_t k = 0;
        while (k < indices.size() && indices[k].get() != r.index) ++k;
        bool skipped_invariant = !r.skipped || !has_load(r.skipped);
        if (r.skipped)
          for (const Var& v : free_vars(r.skipped)) skipped_invariant = skipped_invariant && invariant(v);
        if (k == indices.size() || !skipped_invariant) {
          kept.push_back(s);
          continue;
        }
        // Over the loop, index + offset runs from lo to hi; the first index out of range is lo when lo < 0,
        // else the extent itself (a sequential run would fail there first).
        const Expr lo = plus(begins[k], r.offset), hi = plus(ends[k], r.offset - 1);
        const Expr extent = make_dim(r.array, r.axis);
        Expr term;
        if (r.lower) term = make_binary(BinaryOp::Ge, lo, make_i64(0));
        if (r.upper) term = both(term, lt(hi, extent));
        const Expr first_bad =
            make_select(lt(lo, make_i64(0)), lo, make_binary(BinaryOp::Max, lo, extent));
        moved = make_check(either(r.skipped ? either(empty, r.skipped) : empty, term), c.code, c.message,
                           {first_bad, extent});
      } else {
        kept.push_back(s);
        continue;
      }
      // Made before the loop, it holds for what follows the loop too (an earlier loop may have made it).
      const Expr& cond = moved->as<CheckStmt>().cond;
      if (is_known(cond)) {
        --inserted_;
        continue;
      }
      ++hoisted_;
      if (stable(cond)) known_.push_back(cond);
      made_.push_back(moved);
      mine_.insert(moved.get());
      if (carried) range_form_[moved.get()] = *carried;
      before.push_back(std::move(moved));
    }
    return make_block(std::move(kept));
  }

  void stmt(const Stmt& s, std::vector<Stmt>& out) {
    switch (s->kind) {
      case StmtKind::Block: {
        const size_t known_mark = known_.size();
        std::vector<Stmt> inner;
        for (const Stmt& x : s->as<BlockStmt>().stmts) stmt(x, inner);
        known_.resize(known_mark);
        out.push_back(make_block(std::move(inner)));
        return;
      }
      case StmtKind::Let: {
        const auto& l = s->as<LetStmt>();
        statement_level(l.init, nullptr, out);
        define(l.var);
        if (!assigned_.count(l.var.get())) lets_[l.var.get()] = l.init;
        out.push_back(s);
        return;
      }
      case StmtKind::Assign:
        statement_level(s->as<AssignStmt>().value, nullptr, out);
        out.push_back(s);
        return;
      case StmtKind::Store: {
        const auto& st = s->as<StoreStmt>();
        for (const Expr& i : st.indices) statement_level(i, nullptr, out);
        statement_level(st.value, nullptr, out);
        check_access(Access{st.array, st.indices, nullptr}, out);
        out.push_back(s);
        return;
      }
      case StmtKind::Atomic: {
        const auto& a = s->as<AtomicStmt>();
        for (const Expr& i : a.indices) statement_level(i, nullptr, out);
        statement_level(a.value, nullptr, out);
        if (a.expected) statement_level(a.expected, nullptr, out);
        check_access(Access{a.array, a.indices, nullptr}, out);
        define(a.result);
        out.push_back(s);
        return;
      }
      case StmtKind::For: {
        const auto& f = s->as<ForStmt>();
        statement_level(f.begin, nullptr, out);
        statement_level(f.end, nullptr, out);
        std::vector<Stmt> before;
        Stmt body = loop_body(f.body, {f.index}, {f.begin}, {f.end}, before);
        out.insert(out.end(), before.begin(), before.end());
        out.push_back(make_for(f.index, f.begin, f.end, std::move(body)));
        return;
      }
      case StmtKind::Sort:  // whole compact arrays: no subscript to check
      case StmtKind::Scan:
        out.push_back(s);
        return;
      case StmtKind::Launch:  // checks hoisted out of a parfor would have to leave its launch too
        throw IRError("insert_bounds_checks runs before the offload pass, which makes launches");
      case StmtKind::Parfor: {
        const auto& p = s->as<ParforStmt>();
        for (const Expr& e : p.begins) statement_level(e, nullptr, out);
        for (const Expr& e : p.ends) statement_level(e, nullptr, out);
        std::vector<Stmt> before;
        const VarSet outer_reductions = reduction_vars_, outer_arg_reductions = arg_reduction_vars_;
        for (const Reduction& r : p.reductions) {
          reduction_vars_.insert(r.var.get());
          if (!r.index) continue;
          reduction_vars_.insert(r.index.get());
          arg_reduction_vars_.insert(r.var.get());
          arg_reduction_vars_.insert(r.index.get());
        }
        Stmt body = loop_body(p.body, p.indices, p.begins, p.ends, before);
        reduction_vars_ = outer_reductions;
        arg_reduction_vars_ = outer_arg_reductions;
        out.insert(out.end(), before.begin(), before.end());
        out.push_back(with_body(p, std::move(body)));
        return;
      }
      case StmtKind::If: {
        const auto& i = s->as<IfStmt>();
        statement_level(i.cond, nullptr, out);
        if (is_arg_update(i)) {  // it stays as it is; its accesses are checked before it
          for (const Stmt& x : as_list(i.then_body)) statement_level(x->as<AssignStmt>().value, nullptr, out);
          out.push_back(s);
          return;
        }
        const Stmt t = make_block(list(as_list(i.then_body)));
        const Stmt e = i.else_body ? make_block(list(as_list(i.else_body))) : nullptr;
        out.push_back(make_if(i.cond, t, e));
        return;
      }
      case StmtKind::Allocate: {
        const auto& a = s->as<AllocateStmt>();
        for (const Expr& e : a.shape) statement_level(e, nullptr, out);
        define(a.array);
        out.push_back(s);
        return;
      }
      case StmtKind::Check: {
        const auto& c = s->as<CheckStmt>();
        statement_level(c.cond, nullptr, out);
        for (const Expr& a : c.args) statement_level(a, negate(c.cond), out);  // made only on failure
        out.push_back(s);
        return;
      }
      case StmtKind::Bind: {
        const auto& b = s->as<BindStmt>();
        if (b.declare) define(b.target);
        out.push_back(s);
        return;
      }
      case StmtKind::Map: {
        const auto& m = s->as<MapStmt>();
        for (const Expr& e : m.shape) statement_level(e, nullptr, out);
        array_level(m.indices, m.shape, body_accesses(m.target, m.target_index, m.value, m.allocate), out);
        if (m.allocate) define(m.target);
        out.push_back(s);
        return;
      }
      case StmtKind::Reduce: {
        const auto& r = s->as<ReduceStmt>();
        for (const Expr& e : r.shape) statement_level(e, nullptr, out);
        std::vector<Access> found;
        accesses(r.value, nullptr, found);
        array_level(r.indices, r.shape, found, out);
        define(r.result);
        out.push_back(s);
        return;
      }
      case StmtKind::ReduceAxis: {
        const auto& r = s->as<ReduceAxisStmt>();
        for (const Expr& e : r.shape) statement_level(e, nullptr, out);
        std::vector<Access> found;
        accesses(r.value, nullptr, found);
        array_level(r.indices, r.shape, found, out);
        define(r.target);
        out.push_back(s);
        return;
      }
      case StmtKind::Stencil: {
        const auto& st = s->as<StencilStmt>();
        for (const Expr& e : st.shape) statement_level(e, nullptr, out);
        if (st.cval) statement_level(st.cval, nullptr, out);
        // Window reads are answered by the border rule; other arrays are read as written.
        std::vector<Access> plain;
        for (Access& a : body_accesses(st.target, st.target_index, st.value, st.allocate)) {
          bool window = false;
          for (const Var& w : st.windows) window = window || w == a.array;
          if (!window) plain.push_back(std::move(a));
        }
        array_level(st.indices, st.shape, plain, out);
        if (st.allocate) define(st.target);
        out.push_back(s);
        return;
      }
    }
    out.push_back(s);
  }
};

}  // namespace

ir::Function insert_bounds_checks(const ir::Function& f, PassContext& ctx) { return Inserter(f, ctx).run(); }

}  // namespace kiln::passes
