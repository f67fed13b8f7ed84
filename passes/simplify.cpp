// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "passes/simplify.hpp"

#include <unordered_map>

#include "ir/analysis.hpp"
#include "ir/builder.hpp"
#include "ir/random.hpp"
#include "ir/reductions.hpp"
#include "ir/semantics.hpp"
#include "ir/substitute.hpp"
#include "ir/visitor.hpp"

namespace kiln::passes {
namespace {

using namespace kiln::ir;

// ---- constant folding -----------------------------------------------------------------------------------

template <class T>
T value_of(const ConstExpr& c) {
  if constexpr (is_float_element_v<T>) return static_cast<T>(c.f);
  else if constexpr (std::is_same_v<T, bool>) return c.i != 0;
  else return static_cast<T>(c.i);
}

template <class T>
Expr constant_of(T v) {
  constexpr DType t = dtype_of<T>();
  if constexpr (is_float_element_v<T>) return make_float(t, static_cast<double>(v));
  else if constexpr (std::is_same_v<T, bool>) return make_bool(v);
  else return make_int(t, static_cast<std::int64_t>(v));
}

const ConstExpr* as_const(const Expr& e) { return dyn<ConstExpr>(e); }

bool is_value(const Expr& e, double v) { return is_const_value(e, v); }

class Folder : public IRMutator {
 protected:
  using IRMutator::visit;

  Expr visit(const UnaryExpr& u, const Expr& self) override {
    Expr r = IRMutator::visit(u, self);
    const auto& x = r->as<UnaryExpr>();
    if (const auto* c = as_const(x.a))
      return sem::with_type(x.type, [&](auto t) {
        using T = decltype(t);
        return constant_of<T>(sem::unary<T>(x.op, value_of<T>(*c)));
      });
    if (const auto* inner = dyn<UnaryExpr>(x.a); inner && inner->op == x.op) return inner->a;  // --x, !!x, ~~x
    return r;
  }

  Expr visit(const BinaryExpr& b, const Expr& self) override {
    Expr r = IRMutator::visit(b, self);
    const auto& x = r->as<BinaryExpr>();
    const auto *ca = as_const(x.a), *cb = as_const(x.b);
    if (x.op == BinaryOp::And || x.op == BinaryOp::Or) {
      const bool is_and = x.op == BinaryOp::And;
      if (ca) return (ca->i != 0) == is_and ? x.b : x.a;  // true && b -> b, false && b -> false, ...
      if (cb && (cb->i != 0) == is_and) return x.a;        // a && true -> a, a || false -> a
      return r;
    }
    if (ca && cb) {
      return sem::with_type(x.a->type, [&](auto t) {
        using T = decltype(t);
        if (is_comparison(x.op)) return make_bool(sem::compare<T>(x.op, value_of<T>(*ca), value_of<T>(*cb)));
        return constant_of<T>(sem::binary<T>(x.op, value_of<T>(*ca), value_of<T>(*cb)));
      });
    }
    // Identities that hold bit for bit, NaN and -0 included.
    const bool integer = is_int(x.type);
    switch (x.op) {
      case BinaryOp::Add:
        if (integer && is_value(x.b, 0)) return x.a;
        if (integer && is_value(x.a, 0)) return x.b;
        break;
      case BinaryOp::Sub:
        if (is_value(x.b, 0) && (integer || !std::signbit(cb->f))) return x.a;  // x - (+0) == x, even for -0
        break;
      case BinaryOp::Mul:
        if (is_value(x.b, 1)) return x.a;
        if (is_value(x.a, 1)) return x.b;
        break;
      case BinaryOp::Div:
        if (is_value(x.b, 1)) return x.a;
        break;
      default:
        break;
    }
    return r;
  }

  Expr visit(const DimExpr& d, const Expr& self) override {
    // The kernel was specialized on this extent being 1.
    return d.array->type.unit_dim(d.axis) ? make_i64(1) : self;
  }

  Expr visit(const SelectExpr& s, const Expr& self) override {
    Expr r = IRMutator::visit(s, self);
    const auto& x = r->as<SelectExpr>();
    if (const auto* c = as_const(x.cond)) return c->i ? x.a : x.b;
    if (equal(x.a, x.b)) return x.a;
    return r;
  }

  Expr visit(const CastExpr& c, const Expr& self) override {
    Expr r = IRMutator::visit(c, self);
    const auto* x = dyn<CastExpr>(r);
    if (!x) return r;
    const auto* k = as_const(x->a);
    if (!k) return r;
    return sem::with_type(x->type, [&](auto to) {
      using To = decltype(to);
      return sem::with_type(x->a->type, [&](auto from) {
        using From = decltype(from);
        return constant_of<To>(sem::cast<To, From>(value_of<From>(*k)));
      });
    });
  }

