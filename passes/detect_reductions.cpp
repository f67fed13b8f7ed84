// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "passes/detect_reductions.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ir/analysis.hpp"
#include "ir/atomics.hpp"
#include "ir/builder.hpp"
#include "ir/printer.hpp"
#include "ir/reductions.hpp"
#include "ir/visitor.hpp"

namespace kiln::passes {
namespace {

using ir::ReduceOp;

std::string describe(const ir::Var& v) {
  std::string s = "'" + v->name + "'";
  if (!v->where.empty()) s += " (declared at " + v->where + ")";
  return s;
}

std::string loop_name(const ir::ParforStmt& p) { return p.origin.empty() ? "a prange" : "the " + p.origin; }

/// The reduction an assignment `v = v op e` implies, if it has that shape.
std::optional<ReduceOp> implied_op(const ir::AssignStmt& a) {
  for (ReduceOp op : {ReduceOp::Add, ReduceOp::Mul, ReduceOp::Min, ReduceOp::Max})
    if (ir::is_reduction_update(a, op)) return op;
  return std::nullopt;
}

/// A write into an array declared outside the parfor: a store, or a map into an existing array.
struct ArrayWrite {
  ir::Var array;
  std::vector<ir::Expr> index;
  ir::Expr value;
};

/// The reduction an array write `a[k] = a[k] op e` implies, if it has that shape.
std::optional<ReduceOp> implied_array_op(const ArrayWrite& w) {
  for (ReduceOp op : {ReduceOp::Add, ReduceOp::Mul, ReduceOp::Min, ReduceOp::Max})
    if (ir::is_array_update(w.array, w.index, w.value, {w.array, op})) return op;
  return std::nullopt;
}

/// Everything a parfor body does to variables declared outside it.
struct BodyFacts {
  ir::VarSet defined;  // declared inside the body
  std::vector<ir::Var> scalars;  // outer scalars written, in first-write order
  std::map<const ir::VarNode*, std::vector<const ir::AssignStmt*>> assigns;
  std::map<const ir::VarNode*, std::vector<ReduceOp>> inherited;  // reduced by nested parfors
  std::vector<const ir::IfStmt*> arg_candidates;  // `if c { v = x; k = i }` on outer v, k
  std::vector<ir::Var> arrays;  // outer arrays written, in first-write order
  std::map<const ir::VarNode*, std::vector<ArrayWrite>> writes;
  std::map<const ir::VarNode*, std::vector<ReduceOp>> inherited_arrays;
  std::map<const ir::VarNode*, std::vector<const ir::AtomicStmt*>> atomics;  // outer arrays updated atomically
  std::vector<const ir::AtomicStmt*> own_atomics;  // the atomics of this body, not of a nested parfor

  void note_scalar(const ir::Var& v) {
    if (!assigns.count(v.get()) && !inherited.count(v.get())) scalars.push_back(v);
  }
  void note_array(const ir::Var& a) {
    if (!writes.count(a.get()) && !inherited_arrays.count(a.get())) arrays.push_back(a);
  }
  bool outer(const ir::Var& v) const { return !defined.count(v.get()); }

