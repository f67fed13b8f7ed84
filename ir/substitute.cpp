// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "ir/substitute.hpp"

#include <algorithm>

#include "ir/analysis.hpp"
#include "ir/atomics.hpp"
#include "ir/builder.hpp"

namespace kiln::ir {
namespace {

class Substitute : public IRMutator {
 public:
  Substitute(const Replacements& with, SubstituteOptions options) : with_(with), options_(options) {}

 protected:
  using IRMutator::visit;
  Expr visit(const VarRefExpr& e, const Expr& self) override {
    const auto it = with_.find(e.var.get());
    if (it == with_.end()) return self;
    return options_.transitive ? mutate(it->second) : it->second;
  }
  Stmt visit(const LetStmt& s, const Stmt& self) override {
    if (options_.drop_lets && with_.count(s.var.get())) return nullptr;
    return IRMutator::visit(s, self);
  }

 private:
  const Replacements& with_;
  const SubstituteOptions options_;
};

class SubstituteExpr : public IRMutator {
 public:
  SubstituteExpr(const Expr& find, const Expr& replacement) : find_(find), replacement_(replacement) {}

 protected:
  using IRMutator::visit;
  template <class Node>
  Expr replace(const Node& n, const Expr& self) {
    return equal(self, find_) ? replacement_ : IRMutator::visit(n, self);
  }
  Expr visit(const ConstExpr& n, const Expr& self) override { return replace(n, self); }
  Expr visit(const VarRefExpr& n, const Expr& self) override { return replace(n, self); }
  Expr visit(const LoadExpr& n, const Expr& self) override { return replace(n, self); }
  Expr visit(const DimExpr& n, const Expr& self) override { return replace(n, self); }
  Expr visit(const UnaryExpr& n, const Expr& self) override { return replace(n, self); }
  Expr visit(const BinaryExpr& n, const Expr& self) override { return replace(n, self); }
  Expr visit(const SelectExpr& n, const Expr& self) override { return replace(n, self); }
  Expr visit(const CastExpr& n, const Expr& self) override { return replace(n, self); }
  Expr visit(const CallExpr& n, const Expr& self) override { return replace(n, self); }