  Expr visit(const CallExpr& c, const Expr& self) override {
    Expr r = IRMutator::visit(c, self);
    const auto& x = r->as<CallExpr>();
    for (const auto& a : x.args)
      if (!as_const(a)) return r;
    if (random::is_random(x.fn)) {
      const random::Value v = random::evaluate(x.fn, as_const(x.args[0])->i, as_const(x.args[1])->i,
                                               x.args.size() > 2 ? as_const(x.args[2])->i : 0);
      return is_float(x.type) ? make_float(x.type, v.as_float) : make_int(x.type, v.as_int);
    }
    return sem::with_type(x.args[0]->type, [&](auto t) -> Expr {
      using T = decltype(t);
      if constexpr (std::is_same_v<T, bool>) {
        return r;
      } else {
        T v[3] = {};
        for (size_t k = 0; k < x.args.size(); ++k) v[k] = value_of<T>(*as_const(x.args[k]));
        if (returns_bool(x.fn)) {
          if constexpr (is_float_element_v<T>) return make_bool(sem::predicate<T>(x.fn, v[0]));
          else return r;
        }
        return constant_of<T>(sem::call<T>(x.fn, v[0], v[1], v[2]));
      }
    });
  }

  Stmt fold_if(const IfStmt& s, const Stmt& self) {
    Stmt r = IRMutator::visit(s, self);
    const auto* x = dyn<IfStmt>(r);
    if (!x) return r;
    if (const auto* c = as_const(x->cond)) return c->i ? x->then_body : (x->else_body ? x->else_body : make_block({}));
    return r;
  }

  Stmt visit(const ForStmt& s, const Stmt& self) override {
    Stmt r = IRMutator::visit(s, self);
    const auto* x = dyn<ForStmt>(r);
    const auto *b = x ? as_const(x->begin) : nullptr, *e = x ? as_const(x->end) : nullptr;
    if (b && e && b->i >= e->i) return nullptr;  // runs zero times
    return r;
  }

  // Folding can leave a write of a value to where it came from (`s = s + 0` becomes `s = s`). That is a no-op,
  // and no longer the shape of a reduction's update, which the verifier requires inside a parfor: drop it.
  Stmt visit(const AssignStmt& s, const Stmt& self) override {
    Stmt r = IRMutator::visit(s, self);
    const auto* x = dyn<AssignStmt>(r);
    const auto* v = x ? dyn<VarRefExpr>(x->value) : nullptr;
    return v && v->var == x->var ? nullptr : r;
  }
  Stmt visit(const StoreStmt& s, const Stmt& self) override {
    Stmt r = IRMutator::visit(s, self);
    const auto* x = dyn<StoreStmt>(r);
    const auto* l = x ? dyn<LoadExpr>(x->value) : nullptr;
    if (!l || l->array != x->array) return r;
    for (std::size_t d = 0; d < l->indices.size(); ++d)
      if (!equal(l->indices[d], x->indices[d])) return r;
    return nullptr;
  }

