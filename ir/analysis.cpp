// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "ir/analysis.hpp"

#include <cstring>

#include "ir/straight_line.hpp"
#include "ir/visitor.hpp"

namespace kiln::ir {
namespace {

class UsesVar : public IRVisitor {
 public:
  explicit UsesVar(const VarNode* v) : v_(v) {}
  bool found = false;

 protected:
  void visit(const VarRefExpr& e) override { found |= e.var.get() == v_; }
  void visit(const LoadExpr& e) override {
    found |= e.array.get() == v_;
    IRVisitor::visit(e);
  }
  void visit(const DimExpr& e) override { found |= e.array.get() == v_; }
  void visit(const MapStmt& s) override {
    found |= s.target.get() == v_;
    IRVisitor::visit(s);
  }
  void visit(const BindStmt& s) override { found |= s.target.get() == v_ || s.source.get() == v_; }
  void visit(const SortStmt& s) override { found |= s.keys.get() == v_ || s.positions.get() == v_; }
  void visit(const ScanStmt& s) override { found |= s.source.get() == v_ || s.out.get() == v_; }
  void visit(const StencilStmt& s) override {
    found |= s.target.get() == v_;
    for (const auto& w : s.windows) found |= w.get() == v_;
    IRVisitor::visit(s);
  }
  void visit(const ParforStmt& s) override {
    for (const auto& r : s.reductions) found |= r.var.get() == v_ || r.index.get() == v_;
    for (const auto& r : s.array_reductions) found |= r.array.get() == v_;
    IRVisitor::visit(s);
  }
  void visit(const AssignStmt& s) override {
    found |= s.var.get() == v_;
    IRVisitor::visit(s);
  }
  void visit(const StoreStmt& s) override {
    found |= s.array.get() == v_;
    IRVisitor::visit(s);
  }
  void visit(const AtomicStmt& s) override {
    found |= s.array.get() == v_ || s.result.get() == v_;
    IRVisitor::visit(s);
  }

 private:
  const VarNode* v_;
};

class HasLoad : public IRVisitor {
 public:
  bool found = false;

 protected:
  void visit(const LoadExpr&) override { found = true; }
};

/// Collects variables used before (or without) a definition inside the walked tree.
class FreeVars : public IRVisitor {
 public:
  std::vector<Var> out;

 protected:
  void use(const Var& v) {
    if (defined_.count(v.get()) || seen_.count(v.get())) return;
    seen_.insert(v.get());
    out.push_back(v);
  }
  void visit(const VarRefExpr& e) override { use(e.var); }
  void visit(const LoadExpr& e) override {
    use(e.array);
    IRVisitor::visit(e);
  }
  void visit(const DimExpr& e) override { use(e.array); }
  void visit(const LetStmt& s) override {
    IRVisitor::visit(s);
    defined_.insert(s.var.get());
  }
  void visit(const AssignStmt& s) override {
    use(s.var);
    IRVisitor::visit(s);
  }
  void visit(const StoreStmt& s) override {
    use(s.array);
    IRVisitor::visit(s);
  }
  void visit(const AtomicStmt& s) override {
    use(s.array);
    IRVisitor::visit(s);
    defined_.insert(s.result.get());
  }
  void visit(const ForStmt& s) override {
    walk(s.begin);
    walk(s.end);
    defined_.insert(s.index.get());
    walk(s.body);
  }
  void visit(const AllocateStmt& s) override {
    IRVisitor::visit(s);
    defined_.insert(s.array.get());
  }
  void visit(const MapStmt& s) override {
    for (const auto& e : s.shape) walk(e);
    for (const auto& i : s.indices) defined_.insert(i.get());
    if (!s.allocate) use(s.target);
    for (const auto& e : s.target_index) walk(e);
    walk(s.value);
    if (s.allocate) defined_.insert(s.target.get());
  }
  void visit(const ReduceStmt& s) override {
    for (const auto& e : s.shape) walk(e);
    for (const auto& i : s.indices) defined_.insert(i.get());
    walk(s.value);
    defined_.insert(s.result.get());
  }
  void visit(const ReduceAxisStmt& s) override {
    for (const auto& e : s.shape) walk(e);
    for (const auto& i : s.indices) defined_.insert(i.get());
    walk(s.value);
    defined_.insert(s.target.get());
  }
  void visit(const SortStmt& s) override {
    use(s.keys);
    if (s.positions) use(s.positions);
  }
  void visit(const ScanStmt& s) override {
    use(s.source);
    use(s.out);
  }
  void visit(const BindStmt& s) override {
    use(s.source);
    if (s.declare) defined_.insert(s.target.get());
    else use(s.target);
  }
  void visit(const StencilStmt& s) override {
    for (const auto& e : s.shape) walk(e);
    for (const auto& w : s.windows) use(w);
    if (!s.allocate) use(s.target);
    for (const auto& i : s.indices) defined_.insert(i.get());
    for (const auto& e : s.target_index) walk(e);
    walk(s.value);
    walk(s.cval);
    if (s.allocate) defined_.insert(s.target.get());
  }
  void visit(const ParforStmt& s) override {
    for (const auto& b : s.begins) walk(b);
    for (const auto& e : s.ends) walk(e);
    for (const auto& r : s.reductions) {
      use(r.var);
      if (r.index) use(r.index);
    }
    for (const auto& r : s.array_reductions) use(r.array);
    for (const auto& i : s.indices) defined_.insert(i.get());
    walk(s.body);
  }

