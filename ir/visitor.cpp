// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "ir/visitor.hpp"

#include "ir/atomics.hpp"
#include "ir/builder.hpp"

namespace kiln::ir {

// ---- IRVisitor ------------------------------------------------------------------------------------------

void IRVisitor::walk(const Expr& e) {
  if (!e) return;
  switch (e->kind) {
    case ExprKind::Const: return visit(e->as<ConstExpr>());
    case ExprKind::VarRef: return visit(e->as<VarRefExpr>());
    case ExprKind::Load: return visit(e->as<LoadExpr>());
    case ExprKind::Dim: return visit(e->as<DimExpr>());
    case ExprKind::Unary: return visit(e->as<UnaryExpr>());
    case ExprKind::Binary: return visit(e->as<BinaryExpr>());
    case ExprKind::Select: return visit(e->as<SelectExpr>());
    case ExprKind::Cast: return visit(e->as<CastExpr>());
    case ExprKind::Call: return visit(e->as<CallExpr>());
  }
}

void IRVisitor::walk(const Stmt& s) {
  if (!s) return;
  switch (s->kind) {
    case StmtKind::Block: return visit(s->as<BlockStmt>());
    case StmtKind::Let: return visit(s->as<LetStmt>());
    case StmtKind::Assign: return visit(s->as<AssignStmt>());
    case StmtKind::Store: return visit(s->as<StoreStmt>());
    case StmtKind::For: return visit(s->as<ForStmt>());
    case StmtKind::Parfor: return visit(s->as<ParforStmt>());
    case StmtKind::If: return visit(s->as<IfStmt>());
    case StmtKind::Allocate: return visit(s->as<AllocateStmt>());
    case StmtKind::Check: return visit(s->as<CheckStmt>());
    case StmtKind::Map: return visit(s->as<MapStmt>());
    case StmtKind::Reduce: return visit(s->as<ReduceStmt>());
    case StmtKind::ReduceAxis: return visit(s->as<ReduceAxisStmt>());
    case StmtKind::Bind: return visit(s->as<BindStmt>());
    case StmtKind::Stencil: return visit(s->as<StencilStmt>());
    case StmtKind::Launch: return visit(s->as<LaunchStmt>());
    case StmtKind::Atomic: return visit(s->as<AtomicStmt>());
    case StmtKind::Sort: return visit(s->as<SortStmt>());
    case StmtKind::Scan: return visit(s->as<ScanStmt>());
  }
}

void IRVisitor::walk(const Function& f) {
  walk(f.body);
  walk(f.result);
  for (const auto& m : f.tuple) walk(m.scalar);
}

void IRVisitor::visit(const LoadExpr& e) {
  for (const auto& i : e.indices) walk(i);
}
void IRVisitor::visit(const UnaryExpr& e) { walk(e.a); }
void IRVisitor::visit(const BinaryExpr& e) {
  walk(e.a);
  walk(e.b);
}
void IRVisitor::visit(const SelectExpr& e) {
  walk(e.cond);
  walk(e.a);
  walk(e.b);
}
void IRVisitor::visit(const CastExpr& e) { walk(e.a); }
void IRVisitor::visit(const CallExpr& e) {
  for (const auto& a : e.args) walk(a);
}
void IRVisitor::visit(const BlockStmt& s) {
  for (const auto& x : s.stmts) walk(x);
}
void IRVisitor::visit(const LetStmt& s) { walk(s.init); }
void IRVisitor::visit(const AssignStmt& s) { walk(s.value); }
void IRVisitor::visit(const StoreStmt& s) {
  for (const auto& i : s.indices) walk(i);
  walk(s.value);
}
void IRVisitor::visit(const ForStmt& s) {
  walk(s.begin);
  walk(s.end);
  walk(s.body);
}
void IRVisitor::visit(const ParforStmt& s) {
  for (const auto& b : s.begins) walk(b);
  for (const auto& e : s.ends) walk(e);
  walk(s.body);
}
void IRVisitor::visit(const IfStmt& s) {
  walk(s.cond);
  walk(s.then_body);
  walk(s.else_body);
}
void IRVisitor::visit(const AllocateStmt& s) {
  for (const auto& e : s.shape) walk(e);
}
void IRVisitor::visit(const CheckStmt& s) {
  walk(s.cond);
  for (const auto& a : s.args) walk(a);
}
void IRVisitor::visit(const MapStmt& s) {
  for (const auto& e : s.shape) walk(e);
  for (const auto& e : s.target_index) walk(e);
  walk(s.value);
}
void IRVisitor::visit(const ReduceStmt& s) {
  for (const auto& e : s.shape) walk(e);
  walk(s.value);
}
void IRVisitor::visit(const ReduceAxisStmt& s) {
  for (const auto& e : s.shape) walk(e);
  walk(s.value);
}
void IRVisitor::visit(const LaunchStmt& s) { walk(s.body); }
void IRVisitor::visit(const AtomicStmt& s) {
  for (const auto& i : s.indices) walk(i);
  walk(s.value);
  walk(s.expected);
}
void IRVisitor::visit(const StencilStmt& s) {
  for (const auto& e : s.shape) walk(e);
  for (const auto& e : s.target_index) walk(e);
  walk(s.value);
  walk(s.cval);
}

// ---- IRMutator ------------------------------------------------------------------------------------------

Expr IRMutator::mutate(const Expr& e) {
  if (!e) return e;
  switch (e->kind) {
    case ExprKind::Const: return visit(e->as<ConstExpr>(), e);
    case ExprKind::VarRef: return visit(e->as<VarRefExpr>(), e);
    case ExprKind::Load: return visit(e->as<LoadExpr>(), e);
    case ExprKind::Dim: return visit(e->as<DimExpr>(), e);
    case ExprKind::Unary: return visit(e->as<UnaryExpr>(), e);
    case ExprKind::Binary: return visit(e->as<BinaryExpr>(), e);
    case ExprKind::Select: return visit(e->as<SelectExpr>(), e);
    case ExprKind::Cast: return visit(e->as<CastExpr>(), e);
    case ExprKind::Call: return visit(e->as<CallExpr>(), e);
  }
  return e;
}

Stmt IRMutator::mutate(const Stmt& s) {
  if (!s) return s;
  switch (s->kind) {
    case StmtKind::Block: return visit(s->as<BlockStmt>(), s);
    case StmtKind::Let: return visit(s->as<LetStmt>(), s);
    case StmtKind::Assign: return visit(s->as<AssignStmt>(), s);
    case StmtKind::Store: return visit(s->as<StoreStmt>(), s);
    case StmtKind::For: return visit(s->as<ForStmt>(), s);
    case StmtKind::Parfor: return visit(s->as<ParforStmt>(), s);
    case StmtKind::If: return visit(s->as<IfStmt>(), s);
    case StmtKind::Allocate: return visit(s->as<AllocateStmt>(), s);
    case StmtKind::Check: return visit(s->as<CheckStmt>(), s);
    case StmtKind::Map: return visit(s->as<MapStmt>(), s);
    case StmtKind::Reduce: return visit(s->as<ReduceStmt>(), s);
    case StmtKind::ReduceAxis: return visit(s->as<ReduceAxisStmt>(), s);
    case StmtKind::Bind: return visit(s->as<BindStmt>(), s);
    case StmtKind::Stencil: return visit(s->as<StencilStmt>(), s);
    case StmtKind::Launch: return visit(s->as<LaunchStmt>(), s);
    case StmtKind::Atomic: return visit(s->as<AtomicStmt>(), s);
    case StmtKind::Sort: return visit(s->as<SortStmt>(), s);
    case StmtKind::Scan: return visit(s->as<ScanStmt>(), s);
  }
  return s;
}

Function IRMutator::mutate(const Function& f) {
  Function out = f;
  out.body = mutate(f.body);
  out.result = mutate(f.result);
  for (auto& m : out.tuple) m.scalar = mutate(m.scalar);
  return out;
}

bool IRMutator::mutate_all(const std::vector<Expr>& in, std::vector<Expr>& out) {
  bool changed = false;
  out.clear();
  out.reserve(in.size());
  for (const auto& e : in) {
    out.push_back(mutate(e));
    changed |= out.back() != e;
  }
  return changed;
}

Expr IRMutator::visit(const LoadExpr& e, const Expr& self) {
  std::vector<Expr> idx;
  if (!mutate_all(e.indices, idx)) return self;
  return make_load(e.array, std::move(idx));
}

Expr IRMutator::visit(const UnaryExpr& e, const Expr& self) {
  Expr a = mutate(e.a);
  return a == e.a ? self : make_unary(e.op, a);
}

Expr IRMutator::visit(const BinaryExpr& e, const Expr& self) {
  Expr a = mutate(e.a), b = mutate(e.b);
  return a == e.a && b == e.b ? self : make_binary(e.op, a, b);
}

Expr IRMutator::visit(const SelectExpr& e, const Expr& self) {
  Expr c = mutate(e.cond), a = mutate(e.a), b = mutate(e.b);
  return c == e.cond && a == e.a && b == e.b ? self : make_select(c, a, b);
}

Expr IRMutator::visit(const CastExpr& e, const Expr& self) {
  Expr a = mutate(e.a);
  return a == e.a ? self : make_cast(e.type, a);
}

Expr IRMutator::visit(const CallExpr& e, const Expr& self) {
  std::vector<Expr> args;
  if (!mutate_all(e.args, args)) return self;
  return make_call(e.fn, std::move(args));
}

Stmt IRMutator::visit(const BlockStmt& s, const Stmt& self) {
  std::vector<Stmt> out;
  out.reserve(s.stmts.size());
  bool changed = false;
  for (const auto& x : s.stmts) {
    Stmt y = mutate(x);
    changed |= y != x;
    if (!y) continue;  // a mutator may delete a statement by returning null
    out.push_back(std::move(y));
  }
  return changed ? make_block(std::move(out)) : self;
}

Stmt IRMutator::visit(const LetStmt& s, const Stmt& self) {
  Expr e = mutate(s.init);
  return e == s.init ? self : make_let(s.var, e);
}

Stmt IRMutator::visit(const AssignStmt& s, const Stmt& self) {
  Expr e = mutate(s.value);
  return e == s.value ? self : make_assign(s.var, e);
}

Stmt IRMutator::visit(const StoreStmt& s, const Stmt& self) {
  std::vector<Expr> idx;
  bool changed = mutate_all(s.indices, idx);
  Expr v = mutate(s.value);
  return !changed && v == s.value ? self : make_store(s.array, std::move(idx), v);
}

Stmt IRMutator::visit(const ForStmt& s, const Stmt& self) {
  Expr b = mutate(s.begin), e = mutate(s.end);
  Stmt body = mutate(s.body);
  if (b == s.begin && e == s.end && body == s.body) return self;
  return make_for(s.index, b, e, body ? body : make_block({}));
}

Stmt IRMutator::visit(const ParforStmt& s, const Stmt& self) {
  std::vector<Expr> b, e;
  bool changed = mutate_all(s.begins, b);
  changed |= mutate_all(s.ends, e);
  Stmt body = mutate(s.body);
  if (!changed && body == s.body) return self;
  return make_parfor(s.indices, std::move(b), std::move(e), body ? body : make_block({}), s.reductions,
                     s.array_reductions, s.origin);
}

Stmt IRMutator::visit(const IfStmt& s, const Stmt& self) {
  Expr c = mutate(s.cond);
  Stmt t = mutate(s.then_body), e = mutate(s.else_body);
  if (c == s.cond && t == s.then_body && e == s.else_body) return self;
  return make_if(c, t ? t : make_block({}), e);
}

Stmt IRMutator::visit(const AllocateStmt& s, const Stmt& self) {
  std::vector<Expr> shape;
  if (!mutate_all(s.shape, shape)) return self;
  return make_allocate(s.array, std::move(shape));
}

Stmt IRMutator::visit(const CheckStmt& s, const Stmt& self) {
  Expr c = mutate(s.cond);
  std::vector<Expr> args;
  const bool changed = mutate_all(s.args, args);
  if (c == s.cond && !changed) return self;
  return make_check(c, s.code, s.message, std::move(args));
}

Stmt IRMutator::visit(const MapStmt& s, const Stmt& self) {
  std::vector<Expr> shape, ti;
  bool changed = mutate_all(s.shape, shape);
  changed |= mutate_all(s.target_index, ti);
  Expr v = mutate(s.value);
  if (!changed && v == s.value) return self;
  if (s.allocate) return make_map(s.target, s.indices, std::move(shape), v, s.origin);
  return make_map_into(s.target, s.indices, std::move(shape), std::move(ti), v, s.origin);
}

Stmt IRMutator::visit(const ReduceStmt& s, const Stmt& self) {
  std::vector<Expr> shape;
  const bool changed = mutate_all(s.shape, shape);
  Expr v = mutate(s.value);
  if (!changed && v == s.value) return self;
  return make_reduce(s.result, s.op, s.indices, std::move(shape), v, s.origin);
}

Stmt IRMutator::visit(const StencilStmt& s, const Stmt& self) {
  std::vector<Expr> shape, ti;
  bool changed = mutate_all(s.shape, shape);
  changed |= mutate_all(s.target_index, ti);
  Expr v = mutate(s.value), c = mutate(s.cval);
  if (!changed && v == s.value && c == s.cval) return self;
  return make_stencil(s.target, s.allocate, s.indices, std::move(shape), std::move(ti), v, s.windows, s.lo, s.hi,
                      s.border, c, s.origin);
}

Stmt IRMutator::visit(const ReduceAxisStmt& s, const Stmt& self) {
  std::vector<Expr> shape;
  const bool changed = mutate_all(s.shape, shape);
  Expr v = mutate(s.value);
  if (!changed && v == s.value) return self;
  return make_reduce_axis(s.target, s.op, s.axis, s.keepdims, s.indices, std::move(shape), v, s.origin);
}

Stmt IRMutator::visit(const AtomicStmt& s, const Stmt& self) {
  std::vector<Expr> idx;
  bool changed = mutate_all(s.indices, idx);
  Expr v = mutate(s.value), e = mutate(s.expected);
  if (!changed && v == s.value && e == s.expected) return self;
  return make_atomic(s.result, s.op, s.array, std::move(idx), v, e);
}

Stmt IRMutator::visit(const LaunchStmt& s, const Stmt& self) {
  Stmt body = mutate(s.body);
  if (body == s.body) return self;
  return make_launch(s.kernel, body);
}

}  // namespace kiln::ir
