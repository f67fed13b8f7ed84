// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "passes/array_analysis.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include "ir/analysis.hpp"
#include "ir/atomics.hpp"
#include "ir/builder.hpp"
#include "ir/printer.hpp"
#include "ir/visitor.hpp"
#include "kiln/abi.hpp"
#include "passes/early_checks.hpp"
#include "passes/extent_classes.hpp"

namespace kiln::passes {
namespace {

using namespace kiln::ir;

using extents::Classes;
using extents::Lin;
using extents::shifted;

/// e + k, folded.
Expr plus(const Expr& e, std::int64_t k) {
  if (k == 0) return e;
  if (const auto* c = dyn<ConstExpr>(e)) return make_i64(c->i + k);
  if (k < 0 && k != INT64_MIN) return make_binary(BinaryOp::Sub, e, make_i64(-k));
  return make_binary(BinaryOp::Add, e, make_i64(k));
}

std::optional<std::int64_t> constant(const Expr& e) {
  const auto* c = dyn<ConstExpr>(e);
  if (!c || c->type != DType::I64) return std::nullopt;
  return c->i;
}

void conjuncts(const Expr& e, std::vector<Expr>& out) {
  if (const auto* b = dyn<BinaryExpr>(e); b && b->op == BinaryOp::And) {
    conjuncts(b->a, out);
    conjuncts(b->b, out);
    return;
  }
  out.push_back(e);
}

class Analysis {
 public:
  Analysis(const Function& f, PassContext& ctx) : f_(f), ctx_(ctx), mutable_(assigned_vars(f.body)) {}

  Function run() {
    Function out = f_;
    scopes_.emplace_back();
    for (const auto& p : f_.params) scopes_.back().insert(p.get());
    // The body's top-level definitions stay visible to the result, so its block shares the root scope.
    if (const auto* b = dyn<BlockStmt>(f_.body)) out.body = make_block(stmts(b->stmts));
    else out.body = stmt(f_.body);
    if (!out.body) out.body = make_block({});
    if (out.result) out.result = rewrite(out.result, false);
    for (auto& m : out.tuple)
      if (m.scalar) m.scalar = rewrite(m.scalar, false);
    report_classes();
    return out;
  }

 private:
  const Function& f_;
  PassContext& ctx_;
  VarSet mutable_;
  Classes cls_;
  std::vector<VarSet> scopes_;
  int checks_removed_ = 0, checks_kept_ = 0;

  // ---- canonical forms ---------------------------------------------------------------------------------

  bool reasonable(const Expr& e) const {
    if (has_load(e)) return false;
    for (const Var& v : free_vars(e)) {
      if (v->type.is_scalar() && v->kind == VarKind::Local && mutable_.count(v.get())) return false;
      // A rebound binding may name arrays of other shapes over time: its extents are no fixed quantity.
      if (v->kind == VarKind::Binding && mutable_.count(v.get())) return false;
    }
    return true;
  }

  /// The canonical form of an i64 expression, or nothing if it reads memory or a variable that changes.
  std::optional<Lin> canon(const Expr& e) {
    if (!e || e->type != DType::I64 || !reasonable(e)) return std::nullopt;
    if (const auto c = constant(e)) return Lin{0, *c};
    if (const auto* b = dyn<BinaryExpr>(e)) {
      const auto ka = constant(b->a), kb = constant(b->b);
      if (b->op == BinaryOp::Add && kb) return shift(canon(b->a), *kb);
      if (b->op == BinaryOp::Add && ka) return shift(canon(b->b), *ka);
      if (b->op == BinaryOp::Sub && kb) return shift(canon(b->a), -*kb);
      if (b->op == BinaryOp::Max && (ka || kb)) {
        // max(x, c) is x once x >= c is known.
        const auto x = canon(ka ? b->b : b->a);
        const auto lb = x ? cls_.lower(*x) : std::nullopt;
        if (lb && *lb >= (ka ? *ka : *kb)) return x;
      }
    }
    return Lin{cls_.atom(e), 0};
  }

  static std::optional<Lin> shift(std::optional<Lin> l, std::int64_t d) {
    if (!l) return std::nullopt;
    return shifted(*l, d);
  }

  bool in_scope(const Expr& e) const {
    for (const Var& v : free_vars(e))
      if (std::none_of(scopes_.begin(), scopes_.end(), [&](const VarSet& s) { return s.count(v.get()) > 0; }))
        return false;
    return true;
  }