 private:
  VarSet defined_, seen_;
};

class Writes : public IRVisitor {
 public:
  VarSet assigned, stored;

 protected:
  void visit(const AssignStmt& s) override {
    assigned.insert(s.var.get());
    IRVisitor::visit(s);
  }
  void visit(const StoreStmt& s) override {
    stored.insert(s.array.get());
    IRVisitor::visit(s);
  }
  void visit(const AtomicStmt& s) override {
    stored.insert(s.array.get());
    IRVisitor::visit(s);
  }
  void visit(const MapStmt& s) override {
    stored.insert(s.target.get());
    IRVisitor::visit(s);
  }
  void visit(const StencilStmt& s) override {
    stored.insert(s.target.get());
    IRVisitor::visit(s);
  }
  void visit(const BindStmt& s) override {
    if (!s.declare) assigned.insert(s.target.get());  // rebinding changes what the variable names
  }
  void visit(const SortStmt& s) override {
    stored.insert(s.keys.get());
    if (s.positions) stored.insert(s.positions.get());
  }
  void visit(const ScanStmt& s) override { stored.insert(s.out.get()); }
};

class Counter : public IRVisitor {
 public:
  size_t n = 0;

 protected:
  void visit(const ConstExpr&) override { ++n; }
  void visit(const VarRefExpr&) override { ++n; }
  void visit(const DimExpr&) override { ++n; }
  void visit(const LoadExpr& e) override {
    ++n;
    IRVisitor::visit(e);
  }
  void visit(const UnaryExpr& e) override {
    ++n;
    IRVisitor::visit(e);
  }
  void visit(const BinaryExpr& e) override {
    ++n;
    IRVisitor::visit(e);
  }
  void visit(const SelectExpr& e) override {
    ++n;
    IRVisitor::visit(e);
  }
  void visit(const CastExpr& e) override {
    ++n;
    IRVisitor::visit(e);
  }
  void visit(const CallExpr& e) override {
    n += 4;  // intrinsics are several instructions
    IRVisitor::visit(e);
  }
};

}  // namespace

bool uses(const Expr& e, const VarNode* v) {
  UsesVar r(v);
  r.walk(e);
  return r.found;
}

bool uses(const Stmt& s, const VarNode* v) {
  UsesVar r(v);
  r.walk(s);
  return r.found;
}

bool has_load(const Expr& e) {
  HasLoad h;
  h.walk(e);
  return h.found;
}

bool loads_from(const Expr& e, const VarNode* array) {
  struct Finder : IRVisitor {
    const VarNode* array;
    bool found = false;
    void visit(const LoadExpr& l) override {
      found |= l.array.get() == array;
      IRVisitor::visit(l);
    }
  } f;
  f.array = array;
  f.walk(e);
  return f.found;
}

std::vector<Var> free_vars(const Stmt& s) {
  FreeVars f;
  f.walk(s);
  return std::move(f.out);
}

std::vector<Var> free_vars(const Expr& e) {
  FreeVars f;
  f.walk(e);
  return std::move(f.out);
}

std::vector<Var> declared_by(const Stmt& s) {
  switch (s->kind) {
    case StmtKind::Let: return {s->as<LetStmt>().var};
    case StmtKind::Atomic: return {s->as<AtomicStmt>().result};
    case StmtKind::Allocate: return {s->as<AllocateStmt>().array};
    case StmtKind::Map:
      if (s->as<MapStmt>().allocate) return {s->as<MapStmt>().target};
      return {};
    case StmtKind::Reduce: return {s->as<ReduceStmt>().result};
    case StmtKind::ReduceAxis: return {s->as<ReduceAxisStmt>().target};
    case StmtKind::Stencil:
      if (s->as<StencilStmt>().allocate) return {s->as<StencilStmt>().target};
      return {};
    case StmtKind::Bind:
      if (s->as<BindStmt>().declare) return {s->as<BindStmt>().target};
      return {};
    default: return {};
  }
}

std::vector<Var> indices_of(const Stmt& s) {
  switch (s->kind) {
    case StmtKind::For: return {s->as<ForStmt>().index};
    case StmtKind::Parfor: return s->as<ParforStmt>().indices;
    case StmtKind::Map: return s->as<MapStmt>().indices;
    case StmtKind::Reduce: return s->as<ReduceStmt>().indices;
    case StmtKind::ReduceAxis: return s->as<ReduceAxisStmt>().indices;
    case StmtKind::Stencil: return s->as<StencilStmt>().indices;
    default: return {};
  }
}

namespace {

void collect_declared(const Stmt& s, VarSet& out) {
  if (!s) return;
  for (const Var& v : declared_by(s)) out.insert(v.get());
  for (const Var& i : indices_of(s)) out.insert(i.get());
  switch (s->kind) {
    case StmtKind::Block:
      for (const auto& x : s->as<BlockStmt>().stmts) collect_declared(x, out);
      break;
    case StmtKind::For: collect_declared(s->as<ForStmt>().body, out); break;
    case StmtKind::Parfor: collect_declared(s->as<ParforStmt>().body, out); break;
    case StmtKind::Launch: collect_declared(s->as<LaunchStmt>().body, out); break;
    case StmtKind::If:
      collect_declared(s->as<IfStmt>().then_body, out);
      collect_declared(s->as<IfStmt>().else_body, out);
      break;
    default: break;  // the other statements hold only expressions
  }
}

}  // namespace

VarSet declared_in(const Stmt& s) {
  VarSet out;
  collect_declared(s, out);
  return out;
}

VarSet assigned_vars(const Stmt& s) {
  Writes w;
  w.walk(s);
  return std::move(w.assigned);
}

VarSet stored_arrays(const Stmt& s) {
  Writes w;
  w.walk(s);
  return std::move(w.stored);
}

bool may_alias(const VarNode* a, const VarNode* b) {
  if (a == b) return true;
  if (!a->type.is_array() || !b->type.is_array() || a->type.elem != b->type.elem) return false;
  // Parameters are distinct arrays by the calling convention (the call-time overlap check establishes it);
  // a binding may name any array of its type.
  return a->kind == VarKind::Binding || b->kind == VarKind::Binding;
}

bool equal(const Expr& a, const Expr& b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind || a->type != b->type) return false;
  auto all_equal = [](const std::vector<Expr>& x, const std::vector<Expr>& y) {
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (!equal(x[i], y[i])) return false;
    return true;
  };
  switch (a->kind) {
    case ExprKind::Const: {
      const auto &x = a->as<ConstExpr>(), &y = b->as<ConstExpr>();
      return x.i == y.i && std::memcmp(&x.f, &y.f, sizeof x.f) == 0;
    }
    case ExprKind::VarRef: return a->as<VarRefExpr>().var == b->as<VarRefExpr>().var;
    case ExprKind::Load: {
      const auto &x = a->as<LoadExpr>(), &y = b->as<LoadExpr>();
      return x.array == y.array && all_equal(x.indices, y.indices);
    }
    case ExprKind::Dim: {
      const auto &x = a->as<DimExpr>(), &y = b->as<DimExpr>();
      return x.array == y.array && x.axis == y.axis;
    }
    case ExprKind::Unary: {
      const auto &x = a->as<UnaryExpr>(), &y = b->as<UnaryExpr>();
      return x.op == y.op && equal(x.a, y.a);
    }
    case ExprKind::Binary: {
      const auto &x = a->as<BinaryExpr>(), &y = b->as<BinaryExpr>();
      return x.op == y.op && equal(x.a, y.a) && equal(x.b, y.b);
    }
    case ExprKind::Select: {
      const auto &x = a->as<SelectExpr>(), &y = b->as<SelectExpr>();
      return equal(x.cond, y.cond) && equal(x.a, y.a) && equal(x.b, y.b);
    }
    case ExprKind::Cast: return equal(a->as<CastExpr>().a, b->as<CastExpr>().a);
    case ExprKind::Call: {
      const auto &x = a->as<CallExpr>(), &y = b->as<CallExpr>();
      return x.fn == y.fn && all_equal(x.args, y.args);
    }
  }
  return false;
}

