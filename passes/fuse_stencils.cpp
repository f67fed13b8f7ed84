// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Stencil fusion (passes/fuse_stencils.hpp). After lower_array_ops a map is `alloc t; parfor i { t[i] = f }`,
// so both neighbours of a stencil are found as that pair in the stencil's block. A consumer is folded into
// the stencil's value, which makes the stencil write the consumer's array and moves it down to the
// consumer's place; a producer is recomputed at each read, which moves its reads up into the stencil. Either
// way the temporary between them disappears, and with it a pass over memory.
#include "passes/fuse_stencils.hpp"

#include <optional>

#include "ir/analysis.hpp"
#include "ir/builder.hpp"
#include "ir/ops.hpp"
#include "ir/substitute.hpp"
#include "ir/visitor.hpp"
#include "passes/extent_facts.hpp"
#include "passes/loop_analysis.hpp"

namespace kiln::passes {
namespace {

using namespace kiln::ir;

std::vector<Expr> refs(const std::vector<Var>& vars) {
  std::vector<Expr> out;
  for (const auto& v : vars) out.push_back(make_ref(v));
  return out;
}

/// A parfor over [0, ends) whose body is the one store `array[indices] = value` at its own indices.
struct Pointwise {
  const ParforStmt* parfor = nullptr;
  const StoreStmt* store = nullptr;
};

std::optional<Pointwise> pointwise(const Stmt& s) {
  const auto* p = dyn<ParforStmt>(s);
  if (!p || !p->reductions.empty() || !p->array_reductions.empty()) return std::nullopt;
  for (const auto& b : p->begins)
    if (const auto* k = dyn<ConstExpr>(b); !k || k->i != 0) return std::nullopt;
  const auto body = loops::statements(p->body);
  const auto* st = body.size() == 1 ? dyn<StoreStmt>(body[0]) : nullptr;
  if (!st || !loops::equal_all(st->indices, refs(p->indices))) return std::nullopt;
  return Pointwise{p, st};
}

/// True if `e` reads arrays only at exactly `indices` and mentions the indices nowhere else.
bool reads_only_at(const Expr& e, const std::vector<Var>& indices) {
  struct Scan : IRVisitor {
    const std::vector<Expr> at;
    const std::vector<Var>& idx;
    bool ok = true;
    Scan(std::vector<Expr> a, const std::vector<Var>& i) : at(std::move(a)), idx(i) {}
    void visit(const LoadExpr& l) override { ok &= loops::equal_all(l.indices, at); }
    void visit(const VarRefExpr& r) override {
      for (const auto& i : idx) ok &= r.var != i;
    }
  } scan(refs(indices), indices);
  scan.walk(e);
  return scan.ok;
}

/// Arrays `e` loads from.
std::vector<Var> loaded_arrays(const Expr& e) {
  struct Scan : IRVisitor {
    std::vector<Var> out;
    void visit(const LoadExpr& l) override {
      bool seen = false;
      for (const auto& v : out) seen |= v == l.array;
      if (!seen) out.push_back(l.array);
      IRVisitor::visit(l);
    }
  } scan;
  scan.walk(e);
  return std::move(scan.out);
}

int count_loads(const Expr& e, const VarNode* array) {
  struct Scan : IRVisitor {
    const VarNode* a;
    int n = 0;
    explicit Scan(const VarNode* x) : a(x) {}
    void visit(const LoadExpr& l) override {
      n += l.array.get() == a;
      IRVisitor::visit(l);
    }
  } scan(array);
  scan.walk(e);
  return scan.n;
}

/// Replaces loads of `array` at `at` by `by` (after the rest of the expression is rewritten).
class ReplaceLoad : public IRMutator {
 public:
  ReplaceLoad(const Var& array, std::vector<Expr> at, Expr by) : array_(array), at_(std::move(at)), by_(std::move(by)) {}

 protected:
  using IRMutator::visit;
  const Var& array_;
  std::vector<Expr> at_;
  Expr by_;
  Expr visit(const LoadExpr& l, const Expr& self) override {
    if (l.array == array_ && loops::equal_all(l.indices, at_)) return by_;
    return IRMutator::visit(l, self);
  }
};

/// Replaces every load of `array` at q by the producer's value `f` with its own index tuple replaced by q.
class Recompute : public IRMutator {
 public:
  Recompute(const Var& array, const Pointwise& producer) : array_(array), p_(producer) {}