 private:
  const Expr& find_;
  const Expr& replacement_;
};

}  // namespace

Expr substitute(const Expr& e, const Replacements& with) { return Substitute(with, {}).mutate(e); }

Stmt substitute(const Stmt& s, const Replacements& with, SubstituteOptions options) {
  return Substitute(with, options).mutate(s);
}

Function substitute(const Function& f, const Replacements& with, SubstituteOptions options) {
  return Substitute(with, options).mutate(f);
}

Expr substitute(const Expr& find, const Expr& replacement, const Expr& e) {
  return SubstituteExpr(find, replacement).mutate(e);
}

// ---- Renamer ---------------------------------------------------------------------------------------------

const Var& Renamer::map(const Var& v) const {
  auto it = vars.find(v.get());
  return it == vars.end() ? v : it->second;
}

Expr Renamer::visit(const VarRefExpr& e, const Expr& self) {
  const Var& v = map(e.var);
  return v == e.var ? self : make_ref(v);
}

Expr Renamer::visit(const LoadExpr& e, const Expr& self) {
  std::vector<Expr> idx;
  const bool changed = mutate_all(e.indices, idx);
  const Var& a = map(e.array);
  if (!changed && a == e.array) return self;
  return make_load(a, std::move(idx));
}

Expr Renamer::visit(const DimExpr& e, const Expr& self) {
  const Var& a = map(e.array);
  return a == e.array ? self : make_dim(a, e.axis);
}

Stmt Renamer::visit(const AssignStmt& s, const Stmt& self) {
  Expr v = mutate(s.value);
  const Var& target = map(s.var);
  if (v == s.value && target == s.var) return self;
  return make_assign(target, v);
}

Stmt Renamer::visit(const StoreStmt& s, const Stmt& self) {
  std::vector<Expr> idx;
  bool changed = mutate_all(s.indices, idx);
  Expr v = mutate(s.value);
  const Var& a = map(s.array);
  if (!changed && v == s.value && a == s.array) return self;
  return make_store(a, std::move(idx), v);
}

// The atomic's result is a declaration, which only fresh_copy renames.
Stmt Renamer::visit(const AtomicStmt& s, const Stmt& self) {
  Stmt r = IRMutator::visit(s, self);
  const auto& a = r->as<AtomicStmt>();
  if (map(a.array) == a.array) return r;
  return make_atomic(a.result, a.op, map(a.array), a.indices, a.value, a.expected);
}

// An allocating map or stencil declares its target: only one into an existing array renames it.
Stmt Renamer::visit(const MapStmt& s, const Stmt& self) {
  Stmt r = IRMutator::visit(s, self);
  const auto& m = r->as<MapStmt>();
  if (m.allocate || map(m.target) == m.target) return r;
  return make_map_into(map(m.target), m.indices, m.shape, m.target_index, m.value, m.origin);
}

Stmt Renamer::visit(const StencilStmt& s, const Stmt& self) {
  Stmt r = IRMutator::visit(s, self);
  const auto& t = r->as<StencilStmt>();
  const Var& target = t.allocate ? t.target : map(t.target);
  const bool windows = std::any_of(t.windows.begin(), t.windows.end(), [&](const Var& w) { return map(w) != w; });
  if (!windows && target == t.target) return r;
  std::vector<Var> w;
  for (const auto& x : t.windows) w.push_back(map(x));
  return make_stencil(target, t.allocate, t.indices, t.shape, t.target_index, t.value, w, t.lo, t.hi, t.border,
                      t.cval, t.origin);
}

Stmt Renamer::visit(const BindStmt& s, const Stmt& self) {
  const Var& target = map(s.target);
  const Var& source = map(s.source);
  if (target == s.target && source == s.source) return self;
  return make_bind(target, source, s.declare);
}

Stmt Renamer::visit(const SortStmt& s, const Stmt& self) {
  const Var& keys = map(s.keys);
  const Var positions = s.positions ? map(s.positions) : nullptr;
  if (keys == s.keys && positions == s.positions) return self;
  return make_sort(keys, positions, s.origin);
}

Stmt Renamer::visit(const ScanStmt& s, const Stmt& self) {
  const Var& source = map(s.source);
  const Var& out = map(s.out);
  if (source == s.source && out == s.out) return self;
  return make_scan(source, out, s.op, s.type, s.exclusive, s.origin);
}

Stmt Renamer::visit(const ParforStmt& s, const Stmt& self) {
  Stmt r = IRMutator::visit(s, self);
  const auto& p = r->as<ParforStmt>();
  bool changed = false;
  std::vector<Reduction> reds = p.reductions;
  for (auto& red : reds) {
    changed |= map(red.var) != red.var || (red.index && map(red.index) != red.index);
    red.var = map(red.var);
    if (red.index) red.index = map(red.index);
  }
  std::vector<ArrayReduction> ars = p.array_reductions;
  for (auto& ar : ars) {
    changed |= map(ar.array) != ar.array;
    ar.array = map(ar.array);
  }
  if (!changed) return r;
  return make_parfor(p.indices, p.begins, p.ends, p.body, std::move(reds), std::move(ars), p.origin);
}

// ---- fresh_copy ------------------------------------------------------------------------------------------

namespace {

/// A Renamer that renames declarations too: given a new variable for each one a statement declares, it
/// copies the statement.
class Cloner : public Renamer {
 protected:
  using Renamer::visit;
  std::vector<Var> mapped(const std::vector<Var>& vs) const {
    std::vector<Var> out;
    for (const Var& v : vs) out.push_back(map(v));
    return out;
  }
  Stmt visit(const LetStmt& l, const Stmt&) override { return make_let(map(l.var), mutate(l.init)); }
  Stmt visit(const AtomicStmt& a, const Stmt& self) override {
    const Stmt r = Renamer::visit(a, self);
    const auto& b = r->as<AtomicStmt>();
    return make_atomic(map(b.result), b.op, b.array, b.indices, b.value, b.expected);
  }
  Stmt visit(const ForStmt& f, const Stmt&) override {
    return make_for(map(f.index), mutate(f.begin), mutate(f.end), mutate(f.body));
  }
  Stmt visit(const ParforStmt& p, const Stmt& self) override {
    const Stmt r = Renamer::visit(p, self);
    const auto& q = r->as<ParforStmt>();
    return make_parfor(mapped(q.indices), q.begins, q.ends, q.body, q.reductions, q.array_reductions, q.origin);
  }
  Stmt visit(const AllocateStmt& a, const Stmt&) override {
    std::vector<Expr> shape;
    mutate_all(a.shape, shape);
    return make_allocate(map(a.array), std::move(shape));
  }
  Stmt visit(const MapStmt& s, const Stmt& self) override {
    const Stmt r = Renamer::visit(s, self);
    const auto& m = r->as<MapStmt>();
    if (m.allocate) return make_map(map(m.target), mapped(m.indices), m.shape, m.value, m.origin);
    return make_map_into(m.target, mapped(m.indices), m.shape, m.target_index, m.value, m.origin);
  }
  Stmt visit(const ReduceStmt& s, const Stmt& self) override {
    const Stmt r = Renamer::visit(s, self);
    const auto& x = r->as<ReduceStmt>();
    return make_reduce(map(x.result), x.op, mapped(x.indices), x.shape, x.value, x.origin);
  }
  Stmt visit(const ReduceAxisStmt& s, const Stmt& self) override {
    const Stmt r = Renamer::visit(s, self);
    const auto& x = r->as<ReduceAxisStmt>();
    return make_reduce_axis(map(x.target), x.op, x.axis, x.keepdims, mapped(x.indices), x.shape, x.value, x.origin);
  }
  Stmt visit(const StencilStmt& s, const Stmt& self) override {
    const Stmt r = Renamer::visit(s, self);
    const auto& t = r->as<StencilStmt>();
    return make_stencil(t.allocate ? map(t.target) : t.target, t.allocate, mapped(t.indices), t.shape,
                        t.allocate ? std::vector<Expr>{} : t.target_index, t.value, t.windows, t.lo, t.hi, t.border,
                        t.cval, t.origin);
  }
};

}  // namespace

Stmt fresh_copy(const Stmt& s) {
  Cloner clone;
  for (const VarNode* v : declared_in(s)) clone.vars[v] = make_var(v->name, v->type, v->kind, v->where);
  return clone.mutate(s);
}

}  // namespace kiln::ir