  void walk(const ir::Stmt& s) {
    if (!s) return;
    // What it declares, for the statements after it or for its own body, is not a variable from outside.
    for (const auto& v : ir::declared_by(s)) defined.insert(v.get());
    for (const auto& i : ir::indices_of(s)) defined.insert(i.get());
    switch (s->kind) {
      case ir::StmtKind::Block:
        for (const auto& x : s->as<ir::BlockStmt>().stmts) walk(x);
        break;
      case ir::StmtKind::Let:
      case ir::StmtKind::Allocate:
      case ir::StmtKind::Reduce:
      case ir::StmtKind::ReduceAxis:
      case ir::StmtKind::Bind:
      case ir::StmtKind::Sort:  // host code: never in a parfor body
      case ir::StmtKind::Scan:
      case ir::StmtKind::Check: break;
      case ir::StmtKind::Assign: {
        const auto& a = s->as<ir::AssignStmt>();
        if (!outer(a.var)) break;
        note_scalar(a.var);
        assigns[a.var.get()].push_back(&a);
        break;
      }
      case ir::StmtKind::Store: {
        const auto& st = s->as<ir::StoreStmt>();
        if (!outer(st.array)) break;
        note_array(st.array);
        writes[st.array.get()].push_back({st.array, st.indices, st.value});
        break;
      }
      case ir::StmtKind::Atomic: {
        const auto& a = s->as<ir::AtomicStmt>();
        own_atomics.push_back(&a);
        if (outer(a.array)) atomics[a.array.get()].push_back(&a);
        break;
      }
      case ir::StmtKind::Map: {
        const auto& m = s->as<ir::MapStmt>();
        if (!m.allocate && outer(m.target)) {
          note_array(m.target);
          writes[m.target.get()].push_back({m.target, m.target_index, m.value});
        }
        break;
      }
      case ir::StmtKind::For: walk(s->as<ir::ForStmt>().body); break;
      case ir::StmtKind::If: {
        const auto& i = s->as<ir::IfStmt>();
        if (looks_like_arg_update(i)) arg_candidates.push_back(&i);
        walk(i.then_body);
        walk(i.else_body);
        break;
      }
      case ir::StmtKind::Parfor: nested_parfor(s->as<ir::ParforStmt>()); break;
      case ir::StmtKind::Launch: nested_parfor(s->as<ir::LaunchStmt>().parfor()); break;
      case ir::StmtKind::Stencil: {
        const auto& st = s->as<ir::StencilStmt>();
        if (!st.allocate && outer(st.target)) {
          note_array(st.target);
          writes[st.target.get()].push_back({st.target, st.target_index, st.value});
        }
        break;
      }
    }
  }

  /// `if ... { v = x; k = i }` with v and k declared outside: perhaps an argmin/argmax update.
  bool looks_like_arg_update(const ir::IfStmt& i) const {
    const auto* b = ir::dyn<ir::BlockStmt>(i.then_body);
    if (i.else_body || !b || b->stmts.size() != 2) return false;
    const auto* v = ir::dyn<ir::AssignStmt>(b->stmts[0]);
    const auto* k = ir::dyn<ir::AssignStmt>(b->stmts[1]);
    return v && k && outer(v->var) && outer(k->var) && v->var != k->var;
  }

