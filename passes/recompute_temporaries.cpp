// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "passes/recompute_temporaries.hpp"

#include <optional>

#include "ir/builder.hpp"
#include "ir/printer.hpp"
#include "ir/substitute.hpp"
#include "passes/loop_analysis.hpp"
#include "passes/statement_lists.hpp"

namespace kiln::passes {
namespace {

using namespace kiln::ir;

constexpr std::size_t kMaxNodes = 12;  ///< recomputing more than a few operations per element is not cheap

/// True if `index` is exactly the references to `indices`, in order.
bool own_index(const std::vector<Expr>& index, const std::vector<Var>& indices) {
  if (index.size() != indices.size()) return false;
  for (std::size_t d = 0; d < index.size(); ++d) {
    const auto* r = dyn<VarRefExpr>(index[d]);
    if (!r || r->var != indices[d]) return false;
  }
  return true;
}

/// The loads of `e`, or nullopt if a subscript itself loads (the value would read memory twice over).
std::optional<std::vector<const LoadExpr*>> plain_loads(const Expr& e) {
  struct Loads : IRVisitor {
    std::vector<const LoadExpr*> all;
    void visit(const LoadExpr& l) override {
      all.push_back(&l);
      IRVisitor::visit(l);
    }
  } loads;
  loads.walk(e);
  for (const LoadExpr* l : loads.all)
    for (const Expr& i : l->indices)
      if (has_load(i)) return std::nullopt;
  return loads.all;
}

/// Rewrites a reader: each load t[j] becomes the producer's value at j.
class Recompute final : public IRMutator {
 public:
  Recompute(const VarNode* t, const Expr& value, const std::vector<Var>& from) : t_(t), value_(value), from_(from) {}

 protected:
  using IRMutator::visit;
  Expr visit(const LoadExpr& l, const Expr& self) override {
    if (l.array.get() != t_) return IRMutator::visit(l, self);
    std::vector<Expr> j;
    mutate_all(l.indices, j);
    Replacements at;
    for (std::size_t d = 0; d < from_.size(); ++d) at[from_[d].get()] = j[d];
    return substitute(value_, at);
  }

 private:
  const VarNode* t_;
  Expr value_;
  const std::vector<Var>& from_;
};

class Recomputer {
 public:
  Recomputer(const Function& f, PassContext& ctx) : fn_(f), ctx_(ctx), bound_(loops::bound_arrays(f.body)) {}

  Stmt rewrite(const Stmt& s) {
    return rewrite_statement_lists(s, [this](std::vector<Stmt> list) { return recompute(std::move(list)); });
  }

 private:
  const Function& fn_;
  PassContext& ctx_;
  VarSet bound_;

  /// Where a temporary is used: the producer, its store and value, and the readers (positions in the list).
  struct Uses {
    std::size_t producer = 0;
    const StoreStmt* store = nullptr;
    std::vector<std::size_t> readers;
    std::size_t loads = 0;  ///< the readers' loads of the temporary, as written
  };

  std::vector<Stmt> recompute(std::vector<Stmt> list) {
    for (std::size_t k = 0; k < list.size(); ++k) {
      const auto* a = dyn<AllocateStmt>(list[k]);
      if (!a || fn_.returns(a->array.get()) || bound_.count(a->array.get())) continue;
      bool result_reads = false;
      for (const Expr& e : fn_.result_exprs()) result_reads |= uses(e, a->array.get());
      if (result_reads) continue;
      const std::optional<Uses> u = uses_of(list, k);
      if (!u || !worth_it(list, *u)) continue;
      apply(list, k, *u);
      --k;
    }
    return list;
  }

  /// The producer and readers of the array allocated at `k`, if every statement after it that mentions the
  /// array is one of them and each has the required form.
  std::optional<Uses> uses_of(const std::vector<Stmt>& list, std::size_t k) const {
    const VarNode* t = list[k]->as<AllocateStmt>().array.get();
    Uses u;
    bool produced = false;
    for (std::size_t j = k + 1; j < list.size(); ++j) {
      if (!uses(list[j], t)) continue;
      const auto* p = dyn<ParforStmt>(list[j]);
      if (!p) return std::nullopt;
      for (const auto& r : p->array_reductions)
        if (r.array.get() == t) return std::nullopt;
      const loops::Effects e = loops::effects_of(list[j]);
      if (!produced) {
        // The producer: one store, a statement of the parfor's body itself, at the parfor's own index.
        if (e.loaded.count(t)) return std::nullopt;
        const StoreStmt* store = nullptr;
        for (const Stmt& s : loops::statements(p->body)) {
          const auto* st = dyn<StoreStmt>(s);
          if (st && st->array.get() == t) {
            if (store) return std::nullopt;
            store = st;
          }
        }
        std::size_t stores = 0;
        for (const auto& acc : e.accesses) stores += acc.array.get() == t;
        if (!store || stores != 1 || !own_index(store->indices, p->indices)) return std::nullopt;
        const auto& shape = list[k]->as<AllocateStmt>().shape;
        if (!loops::equal_all(p->ends, shape)) return std::nullopt;
        for (const Expr& b : p->begins)
          if (!is_const_value(b, 0)) return std::nullopt;
        u.producer = j;
        u.store = store;
        produced = true;
        continue;
      }
      // A reader: loads only. The producer wrote every element (its space is the array's shape), so a load
      // at any index reads the value there (a row of a reduction reads t[i, j] in a loop nested in the row).
      if (e.stored.count(t)) return std::nullopt;
      struct Dims : IRVisitor {
        const VarNode* t;
        bool found = false;
        void visit(const DimExpr& d) override { found |= d.array.get() == t; }
      } dims;
      dims.t = t;
      dims.walk(list[j]);
      if (dims.found) return std::nullopt;
      u.readers.push_back(j);
      for (const auto& acc : e.accesses) u.loads += acc.array.get() == t;
    }
    if (!produced || u.readers.empty()) return std::nullopt;
    return u;
  }

