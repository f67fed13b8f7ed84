// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "passes/spread_loops.hpp"

#include <limits>
#include <optional>

#include "ir/analysis.hpp"
#include "ir/builder.hpp"
#include "ir/printer.hpp"
#include "ir/substitute.hpp"
#include "ir/visitor.hpp"
#include "passes/loop_analysis.hpp"

namespace kiln::passes {
namespace {

using namespace kiln::ir;

/// Whether `s` holds only plain statements — blocks, lets, assignments, stores, sequential loops, branches —
/// whose effects are its loads, stores and assignments: no parfor, atomic, allocation, check, binding or sort.
bool plain(const Stmt& s) {
  if (!s) return true;
  switch (s->kind) {
    case StmtKind::Block:
      for (const Stmt& x : s->as<BlockStmt>().stmts)
        if (!plain(x)) return false;
      return true;
    case StmtKind::Let:
    case StmtKind::Assign:
    case StmtKind::Store: return true;
    case StmtKind::For: return plain(s->as<ForStmt>().body);
    case StmtKind::If: return plain(s->as<IfStmt>().then_body) && plain(s->as<IfStmt>().else_body);
    default: return false;
  }
}

/// One level of the chain: the lets before its loop, and the loop.
struct Level {
  std::vector<Stmt> lets;
  const ForStmt* loop = nullptr;
};

/// One element's loads as a variable's value and its stores as assignments to it.
class Promote final : public IRMutator {
 public:
  Promote(const VarNode* array, std::vector<Expr> index, Var value) : array_(array), index_(std::move(index)), value_(std::move(value)) {}

 protected:
  using IRMutator::visit;
  Expr visit(const LoadExpr& e, const Expr& self) override {
    if (e.array.get() == array_ && loops::equal_all(e.indices, index_)) return make_ref(value_);
    return IRMutator::visit(e, self);
  }
  Stmt visit(const StoreStmt& s, const Stmt& self) override {
    if (s.array.get() == array_ && loops::equal_all(s.indices, index_)) return make_assign(value_, mutate(s.value));
    return IRMutator::visit(s, self);
  }

 private:
  const VarNode* array_;
  std::vector<Expr> index_;
  Var value_;
};

/// Whether every access of `array` in `body` is one of its top-level statements' (not under a branch or a
/// loop): the element is then read or written whenever the body runs.
bool accessed_unconditionally(const Stmt& body, const VarNode* array) {
  std::size_t top = 0;
  for (const Stmt& st : loops::statements(body))
    if (st->kind != StmtKind::If && st->kind != StmtKind::For)
      for (const loops::Access& a : loops::effects_of(st).accesses) top += a.array.get() == array;
  std::size_t all = 0;
  for (const loops::Access& a : loops::effects_of(body).accesses) all += a.array.get() == array;
  return top == all;
}

class Spreading final : public IRMutator {
 public:
  explicit Spreading(PassContext& ctx) : ctx_(ctx) {}

 protected:
  using IRMutator::visit;

  // Parfors nested in this one run inside its kernel: only the outermost is rewritten.
  Stmt visit(const ParforStmt& p, const Stmt& self) override {
    if (!p.reductions.empty() || !p.array_reductions.empty()) return self;
    const VarSet variant = loops::variant_in(p.body);
    // Invariant in the parfor's body: no load, nothing declared or assigned in it, no index of the parfor.
    auto invariant = [&](const Expr& e) { return loops::invariant_in(e, p.indices, variant); };
    const loops::Effects all = loops::effects_of(p.body);

    // The chain: at each level, lets and then one loop; it ends at the first loop whose steps are independent.
    std::vector<Level> chain;
    Stmt body = p.body;
    while (true) {
      const std::vector<Stmt> stmts = loops::statements(body);
      if (stmts.empty()) return self;
      Level level;
      for (std::size_t s = 0; s + 1 < stmts.size(); ++s) {
        if (!dyn<LetStmt>(stmts[s])) return self;
        level.lets.push_back(stmts[s]);
      }
      level.loop = dyn<ForStmt>(stmts.back());
      if (!level.loop) return self;
      chain.push_back(level);
      if (independent(*level.loop, all, variant)) break;
      body = level.loop->body;
    }
    const ForStmt& j = *chain.back().loop;
    // The new dimension's range: j's bounds, invariant, or an end `p + c` (a triangle) bounded by p's range.
    if (!invariant(j.begin)) return self;
    Expr end = j.end, guard;
    if (!invariant(j.end)) {
      std::optional<std::int64_t> c;
      std::size_t d = 0;
      while (d < p.indices.size() && !(c = index_offset(j.end, p.indices[d].get()))) ++d;
      if (!c || *c == std::numeric_limits<std::int64_t>::min()) return self;
      // p < ends[d], so p + c <= ends[d] - 1 + c.
      end = *c == 1 ? p.ends[d] : make_binary(BinaryOp::Add, p.ends[d], make_i64(*c - 1));
      guard = make_binary(BinaryOp::Lt, make_ref(j.index), j.end);
    }
    std::vector<Var> indices = p.indices;
    std::vector<Expr> begins = p.begins, ends = p.ends;
    indices.push_back(j.index);
    begins.push_back(j.begin);
    ends.push_back(end);
    // The parfor's own iterations, counted when it is launched: with as many as keep a device busy, it stays
    // as written (a thread per iteration already fills the GPU, and a short loop as a dimension would leave most
    // of a warp's lanes idle).
    Expr count = make_i64(1);
    for (std::size_t d = 0; d < p.indices.size(); ++d)
      count = make_binary(BinaryOp::Mul, count, make_binary(BinaryOp::Max, make_i64(0), make_binary(BinaryOp::Sub, p.ends[d], p.begins[d])));
    ctx_.note("spread_loops: the parfor " + loops::space_text(p) + " from " + loops::origin_text(p) + ": its loop over " + j.index->name +
              (chain.size() > 1 ? " (inside " + std::to_string(chain.size() - 1) + " loop(s))" : std::string()) +
              " writes one element per step -> a dimension of the parfor, " + j.index->name + " in " + to_string(j.begin) + " .. " +
              to_string(end) + (guard ? " with each step testing `" + to_string(guard) + "` (a triangle)" : std::string()) +
              ": a thread per element, the loops around it run in order for that element, when the parfor has fewer than " +
              std::to_string(ctx_.device_threads) + " iterations of its own");
    // The spread form is a copy with variables of its own (a variable is declared once).
    const Stmt spread = fresh_copy(make_parfor(indices, begins, ends, rebuilt(chain, guard), {}, p.origin));
    // A parfor with fewer iterations than keep the device busy (PassContext::device_threads) spreads the loop.
    return make_if(make_binary(BinaryOp::Lt, count, make_i64(ctx_.device_threads)), make_block({spread}), make_block({self}));
  }