  // An argmin/argmax update must keep its shape (ir/reductions.hpp): folding a constant candidate can remove the
  // `isnan(x) && !isnan(var)` clause or the comparison itself. Such an update stays as it is.
  Stmt visit(const IfStmt& s, const Stmt& self) override {
    Stmt r = fold_if(s, self);
    if (r == self) return r;
    for (const auto& op : {ReduceOp::ArgMin, ReduceOp::ArgMax}) {
      const auto* block = dyn<BlockStmt>(s.then_body);
      if (!block || block->stmts.size() != 2 || !dyn<AssignStmt>(block->stmts[0]) || !dyn<AssignStmt>(block->stmts[1]))
        break;
      const Reduction red{block->stmts[0]->as<AssignStmt>().var, op, block->stmts[1]->as<AssignStmt>().var};
      if (!match_arg_update(s, red)) continue;
      const auto* folded = dyn<IfStmt>(r);
      return folded && match_arg_update(*folded, red) ? r : self;
    }
    return r;
  }
};

// ---- copy propagation and CSE: the replacements, applied by ir::substitute -------------------------------

bool immutable(const Var& v, const VarSet& assigned) { return v->kind != VarKind::Local || !assigned.count(v.get()); }

/// True if `e` reads only constants, parameters, indices and variables never reassigned: its value is the
/// same wherever it is visible.
bool stable(const Expr& e, const VarSet& assigned) {
  if (has_load(e)) return false;
  for (const Var& v : free_vars(e)) {
    if (v->type.is_scalar() && !immutable(v, assigned)) return false;
    if (v->kind == VarKind::Binding && assigned.count(v.get())) return false;  // its extents change with it
  }
  return true;
}

/// Lets never reassigned whose value is a constant or another immutable variable.
void collect_copies(const Stmt& body, const VarSet& assigned, Replacements& sub) {
  struct Copies : IRVisitor {
    const VarSet& assigned;
    Replacements& sub;
    Copies(const VarSet& a, Replacements& s) : assigned(a), sub(s) {}
    void visit(const LetStmt& s) override {
      if (assigned.count(s.var.get())) return;
      const auto* ref = dyn<VarRefExpr>(s.init);
      if (is_const(s.init) || (ref && immutable(ref->var, assigned))) sub[s.var.get()] = s.init;
    }
  } c(assigned, sub);
  c.walk(body);
}

/// A later let with the same stable initializer as an earlier visible one reuses the earlier variable.
void collect_common_lets(const Stmt& s, const VarSet& assigned, std::vector<std::pair<Var, Expr>>& available,
                         Replacements& sub) {
  if (!s) return;
  auto nested = [&](const Stmt& body) {
    const size_t mark = available.size();
    collect_common_lets(body, assigned, available, sub);
    available.resize(mark);
  };
  switch (s->kind) {
    case StmtKind::Block: {
      const size_t mark = available.size();
      for (const auto& x : s->as<BlockStmt>().stmts) collect_common_lets(x, assigned, available, sub);
      available.resize(mark);
      break;
    }
    case StmtKind::Let: {
      const auto& l = s->as<LetStmt>();
      if (assigned.count(l.var.get()) || !stable(l.init, assigned) || node_count(l.init) < 2) break;
      for (const auto& [v, init] : available)
        if (equal(init, l.init)) {
          sub[l.var.get()] = make_ref(v);
          return;
        }
      available.emplace_back(l.var, l.init);
      break;
    }
    // A nested body is a scope of its own even when it is a single statement rather than a block.
    case StmtKind::For: nested(s->as<ForStmt>().body); break;
    case StmtKind::Parfor: nested(s->as<ParforStmt>().body); break;
    case StmtKind::If:
      nested(s->as<IfStmt>().then_body);
      nested(s->as<IfStmt>().else_body);
      break;
    default:
      break;
  }
}

// ---- the subscripts of an update ---------------------------------------------------------------------------

/// An update `a[I] = f(a[I], ...)` (an array reduction's `hist[int(x * bins)] += 1`, any read-modify-write)
/// computes each subscript of I twice, for the load and for the store; one that is more than a variable or a
/// constant gets a let before the store, which both use. The backends cannot always merge the two copies
/// themselves: a saturating float-to-int conversion is a compare and a branch (codegen/llvm/emit_expr.cpp), and
/// loads in a subscript are not merged across the branch. Subscripts cannot fail (conversions saturate; bounds
/// checks are statements of their own), so computing them before the value changes nothing else.
class ShareUpdateSubscripts : public IRMutator {
 protected:
  using IRMutator::visit;
  Stmt visit(const StoreStmt& s, const Stmt& self) override {
    bool compound = false;
    for (const Expr& i : s.indices) compound |= !dyn<VarRefExpr>(i) && !dyn<ConstExpr>(i);
    if (!compound || !reads_element(s.value, s.array.get(), s.indices)) return self;
    std::vector<Stmt> out;
    Replacements shared;
    std::vector<Expr> indices;
    for (const Expr& i : s.indices) {
      if (dyn<VarRefExpr>(i) || dyn<ConstExpr>(i)) {
        indices.push_back(i);
        continue;
      }
      const Var v = make_var(s.array->name + "_at", Type::scalar(DType::I64), VarKind::Local);
      out.push_back(make_let(v, i));
      indices.push_back(make_ref(v));
    }
    out.push_back(make_store(s.array, indices, substitute(s.value, s.array, s.indices, indices)));
    return make_block(std::move(out));
  }