size_t node_count(const Expr& e) {
  Counter c;
  c.walk(e);
  return c.n;
}

size_t node_count(const Stmt& s) {
  Counter c;
  c.walk(s);
  return c.n;
}

bool runs_a_loop(const Stmt& s) {
  struct Finder final : IRVisitor {
    bool found = false;
    void visit(const ForStmt&) override { found = true; }
  } finder;
  finder.walk(s);
  return finder.found;
}

bool can_fail(const Stmt& s) {
  struct Finder final : IRVisitor {
    bool found = false;
    void visit(const AllocateStmt&) override { found = true; }
    void visit(const CheckStmt&) override { found = true; }
  } finder;
  finder.walk(s);
  return finder.found;
}

void straight_line(const Stmt& s, std::vector<Stmt>& out) {
  if (!s) return;
  if (const auto* b = dyn<BlockStmt>(s)) {
    for (const Stmt& c : b->stmts) straight_line(c, out);
    return;
  }
  out.push_back(s);
}

std::vector<const LaunchStmt*> result_only_launches(const Function& f) {
  std::vector<const LaunchStmt*> out;
  for (const Expr& r : f.result_exprs())
    if (has_load(r)) return out;  // an element read needs the device: nothing could wait for the totals
  std::vector<Stmt> seq;
  straight_line(f.body, seq);
  for (std::size_t i = 0; i < seq.size(); ++i) {
    const auto* launch = dyn<LaunchStmt>(seq[i]);
    if (!launch || launch->parfor().reductions.empty()) continue;
    bool only_results = true;
    for (std::size_t j = i + 1; j < seq.size() && only_results; ++j)
      for (const Reduction& r : launch->parfor().reductions)
        if (uses(seq[j], r.var.get()) || (r.index && uses(seq[j], r.index.get()))) only_results = false;
    if (only_results) out.push_back(launch);
  }
  return out;
}