 private:
  PassContext& ctx_;

  /// Whether the steps of `loop` are independent (the rule in the header).
  static bool independent(const ForStmt& loop, const loops::Effects& all, const VarSet& variant) {
    const VarSet mine = declared_in(loop.body);
    if (!plain(loop.body)) return false;
    for (const VarNode* v : assigned_vars(loop.body))
      if (!mine.count(v)) return false;
    const loops::Effects e = loops::effects_of(loop.body);
    std::vector<std::pair<const VarNode*, std::vector<Expr>>> owned;
    for (const loops::Access& a : e.accesses) {
      if (!a.store) continue;
      if (!loops::one_element_per_iteration(a.index, {loop.index}, variant)) return false;
      for (const auto& [array, index] : owned)
        if (array == a.array.get() && !loops::equal_all(index, a.index)) return false;
      owned.emplace_back(a.array.get(), a.index);
    }
    if (owned.empty()) return false;
    // Every access of a stored array (or of one that may share its memory) in the whole body is the owned
    // element, inside the loop.
    for (const auto& [array, index] : owned) {
      std::size_t inside = 0, anywhere = 0;
      for (const loops::Access& a : e.accesses)
        if (ir::may_alias(a.array.get(), array)) {
          if (!loops::equal_all(a.index, index)) return false;
          ++inside;
        }
      for (const loops::Access& a : all.accesses)
        if (ir::may_alias(a.array.get(), array)) ++anywhere;
      if (anywhere != inside) return false;
    }
    return true;
  }

  /// The body of the new parfor: the chain's loops without j, j's body innermost (under `guard`). With one
  /// loop around j's body, each element j's body reads and writes unconditionally lives in a variable across
  /// that loop (read before it, written after it), where the loop ran at least once: the element is the
  /// thread's alone, and j's body touches it at every step (a Gram product's `out(i, j) += ...`, which
  /// otherwise loads and stores the element at every step of k: 83 % of the L2's throughput on an H100).
  static Stmt rebuilt(const std::vector<Level>& chain, const Expr& guard) {
    const ForStmt& j = *chain.back().loop;
    if (chain.size() == 2 && !guard) return promoted(chain);
    std::vector<Stmt> inner = chain.back().lets;
    inner.push_back(guard ? make_if(guard, j.body) : j.body);
    for (std::size_t l = chain.size() - 1; l-- > 0;) {
      const Level& level = chain[l];
      std::vector<Stmt> stmts = level.lets;
      stmts.push_back(make_for(level.loop->index, level.loop->begin, level.loop->end, make_block(std::move(inner))));
      inner = std::move(stmts);
    }
    return make_block(std::move(inner));
  }

  /// rebuilt's form for one loop k around j's body: lets0; if (k's range is not empty) { let e = X[idx] for
  /// each element promoted; for k { lets1; j's body on e }; X[idx] = e }.
  static Stmt promoted(const std::vector<Level>& chain) {
    const ForStmt& k = *chain[0].loop;
    const ForStmt& j = *chain[1].loop;
    Stmt body = j.body;
    std::vector<Stmt> before, after;
    std::vector<std::pair<const VarNode*, std::vector<Expr>>> done;
    for (const loops::Access& a : loops::effects_of(j.body).accesses) {
      if (!a.store || !accessed_unconditionally(j.body, a.array.get())) continue;
      bool seen = false;
      for (const auto& [array, index] : done) seen = seen || array == a.array.get();
      if (seen) continue;
      done.emplace_back(a.array.get(), a.index);
      const Var e = make_var(a.array->name + "_element", Type::scalar(a.array->type.elem), VarKind::Local);
      before.push_back(make_let(e, make_load(a.array, a.index)));
      after.push_back(make_store(a.array, a.index, make_ref(e)));
      body = Promote(a.array.get(), a.index, e).mutate(body);
    }
    std::vector<Stmt> inner = chain[1].lets;
    inner.push_back(body);
    std::vector<Stmt> guarded = before;
    guarded.push_back(make_for(k.index, k.begin, k.end, make_block(std::move(inner))));
    guarded.insert(guarded.end(), after.begin(), after.end());
    std::vector<Stmt> out = chain[0].lets;
    if (before.empty()) {
      out.push_back(make_block(std::move(guarded)));
    } else {
      out.push_back(make_if(make_binary(BinaryOp::Lt, k.begin, k.end), make_block(std::move(guarded))));
    }
    return make_block(std::move(out));
  }
};

}  // namespace

ir::Function spread_loops(const ir::Function& f, PassContext& ctx) {
  Spreading s(ctx);
  return s.mutate(f);
}

}  // namespace kiln::passes