 protected:
  using IRMutator::visit;
  const Var& array_;
  const Pointwise& p_;
  Expr visit(const LoadExpr& l, const Expr& self) override {
    Expr r = IRMutator::visit(l, self);
    const auto* x = dyn<LoadExpr>(r);
    if (!x || x->array != array_) return r;
    struct At : IRMutator {
      const std::vector<Expr> from, to;
      At(std::vector<Expr> f, std::vector<Expr> t) : from(std::move(f)), to(std::move(t)) {}
      using IRMutator::visit;
      Expr visit(const LoadExpr& e, const Expr& self) override {
        return loops::equal_all(e.indices, from) ? make_load(e.array, to) : self;
      }
    } at(refs(p_.parfor->indices), x->indices);
    return at.mutate(p_.store->value);
  }
};

class Fuser : public IRMutator {
 public:
  Fuser(const Function& f, PassContext& ctx) : fn_(f), ctx_(ctx), bound_(loops::bound_arrays(f.body)) {}

 protected:
  using IRMutator::visit;
  const Function& fn_;
  PassContext& ctx_;
  VarSet bound_;
  ExtentFacts facts_;  ///< established by the statements before the one being visited

  Stmt visit(const BlockStmt& b, const Stmt& self) override {
    const ExtentFacts outer = facts_;
    std::vector<Stmt> list;
    bool changed = false;
    for (const Stmt& s : b.stmts) {
      Stmt m = mutate(s);  // nested blocks see the facts of the statements before them
      changed |= m != s;
      facts_.learn(s);
      if (m) list.push_back(std::move(m));
    }
    facts_ = outer;
    for (bool again = true; again;) {
      again = false;
      for (size_t k = 0; k < list.size() && !again; ++k) {
        if (!dyn<StencilStmt>(list[k])) continue;
        ExtentFacts facts = outer;
        for (size_t j = 0; j < k; ++j) facts.learn(list[j]);
        again = fuse_consumer(list, k) || fuse_producer(list, k, facts);
        changed |= again;
      }
    }
    return changed ? make_block(std::move(list)) : self;
  }

  void note(const std::string& s) { ctx_.note(Topic::fusion, "fuse_stencils: " + s); }

  static std::string label(const StencilStmt& st) { return st.origin.empty() ? "stencil" : st.origin; }
  static std::string label(const ParforStmt& p) { return p.origin.empty() ? "parfor" : p.origin; }

  /// True if the statements of list in (from, to) leave everything `e` reads (arrays, scalars) unchanged.
  static bool unchanged_between(const std::vector<Stmt>& list, size_t from, size_t to, const std::vector<Var>& reads) {
    for (size_t j = from + 1; j < to; ++j) {
      const VarSet stored = stored_arrays(list[j]), assigned = assigned_vars(list[j]);
      for (const auto& v : reads)
        if (assigned.count(v.get()) || (v->type.is_array() && loops::may_alias_any(v.get(), stored))) return false;
    }
    return true;
  }

  bool used_after(const std::vector<Stmt>& list, size_t from, const VarNode* v) const {
    if (fn_.returns(v) || bound_.count(v)) return true;
    for (size_t j = from + 1; j < list.size(); ++j)
      if (uses(list[j], v)) return true;
    return false;
  }

  bool fuse_consumer(std::vector<Stmt>& list, size_t k) {
    const Stmt self = list[k];  // keeps st (and what refers into it) alive while list changes
    const auto& st = self->as<StencilStmt>();
    if (!st.allocate) return false;
    const Var& s = st.target;
    size_t c = k + 1;
    while (c < list.size() && !uses(list[c], s.get())) ++c;
    if (c == list.size()) return false;
    const Stmt consumer = list[c];
    const auto pw = pointwise(consumer);
    if (!pw) return false;  // not a map: nothing to fold
    const ParforStmt& p = *pw->parfor;
    const std::string what = label(p) + " into " + label(st);
    auto refuse = [&](const std::string& why) {
      note("did not fold consumer " + what + ": " + why);
      return false;
    };
    if (st.border == Border::skip) return refuse("skipped border elements are not computed from the neighbourhood");
    if (p.indices.size() != st.indices.size() || !loops::equal_all(p.ends, st.shape))
      return refuse("its index space is not the stencil's");
    const Var& r = pw->store->array;
    if (r == s) return refuse("it writes " + s->name);
    if (used_after(list, c, s.get())) return refuse(s->name + " is used after it");
    for (const auto& w : st.windows)
      if (may_alias(r.get(), w.get())) return refuse(r->name + " may be the window " + w->name);
    Renamer rename;
    for (size_t d = 0; d < p.indices.size(); ++d) rename.vars[p.indices[d].get()] = st.indices[d];
    const Expr g = rename.mutate(pw->store->value);
    if (count_loads(g, s.get()) > 1) return refuse("it reads " + s->name + " more than once: the stencil would run twice");
    const Expr value = ReplaceLoad(s, refs(st.indices), st.value).mutate(g);
    if (uses(value, s.get())) return refuse("it reads " + s->name + " at other elements than its own");
    if (uses(value, r.get())) return refuse("it reads " + r->name + ", which it writes");
    std::vector<Var> reads = free_vars(st.value);
    for (const auto& w : st.windows) reads.push_back(w);
    if (!unchanged_between(list, k, c, reads)) return refuse("statements between them change what the stencil reads");
    list[c] = make_stencil(r, false, st.indices, st.shape, refs(st.indices), value, st.windows, st.lo, st.hi, st.border,
                           st.cval, label(st) + " | " + label(p));
    list.erase(list.begin() + static_cast<std::ptrdiff_t>(k));
    note("folded consumer " + what + ": it writes " + r->name + " directly, " + s->name + " is gone");
    return true;
  }