namespace {

std::optional<std::int64_t> i64_constant(const Expr& e) {
  const auto* c = dyn<ConstExpr>(e);
  if (c && c->type == DType::I64) return c->i;
  return std::nullopt;
}

std::optional<std::int64_t> offset_in(const Expr& e, const VarNode* index, const LetValues* lets, int depth) {
  if (!e || depth > 32) return std::nullopt;  // a chain of lets that deep is not an offset anyone wrote
  if (const auto* r = dyn<VarRefExpr>(e)) {
    if (r->var.get() == index) return 0;
    if (!lets) return std::nullopt;
    const auto it = lets->find(r->var.get());
    return it == lets->end() ? std::nullopt : offset_in(it->second, index, lets, depth + 1);
  }
  const auto* b = dyn<BinaryExpr>(e);
  if (!b || b->type != DType::I64) return std::nullopt;
  std::int64_t out = 0;
  if (b->op == BinaryOp::Add) {
    if (const auto x = offset_in(b->a, index, lets, depth + 1))
      if (const auto k = i64_constant(b->b)) return __builtin_add_overflow(*x, *k, &out) ? std::nullopt : std::optional(out);
    if (const auto k = i64_constant(b->a))
      if (const auto x = offset_in(b->b, index, lets, depth + 1))
        return __builtin_add_overflow(*x, *k, &out) ? std::nullopt : std::optional(out);
  } else if (b->op == BinaryOp::Sub) {
    if (const auto x = offset_in(b->a, index, lets, depth + 1))
      if (const auto k = i64_constant(b->b)) return __builtin_sub_overflow(*x, *k, &out) ? std::nullopt : std::optional(out);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::int64_t> index_offset(const Expr& e, const VarNode* index, const LetValues* lets) {
  return offset_in(e, index, lets, 0);
}

}  // namespace kiln::ir