 private:
  /// True if `e` loads array[index].
  static bool reads_element(const Expr& e, const VarNode* array, const std::vector<Expr>& index) {
    struct Finder : IRVisitor {
      const VarNode* array;
      const std::vector<Expr>* index;
      bool found = false;
      void visit(const LoadExpr& l) override {
        if (l.array.get() == array && l.indices.size() == index->size()) {
          bool same = true;
          for (std::size_t d = 0; d < l.indices.size(); ++d) same = same && equal(l.indices[d], (*index)[d]);
          found |= same;
        }
        IRVisitor::visit(l);
      }
    } f;
    f.array = array;
    f.index = &index;
    f.walk(e);
    return f.found;
  }
  /// `e` with its loads of array[from] reading array[to].
  static Expr substitute(const Expr& e, const Var& array, const std::vector<Expr>& from, const std::vector<Expr>& to) {
    return ir::substitute(make_load(array, from), make_load(array, to), e);
  }
};

// ---- dead code --------------------------------------------------------------------------------------------

/// Variables read somewhere (scalars through VarRef; arrays through Load, Dim or as the result).
VarSet used_vars(const Function& f) {
  struct Uses : IRVisitor {
    VarSet used;
    void visit(const VarRefExpr& e) override { used.insert(e.var.get()); }
    void visit(const LoadExpr& e) override {
      used.insert(e.array.get());
      IRVisitor::visit(e);
    }
    void visit(const DimExpr& e) override { used.insert(e.array.get()); }
    void visit(const BindStmt& b) override { used.insert(b.source.get()); }
    void visit(const StencilStmt& s) override {
      for (const auto& w : s.windows) used.insert(w.get());
      if (s.target->kind == VarKind::Binding) used.insert(s.target.get());
      IRVisitor::visit(s);
    }
    // A store through a binding may write an array the caller sees (a parameter, the result): it is a use
    // that keeps the binding, and the store, alive.
    void visit(const StoreStmt& s) override {
      if (s.array->kind == VarKind::Binding) used.insert(s.array.get());
      IRVisitor::visit(s);
    }
    // An atomic reads its element (its result may be used even where the array is not read otherwise): it
    // is a use of the array, so it and the array stay.
    void visit(const AtomicStmt& s) override {
      used.insert(s.array.get());
      IRVisitor::visit(s);
    }
    // An argsort reads its keys and positions to permute the positions (it stays with them; an unread one is
    // kept); a sort alone only rewrites its keys, and goes when they are dead.
    void visit(const SortStmt& s) override {
      if (!s.positions) return;
      used.insert(s.keys.get());
      used.insert(s.positions.get());
    }
    // A scan reads its source (its result goes when dead).
    void visit(const ScanStmt& s) override { used.insert(s.source.get()); }
    void visit(const ParforStmt& p) override {
      for (const auto& r : p.reductions) {
        used.insert(r.var.get());
        if (r.index) used.insert(r.index.get());
      }
      for (const auto& r : p.array_reductions) used.insert(r.array.get());
      IRVisitor::visit(p);
    }
  } u;
  u.walk(f);
  if (f.result_array) u.used.insert(f.result_array.get());
  for (const auto& m : f.tuple)
    if (m.array) u.used.insert(m.array.get());
  return std::move(u.used);
}

class DeadCode : public IRMutator {
 public:
  explicit DeadCode(VarSet used) : used_(std::move(used)) {}

 protected:
  using IRMutator::visit;
  VarSet used_;

  bool dead(const Var& v) const {
    return (v->kind == VarKind::Local || v->kind == VarKind::Binding) && !used_.count(v.get());
  }

  Stmt visit(const LetStmt& s, const Stmt& self) override { return dead(s.var) ? nullptr : IRMutator::visit(s, self); }
  Stmt visit(const AssignStmt& s, const Stmt& self) override { return dead(s.var) ? nullptr : IRMutator::visit(s, self); }
  Stmt visit(const AllocateStmt& s, const Stmt& self) override { return dead(s.array) ? nullptr : IRMutator::visit(s, self); }
  Stmt visit(const StoreStmt& s, const Stmt& self) override { return dead(s.array) ? nullptr : IRMutator::visit(s, self); }
  Stmt visit(const MapStmt& s, const Stmt& self) override { return dead(s.target) ? nullptr : IRMutator::visit(s, self); }
  Stmt visit(const ReduceStmt& s, const Stmt& self) override { return dead(s.result) ? nullptr : IRMutator::visit(s, self); }
  Stmt visit(const ReduceAxisStmt& s, const Stmt& self) override {
    return dead(s.target) ? nullptr : IRMutator::visit(s, self);
  }
  Stmt visit(const StencilStmt& s, const Stmt& self) override {
    return s.allocate && dead(s.target) ? nullptr : IRMutator::visit(s, self);
  }
  Stmt visit(const BindStmt& s, const Stmt& self) override { return dead(s.target) ? nullptr : self; }
  Stmt visit(const SortStmt& s, const Stmt& self) override {
    return dead(s.keys) && (!s.positions || dead(s.positions)) ? nullptr : self;
  }
  Stmt visit(const ScanStmt& s, const Stmt& self) override { return dead(s.out) ? nullptr : self; }

