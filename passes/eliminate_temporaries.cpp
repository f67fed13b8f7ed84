// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Temporaries to scalars. After fusion, `t = f(a); r = g(t)` is one parfor whose body stores t[i] and then
// reads t[i]. When nothing else touches t, each iteration only ever sees the value it wrote itself, so the
// array is a scalar per iteration: the store becomes a let, the loads read it, and the allocation (and
// the memory traffic) is gone. Iterations that would share an element (t[0] in every iteration) were a
// race before; as scalars they become private, which is one of the behaviours the race allowed.
#include "passes/eliminate_temporaries.hpp"

#include <optional>

#include "ir/builder.hpp"
#include "ir/printer.hpp"
#include "ir/analysis.hpp"
#include "ir/atomics.hpp"
#include "passes/loop_analysis.hpp"
#include "passes/statement_lists.hpp"

namespace kiln::passes {
namespace {

using namespace kiln::ir;

/// Element accesses of `array` in `s`.
std::vector<loops::Access> accesses_of(const Stmt& s, const VarNode* array) {
  std::vector<loops::Access> out;
  for (auto& a : loops::effects_of(s).accesses)
    if (a.array.get() == array) out.push_back(std::move(a));
  return out;
}

/// True if `s` mentions `array` anywhere other than in a Dim.
bool touches(const Stmt& s, const VarNode* array) {
  struct Finder : IRVisitor {
    const VarNode* v;
    bool found = false;
    void visit(const LoadExpr& e) override {
      found |= e.array.get() == v;
      IRVisitor::visit(e);
    }
    void visit(const StoreStmt& s) override {
      found |= s.array.get() == v;
      IRVisitor::visit(s);
    }
    void visit(const AtomicStmt& s) override {
      found |= s.array.get() == v;
      IRVisitor::visit(s);
    }
    void visit(const MapStmt& s) override {
      found |= s.target.get() == v;
      IRVisitor::visit(s);
    }
    void visit(const ParforStmt& s) override {
      for (const auto& r : s.array_reductions) found |= r.array.get() == v;
      IRVisitor::visit(s);
    }
    void visit(const SortStmt& s) override { found |= s.keys.get() == v || s.positions.get() == v; }
    void visit(const ScanStmt& s) override { found |= s.source.get() == v || s.out.get() == v; }
  } f;
  f.v = array;
  f.walk(s);
  return f.found;
}

/// True if `s` reads an extent of `array`.
bool has_dim(const Stmt& s, const VarNode* array) {
  struct Finder : IRVisitor {
    const VarNode* v;
    bool found = false;
    void visit(const DimExpr& d) override { found |= d.array.get() == v; }
  } f;
  f.v = array;
  f.walk(s);
  return f.found;
}

/// True if a store to `array` is inside a parfor nested in `s`.
bool stored_in_nested_parfor(const Stmt& body, const VarNode* array) {
  struct Finder : IRVisitor {
    const VarNode* v;
    bool found = false;
    void visit(const ParforStmt& p) override { found |= stored_arrays(p.body).count(v) > 0; }
  } f;
  f.v = array;
  f.walk(body);
  return f.found;
}

/// The body of a loop (parfor or for).
const Stmt& loop_body(const Stmt& loop) {
  return loop->kind == StmtKind::Parfor ? loop->as<ParforStmt>().body : loop->as<ForStmt>().body;
}

/// The innermost loop around every access of `array` in `loop`: `loop` itself, or, while one statement of
/// its body holds all of them and that statement is a loop, that loop, and so on. After prefix fusion
/// `x - mean` is stored and read in a parfor over the row nested in the parfor over rows: the temporary is
/// then a scalar of each inner iteration.
Stmt holder_of(const Stmt& loop, const VarNode* array) {
  Stmt h = loop;
  for (;;) {
    Stmt only;
    for (const auto& s : loops::statements(loop_body(h)))
      if (touches(s, array)) {
        if (only) return h;
        only = s;
      }
    if (!only || (only->kind != StmtKind::Parfor && only->kind != StmtKind::For)) return h;
    h = only;
  }
}

/// Rewrites the one user of a temporary: its first store declares the scalar, later stores assign it,
/// loads read it, and Dims become the allocated extents.
class ToScalar : public IRMutator {
 public:
  ToScalar(const AllocateStmt& a, Var scalar, const StmtNode* first) : alloc_(a), scalar_(std::move(scalar)), first_(first) {}