  void nested_parfor(const ir::ParforStmt& p) {
    // A nested parfor has already declared its own reductions; those on our outer variables are ours
    // too (with the same operator), and its updates of them are its business.
    for (const auto& i : p.indices) defined.insert(i.get());
    BodyFacts inner;
    inner.defined = defined;
    for (const auto& r : p.reductions) {
      inner.defined.insert(r.var.get());
      if (r.index) inner.defined.insert(r.index.get());
    }
    for (const auto& r : p.array_reductions) inner.defined.insert(r.array.get());
    inner.walk(p.body);
    for (const auto& r : p.reductions) {
      if (!outer(r.var)) continue;
      note_scalar(r.var);
      inherited[r.var.get()].push_back(r.op);
      if (r.index) {
        note_scalar(r.index);
        inherited[r.index.get()].push_back(r.op);
      }
    }
    for (const auto& r : p.array_reductions) {
      if (!outer(r.array)) continue;
      note_array(r.array);
      inherited_arrays[r.array.get()].push_back(r.op);
    }
    for (const auto& v : inner.scalars) {
      if (!outer(v)) continue;
      note_scalar(v);
      auto& mine = assigns[v.get()];
      mine.insert(mine.end(), inner.assigns[v.get()].begin(), inner.assigns[v.get()].end());
    }
    for (const auto& a : inner.arrays) {
      if (!outer(a)) continue;
      note_array(a);
      auto& mine = writes[a.get()];
      mine.insert(mine.end(), inner.writes[a.get()].begin(), inner.writes[a.get()].end());
    }
    arg_candidates.insert(arg_candidates.end(), inner.arg_candidates.begin(), inner.arg_candidates.end());
    for (const auto& [a, list] : inner.atomics)
      if (!defined.count(a)) atomics[a].insert(atomics[a].end(), list.begin(), list.end());
  }
};

/// True if writing array index `index` from one iteration of `p` cannot collide with another iteration:
/// every index variable of p appears alone (plus a loop-invariant offset) in its own position.
bool iteration_private(const std::vector<ir::Expr>& index, const ir::ParforStmt& p, const ir::VarSet& inside) {
  std::vector<bool> used(index.size(), false);
  auto invariant = [&](const ir::Expr& e) {
    for (const auto& v : ir::free_vars(e))
      if (inside.count(v.get())) return false;
    return true;
  };
  auto is_shifted = [&](const ir::Expr& e, const ir::VarNode* i) {
    if (const auto* r = ir::dyn<ir::VarRefExpr>(e)) return r->var.get() == i;
    const auto* b = ir::dyn<ir::BinaryExpr>(e);
    if (!b || (b->op != BinaryOp::Add && b->op != BinaryOp::Sub)) return false;
    const auto* r = ir::dyn<ir::VarRefExpr>(b->a);
    if (r && r->var.get() == i && invariant(b->b)) return true;
    r = ir::dyn<ir::VarRefExpr>(b->b);
    return b->op == BinaryOp::Add && r && r->var.get() == i && invariant(b->a);
  };
  for (const auto& i : p.indices) {
    bool found = false;
    for (size_t d = 0; d < index.size() && !found; ++d)
      if (!used[d] && is_shifted(index[d], i.get())) used[d] = found = true;
    if (!found) return false;
  }
  return true;
}

/// True if `s` reads `v` anywhere other than inside the updates of reduction r (or array reduction ar).
bool read_outside_updates(const ir::Stmt& s, const ir::VarNode* v, const ir::Reduction* r, const ir::ArrayReduction* ar) {
  struct Finder : ir::IRVisitor {
    const ir::VarNode* v;
    const ir::Reduction* r;
    const ir::ArrayReduction* ar;
    bool found = false;
    void visit(const ir::VarRefExpr& e) override { found |= e.var.get() == v; }
    void visit(const ir::LoadExpr& e) override {
      found |= e.array.get() == v;
      ir::IRVisitor::visit(e);
    }
    void visit(const ir::AssignStmt& a) override {
      if (r && a.var.get() == v && ir::is_reduction_update(a, r->op)) return;
      ir::IRVisitor::visit(a);
    }
    void visit(const ir::IfStmt& i) override {
      if (r && ir::match_arg_update(i, *r)) return;
      ir::IRVisitor::visit(i);
    }
    void visit(const ir::StoreStmt& s) override {
      if (ar && ir::is_array_update(s, *ar)) return;
      ir::IRVisitor::visit(s);
    }
    void visit(const ir::MapStmt& m) override {
      if (ar && !m.allocate && ir::is_array_update(m.target, m.target_index, m.value, *ar)) return;
      ir::IRVisitor::visit(m);
    }
    void visit(const ir::ParforStmt& p) override {
      for (const auto& x : p.reductions)
        if (x.var.get() == v || x.index.get() == v) return;  // checked when that parfor was processed
      for (const auto& x : p.array_reductions)
        if (x.array.get() == v) return;
      ir::IRVisitor::visit(p);
    }
  } finder;
  finder.v = v;
  finder.r = r;
  finder.ar = ar;
  finder.walk(s);
  return finder.found;
}

class Detector : public ir::IRMutator {
 public:
  Detector(const ir::Function& f, PassContext& ctx) : fn_(f), ctx_(ctx) {}

 protected:
  using ir::IRMutator::visit;