  /// The simplest expression in scope equal to l: a constant, else a member that reads only parameters
  /// (and their extents), else any, the fewest nodes first and the oldest among equals. Every
  /// member of a class maps to the same one, so equal extents print the same.
  Expr representative(Lin l) {
    if (const auto k = cls_.exact(l)) return make_i64(*k);
    Expr best;
    size_t best_cost = 0;
    for (const auto& [a, off] : cls_.members(l)) {
      if (a == 0) continue;
      const Expr& e = cls_.expr(a);
      if (!in_scope(e)) continue;
      bool local = false;  // valid only after its definition, or inside its loop
      for (const Var& v : free_vars(e)) local |= v->kind != VarKind::Param;
      // Members built from parameters alone are valid everywhere, so they make the most parfors match.
      const size_t cost = node_count(e) + (local ? 100 : 0) + (off != 0 ? 2 : 0);
      if (!best || cost < best_cost) {
        best = plus(e, off);
        best_cost = cost;
      }
    }
    return best;
  }

  /// Every dim(a, d) in e becomes its representative; with `whole`, so does e itself (an extent).
  Expr rewrite(const Expr& e, bool whole) {
    struct Dims : IRMutator {
      Analysis& an;
      explicit Dims(Analysis& a) : an(a) {}
      using IRMutator::visit;
      Expr visit(const DimExpr&, const Expr& self) override {
        const Expr r = an.representative(Lin{an.cls_.atom(self), 0});
        return r && !equal(r, self) ? r : self;
      }
    } dims(*this);
    Expr r = dims.mutate(e);
    if (whole && r->type == DType::I64) {
      if (const auto l = canon(r))
        if (Expr rep = representative(*l); rep && !equal(rep, r)) r = rep;
    }
    return r;
  }

  std::vector<Expr> rewrite_all(const std::vector<Expr>& es, bool whole) {
    std::vector<Expr> out;
    for (const auto& e : es) out.push_back(rewrite(e, whole));
    return out;
  }

  /// dim(array, d) == shape[d] >= 0 from now on.
  void learn_shape(const Var& array, const std::vector<Expr>& shape) {
    for (size_t d = 0; d < shape.size(); ++d) {
      const auto s = canon(shape[d]);
      if (!s) continue;
      cls_.at_least(*s, 0);
      cls_.unite(Lin{cls_.atom(make_dim(array, static_cast<int>(d))), 0}, *s);
    }
  }

  // ---- conditions ---------------------------------------------------------------------------------------

  /// a < b + slack is known.
  bool known_less(const Expr& a, const Expr& b, std::int64_t slack) {
    const auto la = canon(a), lb = canon(b);
    if (!la || !lb) return false;
    const Lin ra = cls_.root(*la), rb = cls_.root(*lb);
    if (ra.atom == rb.atom) return ra.k < rb.k + slack;
    if (const auto va = cls_.exact(*la)) {
      const auto low = cls_.lower(*lb);
      return low && *va < *low + slack;
    }
    return false;
  }

  bool proven(const Expr& c) {
    if (const auto* k = dyn<ConstExpr>(c); k && k->type == DType::Bool) return k->i != 0;
    const auto* b = dyn<BinaryExpr>(c);
    if (!b) return false;
    switch (b->op) {
      case BinaryOp::And: return proven(b->a) && proven(b->b);
      case BinaryOp::Or: return proven(b->a) || proven(b->b);
      default: break;
    }
    if (b->a->type != DType::I64) return false;
    switch (b->op) {
      case BinaryOp::Eq: {
        const auto la = canon(b->a), lb = canon(b->b);
        return la && lb && cls_.same(*la, *lb);
      }
      case BinaryOp::Ne: return known_less(b->a, b->b, 0) || known_less(b->b, b->a, 0);
      case BinaryOp::Lt: return known_less(b->a, b->b, 0);
      case BinaryOp::Le: return known_less(b->a, b->b, 1);
      case BinaryOp::Gt: return known_less(b->b, b->a, 0);
      case BinaryOp::Ge: return known_less(b->b, b->a, 1);
      default: return false;
    }
  }

  /// What a passed check tells: equalities and lower bounds of its conjuncts.
  void learn(const Expr& c) {
    std::vector<Expr> parts;
    conjuncts(c, parts);
    for (const Expr& p : parts) {
      const auto* b = dyn<BinaryExpr>(p);
      if (!b || b->a->type != DType::I64) continue;
      const auto la = canon(b->a), lb = canon(b->b);
      if (!la || !lb) continue;
      const auto ka = cls_.exact(*la), kb = cls_.exact(*lb);
      switch (b->op) {
        case BinaryOp::Eq: cls_.unite(*la, *lb); break;
        case BinaryOp::Lt: if (ka) cls_.at_least(*lb, *ka + 1); break;  // c < x
        case BinaryOp::Le: if (ka) cls_.at_least(*lb, *ka); break;
        case BinaryOp::Gt: if (kb) cls_.at_least(*la, *kb + 1); break;  // x > c
        case BinaryOp::Ge: if (kb) cls_.at_least(*la, *kb); break;
        default: break;
      }
    }
  }