 protected:
  using IRMutator::visit;
  const AllocateStmt& alloc_;
  Var scalar_;
  const StmtNode* first_;

  Expr visit(const LoadExpr& e, const Expr& self) override {
    return e.array == alloc_.array ? make_ref(scalar_) : IRMutator::visit(e, self);
  }
  Expr visit(const DimExpr& e, const Expr& self) override {
    return e.array == alloc_.array ? alloc_.shape[static_cast<size_t>(e.axis)] : self;
  }
  Stmt visit(const StoreStmt& s, const Stmt& self) override {
    if (s.array != alloc_.array) return IRMutator::visit(s, self);
    Expr v = mutate(s.value);
    return &s == first_ ? make_let(scalar_, v) : make_assign(scalar_, v);
  }
};

class Eliminator {
 public:
  Eliminator(const Function& f, PassContext& ctx)
      : fn_(f), ctx_(ctx), assigned_(assigned_vars(f.body)), bound_(loops::bound_arrays(f.body)) {}

  /// Every block, innermost first: a temporary and the loop that uses it are statements of one block.
  Stmt rewrite(const Stmt& s) {
    return rewrite_statement_lists(s, [this](std::vector<Stmt> list) { return eliminate(std::move(list)); });
  }

 private:
  const Function& fn_;
  PassContext& ctx_;
  VarSet assigned_;
  VarSet bound_;  ///< arrays a binding may name: accessed through the binding too, so never a temporary

  /// True if a scalar result (evaluated after the body) reads the array `v`.
  bool reads_after_body(const VarNode* v) const {
    for (const Expr& e : fn_.result_exprs())
      if (uses(e, v)) return true;
    return false;
  }

  std::vector<Stmt> eliminate(std::vector<Stmt> list) {
    for (size_t k = 0; k < list.size(); ++k) {
      const auto* a = dyn<AllocateStmt>(list[k]);
      if (!a || fn_.returns(a->array.get())) continue;
      if (reads_after_body(a->array.get())) {
        ctx_.note(Topic::allocations, "kept " + a->array->name + ": the kernel's result reads it");
        continue;
      }
      if (bound_.count(a->array.get())) {
        ctx_.note(Topic::allocations, "kept " + a->array->name + ": an array binding may name it");
        continue;
      }
      if (auto branch = only_branch_user(list, k)) {
        if (in_branches(list, k, *branch)) {
          list.erase(list.begin() + static_cast<std::ptrdiff_t>(k));
          --k;
        }
        continue;
      }
      if (auto user = single_user(list, k)) {
        const Stmt loop = holder_of(list[*user], a->array.get());
        const Var scalar = make_var(a->array->name, Type::scalar(a->array->type.elem), VarKind::Local, a->array->where);
        const StmtNode* first = first_store(loop, a->array.get());
        if (!first) continue;
        ToScalar to_scalar(*a, scalar, first);
        for (size_t j = k + 1; j < list.size(); ++j) list[j] = to_scalar.mutate(list[j]);
        const bool read = loops::effects_of(loop).loaded.count(a->array.get()) > 0;
        ctx_.note(Topic::allocations, "removed " + a->array->name + ": a temporary of " + where(loop) +
                                          (read ? " written and read at one index per iteration, now a scalar"
                                                : " that is never read"));
        list.erase(list.begin() + static_cast<std::ptrdiff_t>(k));
        --k;
      }
    }
    return list;
  }

  /// The position of the only statement after `k` that accesses the array allocated at `k`, if it is an
  /// `if` (the rest may only read stable extents, as in single_user).
  std::optional<size_t> only_branch_user(const std::vector<Stmt>& list, size_t k) const {
    const auto& a = list[k]->as<AllocateStmt>();
    std::optional<size_t> user;
    bool dims_elsewhere = false;
    for (size_t j = k + 1; j < list.size(); ++j) {
      if (touches(list[j], a.array.get())) {
        if (user) return std::nullopt;
        user = j;
      } else if (uses(list[j], a.array.get())) {
        dims_elsewhere = true;
      }
    }
    if (!user || list[*user]->kind != StmtKind::If) return std::nullopt;
    if (dims_elsewhere && !loops::stable_extents(a.shape, assigned_)) return std::nullopt;
    return user;
  }