  ir::Stmt visit(const ir::ParforStmt& p, const ir::Stmt& self) override {
    ir::Stmt lowered = ir::IRMutator::visit(p, self);  // inner parfors first
    const auto& q = lowered->as<ir::ParforStmt>();
    BodyFacts facts;
    for (const auto& i : q.indices) facts.defined.insert(i.get());
    for (const auto& r : q.reductions) {
      facts.defined.insert(r.var.get());
      if (r.index) facts.defined.insert(r.index.get());
    }
    for (const auto& r : q.array_reductions) facts.defined.insert(r.array.get());
    facts.walk(q.body);
    ir::VarSet inside = facts.defined;
    for (const auto& i : q.indices) inside.insert(i.get());

    std::vector<ir::Reduction> reductions = q.reductions;
    std::vector<ir::ArrayReduction> array_reductions = q.array_reductions;
    ir::VarSet handled;
    arg_reductions(q, facts, reductions, handled);
    for (const ir::Var& v : facts.scalars)
      if (!handled.count(v.get())) reductions.push_back({v, scalar_op(q, v, facts), nullptr});
    for (const ir::Var& a : facts.arrays) {
      if (const auto atomic = facts.atomics.find(a.get()); atomic != facts.atomics.end())
        mixed_atomics(q, a, *atomic->second.front());
      if (auto op = array_op(q, a, facts, inside)) array_reductions.push_back({a, *op});
    }
    note_order_dependence(q, facts.own_atomics);

    for (const auto& r : reductions) {
      if (read_outside_updates(q.body, r.var.get(), &r, nullptr) ||
          (r.index && read_outside_updates(q.body, r.index.get(), &r, nullptr)))
        fail(fmt::format("scalar {} is a {} reduction of {} but is also read inside the loop, where it holds only a "
                         "partial result. Read it after the loop, or use a variable declared inside the loop",
                         describe(r.var), ir::name_of(r.op), loop_name(q)));
    }
    for (const auto& r : array_reductions)
      if (read_outside_updates(q.body, r.array.get(), nullptr, &r))
        fail(fmt::format("array {} is a {} reduction of {} (updated at indices that repeat across iterations) but is "
                         "also read inside the loop, where it holds only partial results",
                         describe(r.array), ir::name_of(r.op), loop_name(q)));

    const std::string where = q.origin.empty() ? "prange" : q.origin;
    for (size_t k = q.reductions.size(); k < reductions.size(); ++k) {
      const auto& r = reductions[k];
      ctx_.note(fmt::format("reduction: {}{} ({}, identity {}) in {}", r.var->name,
                            r.index ? " @" + r.index->name : std::string(), ir::name_of(r.op),
                            ir::to_string(ir::identity_of(r.op, r.var->type.elem)), where));
    }
    for (size_t k = q.array_reductions.size(); k < array_reductions.size(); ++k)
      ctx_.note(fmt::format("array reduction: {}[*] ({}) in {}", array_reductions[k].array->name,
                            ir::name_of(array_reductions[k].op), where));
    if (reductions.size() == q.reductions.size() && array_reductions.size() == q.array_reductions.size())
      return lowered;
    return ir::make_parfor(q.indices, q.begins, q.ends, q.body, std::move(reductions), std::move(array_reductions),
                           q.origin);
  }

 private:
  const ir::Function& fn_;
  PassContext& ctx_;

  [[noreturn]] void fail(const std::string& msg) const { throw TraceError(fmt::format("kernel '{}': {}", fn_.name, msg)); }

  /// An array updated by atomics in a prange may not also be written plainly there: a plain write races
  /// with the atomics of other iterations (and an `a[k] += e` would become an array reduction, updating a
  /// private copy the atomics never see).
  [[noreturn]] void mixed_atomics(const ir::ParforStmt& p, const ir::Var& a, const ir::AtomicStmt& atomic) const {
    fail(fmt::format("array {} is updated by kiln::{} and also written with a plain store inside {}; a plain write "
                     "races with the atomics of other iterations. Inside the loop update it only through kiln::atomic_* "
                     "(kiln::atomic_exchange for a plain write), or write it in a loop of its own",
                     describe(a), ir::name_of(atomic.op), loop_name(p)));
  }