  Stmt check(const CheckStmt& c) {
    const Expr cond = rewrite(c.cond, false);
    const std::vector<Expr> args = rewrite_all(c.args, false);
    const std::string what = "check `" + c.message.substr(0, c.message.find(':')) + "`";
    std::vector<Expr> parts, left;
    conjuncts(cond, parts);
    for (const Expr& p : parts)
      if (!proven(p)) left.push_back(p);
    if (left.empty()) {
      ++checks_removed_;
      ctx_.note("array_analysis: removed " + what + ": " + to_string(c.cond) + " holds");
      return nullptr;
    }
    Expr kept = left[0];
    for (size_t k = 1; k < left.size(); ++k) kept = make_binary(BinaryOp::And, kept, left[k]);
    ++checks_kept_;
    ctx_.note("array_analysis: kept " + what + " at run time: " + to_string(kept) + " is not known");
    learn(kept);
    return make_check(kept, c.code, c.message, args);
  }

  // ---- statements ---------------------------------------------------------------------------------------

  void define(const Var& v) { scopes_.back().insert(v.get()); }

  std::vector<Stmt> stmts(const std::vector<Stmt>& in) {
    std::vector<Stmt> out;
    for (const Stmt& s : checks_early(in, ctx_))
      if (Stmt r = stmt(s)) out.push_back(std::move(r));
    return out;
  }

  /// A nested scope: its definitions and its facts end with it.
  template <class F>
  auto nested(F&& f) {
    const Classes saved = cls_;
    scopes_.emplace_back();
    auto r = f();
    scopes_.pop_back();
    cls_ = saved;
    return r;
  }

  Stmt body(const Stmt& s, const std::vector<Var>& indices) {
    return nested([&] {
      for (const Var& i : indices) define(i);
      if (const auto* b = dyn<BlockStmt>(s)) return make_block(stmts(b->stmts));
      Stmt r = stmt(s);
      return r ? r : make_block({});
    });
  }

