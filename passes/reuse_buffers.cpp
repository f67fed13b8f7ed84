// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Buffer reuse. Array code allocates a result per operation; once an array is dead its memory can hold a
// later one of the same shape. The interesting case is the in-place one: in softmax's last step
// `out[i] = e[i] / s`, e dies in the very loop that fills out, and because each iteration reads e[i]
// before writing out[i] and no other iteration touches element i, out can live in e's buffer. That makes
// softmax allocate only its result, which is e's buffer handed to the caller.
#include "passes/reuse_buffers.hpp"

#include <optional>

#include "ir/builder.hpp"
#include "ir/substitute.hpp"
#include "passes/loop_analysis.hpp"
#include "passes/statement_lists.hpp"

namespace kiln::passes {
namespace {

using namespace kiln::ir;

/// True if `s` reads or writes elements of `array` (a Dim is no use of its memory).
bool touches(const Stmt& s, const VarNode* array) {
  const loops::Effects e = loops::effects_of(s);
  return e.loaded.count(array) || e.stored.count(array);
}

bool same_extents(const AllocateStmt& a, const AllocateStmt& b) { return loops::equal_all(a.shape, b.shape); }

/// True if parfor `p` can write `out` into the memory of `in`: it reads `in` and reads or writes `out`
/// only at one subscript tuple picking one element per iteration, writes `out` only in statements of its
/// body and reads `in` in no statement after one that writes `out` (a store's value is read before it
/// writes).
bool in_place(const ParforStmt& p, const VarNode* in, const VarNode* out) {
  for (const auto& r : p.array_reductions)
    if (r.array.get() == in || r.array.get() == out) return false;
  const loops::Effects e = loops::effects_of(p.body);
  if (e.stored.count(in)) return false;
  const std::vector<Expr>* tuple = nullptr;
  for (const auto& a : e.accesses) {
    if (a.array.get() != in && a.array.get() != out) continue;
    if (!tuple) tuple = &a.index;
    if (!loops::equal_all(a.index, *tuple)) return false;
  }
  if (!tuple || !loops::one_element_per_iteration(*tuple, p.indices, loops::variant_in(p.body))) return false;
  bool written = false;
  for (const auto& s : loops::statements(p.body)) {
    const loops::Effects se = loops::effects_of(s);
    const bool reads_in = se.loaded.count(in) > 0;
    if (reads_in && written) return false;
    if (se.stored.count(out)) {
      const auto* st = dyn<StoreStmt>(s);
      if (!st || st->array.get() != out) return false;  // written inside a nested statement
      written = true;
    }
  }
  return written;
}

class Reuser {
 public:
  Reuser(const Function& f, PassContext& ctx)
      : fn_(f), ctx_(ctx), assigned_(assigned_vars(f.body)), bound_(loops::bound_arrays(f.body)) {}

  Function run() {
    Function out = fn_;
    out.body = rewrite(fn_.body);
    auto renamed = [this](Var& a) {
      if (a)
        if (auto it = renamed_.find(a.get()); it != renamed_.end()) a = it->second;
    };
    renamed(out.result_array);
    for (auto& m : out.tuple) renamed(m.array);
    return out;
  }

 private:
  const Function& fn_;
  PassContext& ctx_;
  VarSet assigned_;
  /// Arrays a binding may name: their uses through bindings are invisible to dead_at, so their buffers
  /// are neither given away nor shared.
  VarSet bound_;
  std::unordered_map<const VarNode*, Var> renamed_;  ///< arrays replaced by the array whose buffer they took

  /// True if `v` holds a result: a result array (the single one or a tuple member) or the array whose
  /// buffer it took.
  bool is_result(const VarNode* v) const {
    auto holds = [&](const Var& a) {
      if (!a) return false;
      auto it = renamed_.find(a.get());
      return (it == renamed_.end() ? a.get() : it->second.get()) == v;
    };
    if (holds(fn_.result_array)) return true;
    for (const auto& m : fn_.tuple)
      if (holds(m.array)) return true;
    return false;
  }

  /// True if a scalar result, evaluated after the body (and not renamed here), reads the array `v`.
  bool read_by_result(const VarNode* v) const {
    for (const Expr& e : fn_.result_exprs())
      if (uses(e, v)) return true;
    return false;
  }

  /// Every block, innermost first: an array dead in a block gives its buffer to a later allocation there.
  Stmt rewrite(const Stmt& s) {
    return rewrite_statement_lists(s, [this](std::vector<Stmt> list) { return reuse(std::move(list)); });
  }

  std::vector<Stmt> reuse(std::vector<Stmt> list) {
    for (size_t k = 0; k < list.size(); ++k) {
      const auto* b = dyn<AllocateStmt>(list[k]);
      if (!b || !loops::stable_extents(b->shape, assigned_) || bound_.count(b->array.get()) || read_by_result(b->array.get()))
        continue;
      for (size_t m = 0; m < k; ++m) {
        const auto* a = dyn<AllocateStmt>(list[m]);
        if (!a || a->array->type != b->array->type || !same_extents(*a, *b) || is_result(a->array.get()) ||
            read_by_result(a->array.get()) || bound_.count(a->array.get()))
          continue;
        const std::optional<std::string> how = dead_at(list, k, a->array.get(), b->array.get());
        if (!how) continue;
        Renamer rename;
        rename.vars[b->array.get()] = a->array;
        for (size_t j = k + 1; j < list.size(); ++j) list[j] = rename.mutate(list[j]);
        for (auto& [from, to] : renamed_)
          if (to == b->array) to = a->array;
        renamed_[b->array.get()] = a->array;
        ctx_.note(Topic::allocations, "reused the buffer of " + a->array->name + " for " + b->array->name + " (" + *how + ")");
        list.erase(list.begin() + static_cast<std::ptrdiff_t>(k));
        --k;
        break;
      }
    }
    return list;
  }

  /// Why array `a` may give its memory to `b`, allocated at position k, or nullopt if it may not.
  static std::optional<std::string> dead_at(const std::vector<Stmt>& list, size_t k, const VarNode* a, const VarNode* b) {
    std::optional<size_t> last_use, first_write;
    for (size_t j = k + 1; j < list.size(); ++j) {
      if (touches(list[j], a)) {
        if (last_use) return std::nullopt;  // used by two statements: alive while b is
        last_use = j;
      }
      if (!first_write && touches(list[j], b)) first_write = j;
    }
    if (!last_use) return a->name + " is dead";
    if (last_use != first_write) return std::nullopt;
    const auto* p = dyn<ParforStmt>(list[*last_use]);
    if (!p || !in_place(*p, a, b)) return std::nullopt;
    return "in place: " + loops::origin_text(*p) + " reads each element of " + a->name + " before writing it to " +
           b->name + " and never again";
  }
};

}  // namespace

ir::Function reuse_buffers(const ir::Function& f, PassContext& ctx) {
  Reuser r(f, ctx);
  return r.run();
}

}  // namespace kiln::passes