  /// Float atomic add/sub round in the order the updates happen, which differs between runs and thread counts
  /// on parallel targets; exchange and compare-exchange let the order pick the winner. Said once per array and
  /// operation, with the reproducible alternative.
  void note_order_dependence(const ir::ParforStmt& p, const std::vector<const ir::AtomicStmt*>& atomics) {
    std::vector<std::pair<const ir::VarNode*, AtomicOp>> said;
    const std::string where = p.origin.empty() ? "a prange" : p.origin;
    for (const ir::AtomicStmt* a : atomics) {
      const DType t = a->array->type.elem;
      if (!ir::order_dependent(a->op, t)) continue;
      if (std::find(said.begin(), said.end(), std::make_pair(a->array.get(), a->op)) != said.end()) continue;
      said.emplace_back(a->array.get(), a->op);
      if (a->op == AtomicOp::Add || a->op == AtomicOp::Sub)
        ctx_.note(Topic::other, fmt::format("not reproducible: kiln::{} on {} array {} in {} rounds in the order the updates "
                              "happen, which varies between runs and thread counts, so its result is not bitwise "
                              "reproducible. For a sum that is the same run to run write `{}[k] += x`: kiln makes it an "
                              "array reduction, whose per-thread copies combine in a fixed order",
                              ir::name_of(a->op), name_of(t), a->array->name, where, a->array->name));
      else
        ctx_.note(Topic::other, fmt::format("order-dependent: kiln::{} on {} in {}: which iteration's value stays depends on the "
                              "order of the updates, which varies between runs and thread counts",
                              ir::name_of(a->op), a->array->name, where));
    }
  }

  std::string advice(const ir::Var& v) const {
    return fmt::format("Iterations of a prange run in parallel, so this would race. Update it only as {0} += e, {0} -= e, "
                       "{0} *= e, {0} /= e, {0} = kiln::min({0}, e), {0} = kiln::max({0}, e) or, for an argmin/argmax, "
                       "`if_(x < {0}, [&] {{ {0} = x; k = i; }})`, or declare it inside the loop",
                       v->name);
  }

  /// `if_(x < best, [&] { best = x; k = i; })`: an (value, index) pair reduction.
  void arg_reductions(const ir::ParforStmt& p, BodyFacts& facts, std::vector<ir::Reduction>& out, ir::VarSet& handled) {
    for (const ir::IfStmt* cand : facts.arg_candidates) {
      const auto& b = cand->then_body->as<ir::BlockStmt>();
      const ir::Var v = b.stmts[0]->as<ir::AssignStmt>().var;
      const ir::Var k = b.stmts[1]->as<ir::AssignStmt>().var;
      if (k->type.elem != DType::I64 || v->type.elem == DType::Bool) continue;
      std::optional<ir::Reduction> match;
      for (ReduceOp op : {ReduceOp::ArgMin, ReduceOp::ArgMax}) {
        const ir::Reduction r{v, op, k};
        if (ir::match_arg_update(*cand, r)) match = r;
      }
      if (!match) continue;
      auto existing = std::find_if(out.begin(), out.end(), [&](const ir::Reduction& r) { return r.var == v; });
      if (existing != out.end()) {
        if (existing->op != match->op || existing->index != k)
          fail(fmt::format("scalar {} is updated both as an {} and as an {} in {}", describe(v),
                           ir::name_of(existing->op), ir::name_of(match->op), loop_name(p)));
      } else {
        out.push_back(*match);
      }
      // Its two assignments are this update's; any other assignment of v or k is a conflict.
      for (const ir::Var& x : {v, k}) {
        auto& list = facts.assigns[x.get()];
        list.erase(std::remove_if(list.begin(), list.end(),
                                  [&](const ir::AssignStmt* a) {
                                    return a == b.stmts[0].get() || a == b.stmts[1].get();
                                  }),
                   list.end());
        handled.insert(x.get());
      }
    }
    for (const auto& r : out) {
      if (!ir::is_arg_reduction(r.op)) continue;
      for (const ir::Var& x : {r.var, r.index})
        if (!facts.assigns[x.get()].empty() || facts.inherited.count(x.get()))
          fail(fmt::format("scalar {} is the {} pair ({}, {}) of {} but is also assigned elsewhere in the loop. {}",
                           describe(x), ir::name_of(r.op), r.var->name, r.index->name, loop_name(p), advice(x)));
    }
  }