  /// A temporary used only inside the branches of an `if` (branch fusion leaves them: each branch holds a
  /// copy of the parfor that makes it). Each branch where it qualifies on its own, as if allocated at the
  /// branch's start, gets a scalar of its own; returns true when no branch needs the array any more.
  bool in_branches(std::vector<Stmt>& list, size_t k, size_t at) {
    const auto& a = list[k]->as<AllocateStmt>();
    const auto& branch = list[at]->as<IfStmt>();
    bool all = true;
    auto rewrite_branch = [&](const Stmt& body) -> Stmt {
      if (!body || !touches(body, a.array.get())) return body;
      std::vector<Stmt> l{list[k]};
      for (const auto& x : loops::statements(body)) l.push_back(x);
      const auto user = single_user(l, 0);
      const Stmt loop = user ? holder_of(l[*user], a.array.get()) : nullptr;
      const StmtNode* first = loop ? first_store(loop, a.array.get()) : nullptr;
      if (!first) {
        all = false;
        return body;
      }
      const Var scalar = make_var(a.array->name, Type::scalar(a.array->type.elem), VarKind::Local, a.array->where);
      ToScalar to_scalar(a, scalar, first);
      std::vector<Stmt> out;
      for (size_t j = 1; j < l.size(); ++j) out.push_back(to_scalar.mutate(l[j]));
      ctx_.note(Topic::allocations, "removed " + a.array->name + " in a branch of `if " + to_string(branch.cond) +
                                        "`: a temporary of " + where(loop) + " written and read at one index per iteration, now a scalar");
      return make_block(std::move(out));
    };
    const Stmt then_body = rewrite_branch(branch.then_body), else_body = rewrite_branch(branch.else_body);
    list[at] = make_if(branch.cond, then_body, else_body);
    return all;
  }

  static std::string where(const Stmt& s) {
    if (const auto* p = dyn<ParforStmt>(s)) return loops::origin_text(*p);
    return "a loop";
  }

  /// The position of the only statement after `k` that accesses the array allocated at `k`, if it is a
  /// loop that qualifies; other statements may use only its Dims, and then only of stable extents.
  std::optional<size_t> single_user(const std::vector<Stmt>& list, size_t k) const {
    const auto& a = list[k]->as<AllocateStmt>();
    const VarNode* v = a.array.get();
    std::optional<size_t> user;
    bool dims_elsewhere = false;
    for (size_t j = k + 1; j < list.size(); ++j) {
      if (touches(list[j], v)) {
        if (user) return std::nullopt;
        user = j;
      } else if (uses(list[j], v)) {
        dims_elsewhere = true;
      }
    }
    if (!user) return std::nullopt;  // dead: simplify removes it
    const Stmt& s = list[*user];
    if (s->kind != StmtKind::Parfor && s->kind != StmtKind::For) return std::nullopt;
    if ((dims_elsewhere || has_dim(s, v)) && !loops::stable_extents(a.shape, assigned_)) return std::nullopt;
    if (const auto* p = dyn<ParforStmt>(s))
      for (const auto& r : p->array_reductions)
        if (r.array.get() == v) return std::nullopt;
    if (has_atomic(s, v)) return std::nullopt;  // its elements are shared, and an atomic is no value to forward
    const Stmt& body = loop_body(holder_of(s, v));
    if (stored_in_nested_parfor(body, v)) return std::nullopt;
    const auto acc = accesses_of(body, v);
    const VarSet variant = assigned_vars(body);
    for (const auto& x : acc) {
      if (!loops::equal_all(x.index, acc.front().index)) return std::nullopt;
      for (const auto& e : x.index) {
        if (has_load(e)) return std::nullopt;
        for (const Var& u : free_vars(e))
          if (variant.count(u.get())) return std::nullopt;
      }
    }
    return user;
  }

  /// The statement directly in the loop's body that is the first access of `array` in an iteration, if
  /// that first access is a store.
  static const StmtNode* first_store(const Stmt& loop, const VarNode* array) {
    for (const auto& s : loops::statements(loop_body(loop))) {
      const auto* st = dyn<StoreStmt>(s);
      if (st && st->array.get() == array) {
        for (const auto& e : st->indices)
          if (ir::loads_from(e, array)) return nullptr;
        return ir::loads_from(st->value, array) ? nullptr : st;
      }
      if (!accesses_of(s, array).empty()) return nullptr;
    }
    return nullptr;
  }
};

}  // namespace

ir::Function eliminate_temporaries(const ir::Function& f, PassContext& ctx) {
  Eliminator e(f, ctx);
  ir::Function out = f;
  out.body = e.rewrite(f.body);
  return out;
}

}  // namespace kiln::passes