  Stmt stmt(const Stmt& s) {
    switch (s->kind) {
      case StmtKind::Block: return body(s, {});
      case StmtKind::Let: {
        const auto& l = s->as<LetStmt>();
        const Expr init = rewrite(l.init, true);
        define(l.var);
        if (!mutable_.count(l.var.get()) && l.var->type.elem == DType::I64)
          if (const auto v = canon(init)) cls_.unite(Lin{cls_.atom(make_ref(l.var)), 0}, *v);
        return make_let(l.var, init);
      }
      case StmtKind::Assign: {
        const auto& a = s->as<AssignStmt>();
        return make_assign(a.var, rewrite(a.value, false));
      }
      case StmtKind::Store: {
        const auto& st = s->as<StoreStmt>();
        return make_store(st.array, rewrite_all(st.indices, false), rewrite(st.value, false));
      }
      case StmtKind::Atomic: {
        const auto& a = s->as<AtomicStmt>();
        Stmt out = make_atomic(a.result, a.op, a.array, rewrite_all(a.indices, false), rewrite(a.value, false),
                               a.expected ? rewrite(a.expected, false) : nullptr);
        define(a.result);
        return out;
      }
      case StmtKind::For: {
        const auto& f = s->as<ForStmt>();
        const Expr b = rewrite(f.begin, true), e = rewrite(f.end, true);
        return make_for(f.index, b, e, body(f.body, {f.index}));
      }
      case StmtKind::Parfor: {
        const auto& p = s->as<ParforStmt>();
        const std::vector<Expr> b = rewrite_all(p.begins, true), e = rewrite_all(p.ends, true);
        return make_parfor(p.indices, b, e, body(p.body, p.indices), p.reductions, p.array_reductions, p.origin);
      }
      case StmtKind::Launch: return make_launch(s->as<LaunchStmt>().kernel, stmt(s->as<LaunchStmt>().body));
      case StmtKind::Sort:
      case StmtKind::Scan: return s;  // arrays only: no expression to rewrite
      case StmtKind::If: {
        const auto& i = s->as<IfStmt>();
        const Expr c = rewrite(i.cond, false);
        const Stmt t = body(i.then_body, {});
        const Stmt e = i.else_body ? body(i.else_body, {}) : nullptr;
        return make_if(c, t, e);
      }
      case StmtKind::Allocate: {
        const auto& a = s->as<AllocateStmt>();
        const std::vector<Expr> shape = rewrite_all(a.shape, true);
        define(a.array);
        learn_shape(a.array, shape);
        return make_allocate(a.array, shape);
      }
      case StmtKind::Check: return check(s->as<CheckStmt>());
      case StmtKind::Map: {
        const auto& m = s->as<MapStmt>();
        const std::vector<Expr> shape = rewrite_all(m.shape, true);
        Stmt r = nested([&] {
          for (const Var& i : m.indices) define(i);
          const std::vector<Expr> ti = rewrite_all(m.target_index, false);
          const Expr v = rewrite(m.value, false);
          return m.allocate ? make_map(m.target, m.indices, shape, v, m.origin)
                            : make_map_into(m.target, m.indices, shape, ti, v, m.origin);
        });
        if (m.allocate) {
          define(m.target);
          learn_shape(m.target, shape);
        }
        return r;
      }
      case StmtKind::Reduce: {
        const auto& r = s->as<ReduceStmt>();
        const std::vector<Expr> shape = rewrite_all(r.shape, true);
        Stmt out = nested([&] {
          for (const Var& i : r.indices) define(i);
          return make_reduce(r.result, r.op, r.indices, shape, rewrite(r.value, false), r.origin);
        });
        define(r.result);
        return out;
      }
      case StmtKind::ReduceAxis: {
        const auto& r = s->as<ReduceAxisStmt>();
        const std::vector<Expr> shape = rewrite_all(r.shape, true);
        Stmt out = nested([&] {
          for (const Var& i : r.indices) define(i);
          return make_reduce_axis(r.target, r.op, r.axis, r.keepdims, r.indices, shape, rewrite(r.value, false),
                                  r.origin);
        });
        define(r.target);
        std::vector<Expr> out_shape;
        for (int d = 0; d < static_cast<int>(shape.size()); ++d)
          if (d != r.axis) out_shape.push_back(shape[static_cast<size_t>(d)]);
          else if (r.keepdims) out_shape.push_back(make_i64(1));
        learn_shape(r.target, out_shape);
        return out;
      }
      case StmtKind::Stencil: {
        const auto& st = s->as<StencilStmt>();
        const std::vector<Expr> shape = rewrite_all(st.shape, true);
        const Expr cval = st.cval ? rewrite(st.cval, false) : nullptr;
        Stmt out = nested([&] {
          for (const Var& i : st.indices) define(i);
          const std::vector<Expr> ti = st.allocate ? std::vector<Expr>{} : rewrite_all(st.target_index, false);
          return make_stencil(st.target, st.allocate, st.indices, shape, ti, rewrite(st.value, false), st.windows,
                              st.lo, st.hi, st.border, cval, st.origin);
        });
        if (st.allocate) {
          define(st.target);
          learn_shape(st.target, shape);
        }
        return out;
      }
      case StmtKind::Bind: {
        // A binding's extents are those of the array it names; nothing is learned (it may be rebound).
        if (s->as<BindStmt>().declare) define(s->as<BindStmt>().target);
        return s;
      }
    }
    return s;
  }

  /// Notes the classes of the kernel's top level that relate more than one extent.
  void report_classes() {
    std::map<int, std::vector<std::string>> groups;
    for (int a = 1; a < cls_.size(); ++a) {
      const Lin r = cls_.root({a, 0});
      std::string e = to_string(cls_.expr(a));
      if (r.k != 0) e += r.k > 0 ? " - " + std::to_string(r.k) : " + " + std::to_string(-r.k);
      if (r.atom == 0) e += " == " + std::to_string(r.k);
      groups[r.atom].push_back(e);
    }
    for (const auto& [root, members] : groups) {
      if (root == 0 || members.size() < 2) continue;
      std::string line = "array_analysis: equal extents:";
      for (const auto& m : members) line += " " + m + ";";
      line.pop_back();
      ctx_.note(line);
    }
    if (checks_removed_ || checks_kept_)
      ctx_.note("array_analysis: " + std::to_string(checks_removed_) + " check(s) proven and removed, " +
                std::to_string(checks_kept_) + " kept for run time");
  }
};

}  // namespace

ir::Function array_analysis(const ir::Function& f, PassContext& ctx) { return Analysis(f, ctx).run(); }

}  // namespace kiln::passes