  /// The value is cheap, pointwise and the same when each reader runs; recomputing loads no more than the
  /// temporary's writes and reads.
  bool worth_it(const std::vector<Stmt>& list, const Uses& u) const {
    const auto& p = list[u.producer]->as<ParforStmt>();
    const Expr& e = u.store->value;
    if (node_count(e) > kMaxNodes) return false;
    const auto loads = plain_loads(e);
    if (!loads) return false;
    if (loads->size() * u.loads > u.loads + 1) return false;
    // What the value reads: defined outside the producer (its index aside), neither assigned from the
    // producer through the last reader, nor stored after the producer (stored by the producer only as
    // settled_in_producer allows).
    const VarSet inside = declared_in(p.body);
    for (const Var& v : free_vars(e))
      if (inside.count(v.get())) return false;
    VarSet arrays;
    for (const LoadExpr* l : *loads) arrays.insert(l->array.get());
    for (std::size_t j = u.producer; j <= u.readers.back(); ++j) {
      const loops::Effects fx = loops::effects_of(list[j]);
      for (const Var& v : free_vars(e))
        if (fx.writes.count(v.get())) return false;
      for (const VarNode* a : arrays)
        if (loops::may_alias_any(a, fx.stored) && (j != u.producer || !settled_in_producer(p, a, *loads, u.store)))
          return false;
    }
    return true;
  }

  /// The producer writes `a`, which the value reads: fine when the value sees what `a` holds once the producer
  /// is done. That is so when every access of `a` in the producer is at one subscript, which picks one element
  /// per iteration (no other iteration writes it), and the stores come before the temporary's, directly in the
  /// body: the value reads the element its own iteration wrote last (heat-3d's `2 * b` of the next sweep,
  /// fused into the sweep that writes b).
  static bool settled_in_producer(const ParforStmt& p, const VarNode* a, const std::vector<const LoadExpr*>& loads,
                                  const StoreStmt* temporary) {
    const std::vector<Expr>* at = nullptr;
    for (const LoadExpr* l : loads) {
      if (l->array.get() != a) continue;
      if (at && !loops::equal_all(*at, l->indices)) return false;
      at = &l->indices;
    }
    if (!at || !loops::one_element_per_iteration(*at, p.indices, loops::variant_in(p.body))) return false;
    for (const auto& acc : loops::effects_of(p.body).accesses)
      if (ir::may_alias(acc.array.get(), a) && (acc.array.get() != a || !loops::equal_all(acc.index, *at))) return false;
    bool stored_before = true;
    bool seen_temporary = false;
    for (const Stmt& s : loops::statements(p.body)) {
      if (s.get() == temporary) seen_temporary = true;
      const loops::Effects fx = loops::effects_of(s);
      if (fx.stored.count(a)) stored_before = stored_before && !seen_temporary && s->kind == StmtKind::Store;
    }
    return stored_before;
  }

  void apply(std::vector<Stmt>& list, std::size_t k, const Uses& u) {
    const auto& a = list[k]->as<AllocateStmt>();
    const auto& p = list[u.producer]->as<ParforStmt>();
    const Expr value = u.store->value;
    const std::vector<Var> from = p.indices;
    Recompute rc(a.array.get(), value, from);
    std::string readers;
    for (std::size_t j : u.readers) {
      readers += (readers.empty() ? "" : ", ") + loops::origin_text(list[j]->as<ParforStmt>());
      list[j] = rc.mutate(list[j]);
    }
    ctx_.note(Topic::allocations, "recomputed " + a.array->name + " = " + to_string(value) + " where " + readers +
                                      " read it instead of storing it in " + loops::origin_text(p) +
                                      ": loads no more elements than writing and reading the temporary");
    std::vector<Stmt> body;
    for (const Stmt& s : loops::statements(p.body))
      if (s.get() != u.store) body.push_back(s);
    const bool idle = body.empty() && p.reductions.empty() && p.array_reductions.empty();
    if (idle) list.erase(list.begin() + static_cast<std::ptrdiff_t>(u.producer));
    else
      list[u.producer] = make_parfor(p.indices, p.begins, p.ends, make_block(std::move(body)), p.reductions,
                                     p.array_reductions, p.origin);
    list.erase(list.begin() + static_cast<std::ptrdiff_t>(k));
  }
};

}  // namespace

ir::Function recompute_temporaries(const ir::Function& f, PassContext& ctx) {
  Recomputer r(f, ctx);
  ir::Function out = f;
  out.body = r.rewrite(f.body);
  return out;
}

}  // namespace kiln::passes