  bool fuse_producer(std::vector<Stmt>& list, size_t k, ExtentFacts& facts) {
    const Stmt self = list[k];  // keeps st (and what refers into it) alive while list changes
    const auto& st = self->as<StencilStmt>();
    for (size_t wi = 0; wi < st.windows.size(); ++wi) {
      const Var& t = st.windows[wi];
      if (t->kind != VarKind::Local) continue;
      std::optional<size_t> alloc, writer;
      bool other = false;
      for (size_t j = 0; j < k; ++j) {
        if (const auto* a = dyn<AllocateStmt>(list[j]); a && a->array == t) alloc = j;
        else if (alloc && uses(list[j], t.get())) {
          if (writer) other = true;
          else writer = j;
        }
      }
      if (!alloc || !writer) continue;
      const Stmt producer = list[*writer];
      const auto pw = pointwise(producer);
      if (!pw || pw->store->array != t) continue;  // not written by a map
      const ParforStmt& p = *pw->parfor;
      const std::string what = label(p) + " into " + label(st);
      auto refuse = [&](const std::string& why) {
        note("did not recompute producer " + what + ": " + why);
        return false;
      };
      if (st.border == Border::constant)
        return refuse("with a constant border, recomputing it outside the array would give f(cval), not cval");
      if (st.border == Border::skip && st.allocate && wi == 0)
        return refuse("skipped border elements copy " + t->name + " itself");
      if (other) return refuse(t->name + " has other users before the stencil");
      if (used_after(list, k, t.get())) return refuse(t->name + " is used after the stencil");
      if (p.indices.size() != st.indices.size() || !loops::equal_all(p.ends, st.shape))
        return refuse("its index space is not the stencil's");
      const Expr& f = pw->store->value;
      if (!reads_only_at(f, p.indices)) return refuse("it is not pointwise (it reads other elements or uses its index)");
      const std::vector<Var> xs = loaded_arrays(f);
      // A producer that reads no array (a constant map) would leave the stencil without a window.
      if (xs.empty() && st.windows.size() == 1) return refuse("it reads no array, and the stencil needs a window");
      for (const auto& x : xs) {
        if (x->type.elem != st.windows[0]->type.elem) return refuse("it reads " + x->name + ", of another element type");
        if (may_alias(x.get(), st.target.get())) return refuse("it reads " + x->name + ", which the stencil may write");
        for (size_t d = 0; d < st.shape.size(); ++d)
          if (!facts.same(make_dim(x, static_cast<int>(d)), st.shape[d]))
            return refuse("the border would treat " + x->name + " by its own extents, not known to be the stencil's");
      }
      if (!unchanged_between(list, *writer, k, free_vars(f)))
        return refuse("statements between them change what it reads");
      const Expr value = Recompute(t, *pw).mutate(st.value);
      if (uses(value, t.get())) return refuse("the stencil reads " + t->name + " other than as a window element");
      std::vector<Var> windows;
      for (const auto& w : st.windows)
        if (w != t) windows.push_back(w);
      for (const auto& x : xs) {
        bool seen = false;
        for (const auto& w : windows) seen |= w == x;
        if (!seen) windows.insert(wi == 0 ? windows.begin() : windows.end(), x);
      }
      list[k] = make_stencil(st.target, st.allocate, st.indices, st.shape, st.target_index, value, windows, st.lo, st.hi,
                             st.border, st.cval, label(p) + " | " + label(st));
      list.erase(list.begin() + static_cast<std::ptrdiff_t>(*writer));
      list.erase(list.begin() + static_cast<std::ptrdiff_t>(*alloc));
      note("recomputed producer " + what + " at each neighbour (exact under the " + std::string(name_of(st.border)) +
           " border): " + t->name + " is gone");
      return true;
    }
    return false;
  }
};

}  // namespace

ir::Function fuse_stencils(const ir::Function& f, PassContext& ctx) {
  Fuser fuser(f, ctx);
  ir::Function out = f;
  out.body = fuser.mutate(f.body);
  return out;
}

}  // namespace kiln::passes