  ReduceOp scalar_op(const ir::ParforStmt& p, const ir::Var& v, BodyFacts& facts) const {
    const auto& assigns = facts.assigns[v.get()];
    const auto& inherited = facts.inherited[v.get()];
    if (v->type.elem == DType::Bool)
      fail(fmt::format("bool scalar {} is assigned inside {}; bool reductions are not supported (use an int32 with "
                       "kiln::max/min). {}",
                       describe(v), loop_name(p), advice(v)));
    std::optional<ReduceOp> op;
    auto agree = [&](ReduceOp o, const std::string& how) {
      if (op && *op != o)
        fail(fmt::format("scalar {} is updated with both {} and {} inside {} ({}); a reduction needs one operator",
                         describe(v), ir::name_of(*op), ir::name_of(o), loop_name(p), how));
      op = o;
    };
    for (ReduceOp o : inherited) agree(o, "in a nested prange");
    for (const ir::AssignStmt* a : assigns) {
      const std::string text = fmt::format("{} = {}", v->name, ir::to_string(a->value));
      const auto o = implied_op(*a);
      if (!o)
        fail(fmt::format("scalar {} is assigned inside {} as `{}`, which is not a reduction. {}", describe(v),
                         loop_name(p), text, advice(v)));
      agree(*o, fmt::format("`{}`", text));
    }
    return *op;
  }

  /// An array written at indices that may repeat across iterations must be an array reduction:
  /// `hist[k] += 1`, `y[i % 4] += x[i]`, `acc[:] += row`. Writes at the iteration's own indices are not.
  std::optional<ReduceOp> array_op(const ir::ParforStmt& p, const ir::Var& a, BodyFacts& facts,
                                   const ir::VarSet& inside) const {
    const auto& writes = facts.writes[a.get()];
    const auto& inherited = facts.inherited_arrays[a.get()];
    bool shared = !inherited.empty();
    for (const ArrayWrite& w : writes) shared |= !iteration_private(w.index, p, inside);
    if (!shared) return std::nullopt;  // every iteration writes its own elements
    std::optional<ReduceOp> op;
    auto agree = [&](ReduceOp o, const std::string& how) {
      if (op && *op != o)
        fail(fmt::format("array {} is updated with both {} and {} inside {} ({}); an array reduction needs one operator",
                         describe(a), ir::name_of(*op), ir::name_of(o), loop_name(p), how));
      op = o;
    };
    for (ReduceOp o : inherited) agree(o, "in a nested prange");
    bool any_update = !inherited.empty();
    for (const ArrayWrite& w : writes) any_update |= implied_array_op(w).has_value();
    if (!any_update) {
      ctx_.note(fmt::format("note: {} is written in {} at indices not derived from the loop index; kiln assumes they do "
                            "not collide",
                            a->name, p.origin.empty() ? "a prange" : p.origin));
      return std::nullopt;
    }
    if (a->type.elem == DType::Bool)
      fail(fmt::format("bool array {} is updated at indices that repeat across iterations of {}; bool array reductions "
                       "are not supported",
                       describe(a), loop_name(p)));
    for (const ArrayWrite& w : writes) {
      std::vector<std::string> idx;
      for (const ir::Expr& i : w.index) idx.push_back(ir::to_string(i));
      const std::string text = fmt::format("{}[{}] = {}", a->name, fmt::join(idx, ", "), ir::to_string(w.value));
      const auto o = implied_array_op(w);
      if (!o)
        fail(fmt::format("array {} is written inside {} as `{}` and also updated as a reduction at indices that repeat "
                         "across iterations; only updates `a[k] op= e` can be made race-free",
                         describe(a), loop_name(p), text));
      agree(*o, fmt::format("`{}`", text));
    }
    return op;
  }
};

}  // namespace

ir::Function detect_reductions(const ir::Function& f, PassContext& ctx) {
  Detector d(f, ctx);
  return d.mutate(f);
}

}  // namespace kiln::passes