  Stmt visit(const BlockStmt& b, const Stmt& self) override {
    Stmt r = IRMutator::visit(b, self);
    const auto& x = r->as<BlockStmt>();
    // Flatten nested blocks: variables are unique objects, so widening a scope cannot capture anything.
    bool nested = false;
    for (const auto& s : x.stmts) nested |= s->kind == StmtKind::Block;
    if (!nested) return r;
    std::vector<Stmt> flat;
    for (const auto& s : x.stmts) {
      if (const auto* inner = dyn<BlockStmt>(s)) flat.insert(flat.end(), inner->stmts.begin(), inner->stmts.end());
      else flat.push_back(s);
    }
    return make_block(std::move(flat));
  }

  static bool empty(const Stmt& s) {
    const auto* b = dyn<BlockStmt>(s);
    return !s || (b && b->stmts.empty());
  }
  Stmt visit(const ForStmt& s, const Stmt& self) override {
    Stmt r = IRMutator::visit(s, self);
    const auto* x = dyn<ForStmt>(r);
    return x && empty(x->body) ? nullptr : r;
  }
  Stmt visit(const ParforStmt& s, const Stmt& self) override {
    Stmt r = IRMutator::visit(s, self);
    const auto* x = dyn<ParforStmt>(r);
    return x && empty(x->body) && x->reductions.empty() ? nullptr : r;
  }
  Stmt visit(const IfStmt& s, const Stmt& self) override {
    Stmt r = IRMutator::visit(s, self);
    const auto* x = dyn<IfStmt>(r);
    if (!x) return r;
    if (empty(x->then_body) && empty(x->else_body)) return nullptr;
    if (x->else_body && empty(x->else_body)) return make_if(x->cond, x->then_body, nullptr);
    return r;
  }
};

/// Drops reduction clauses whose variable the body no longer updates (its updates folded away), so that the
/// variable can be propagated or removed like any other.
class PruneReductions : public IRMutator {
 protected:
  using IRMutator::visit;
  Stmt visit(const ParforStmt& p, const Stmt& self) override {
    Stmt r = IRMutator::visit(p, self);
    const auto& q = r->as<ParforStmt>();
    const VarSet assigned = assigned_vars(q.body), stored = stored_arrays(q.body);
    std::vector<Reduction> keep;
    for (const auto& red : q.reductions)
      if (assigned.count(red.var.get())) keep.push_back(red);
    std::vector<ArrayReduction> keep_arrays;
    for (const auto& red : q.array_reductions)
      if (stored.count(red.array.get())) keep_arrays.push_back(red);
    if (keep.size() == q.reductions.size() && keep_arrays.size() == q.array_reductions.size()) return r;
    return make_parfor(q.indices, q.begins, q.ends, q.body, std::move(keep), std::move(keep_arrays), q.origin);
  }
};

Function simplify_once(const Function& in) {
  Function f = in;
  Folder fold;
  f = fold.mutate(f);
  PruneReductions prune;
  f = prune.mutate(f);
  ShareUpdateSubscripts share;
  f = share.mutate(f);

  const VarSet assigned = assigned_vars(f.body);
  Replacements copies;  // VarRef(v) -> expr; Let v is deleted
  collect_copies(f.body, assigned, copies);
  std::vector<std::pair<Var, Expr>> available;
  collect_common_lets(f.body, assigned, available, copies);
  // A replacement may itself mention replaced variables.
  if (!copies.empty()) f = substitute(f, copies, {.transitive = true, .drop_lets = true});

  DeadCode dce(used_vars(f));
  f = dce.mutate(f);
  if (!f.body) f.body = make_block({});
  return f;
}

}  // namespace

ir::Function simplify(const ir::Function& f, PassContext&) {
  ir::Function cur = f;
  for (int i = 0; i < 8; ++i) {
    ir::Function next = simplify_once(cur);
    bool same = next.body == cur.body && next.result == cur.result;
    for (size_t m = 0; same && m < next.tuple.size(); ++m) same = next.tuple[m].scalar == cur.tuple[m].scalar;
    cur = std::move(next);
    if (same) break;
  }
  return cur;
}

}  // namespace kiln::passes
