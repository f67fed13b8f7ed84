// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "passes/reuse_reductions.hpp"

#include <map>
#include <optional>

#include "ir/analysis.hpp"
#include "ir/builder.hpp"
#include "ir/printer.hpp"
#include "ir/reductions.hpp"
#include "ir/substitute.hpp"
#include "passes/loop_analysis.hpp"
#include "passes/statement_lists.hpp"

namespace kiln::passes {
namespace {

using namespace kiln::ir;

/// Updates larger than this once their lets are replaced are not compared (a key grows with every let it
/// looks through; the statistics that repeat are a few nodes).
constexpr std::size_t kMaxKeyNodes = 256;

/// An update's value in a form two loops can compare: the loop's indices and the accumulator are shared
/// placeholders, every immutable let is its value, and each reduction already replaced is the one that
/// replaced it.
class Canonical final : public IRMutator {
 public:
  Canonical(const LetValues& lets, const std::unordered_map<const VarNode*, Var>& replaced) : lets_(lets), replaced_(replaced) {}

  /// `e` with `indices[d]` as placeholder d and `acc` as the accumulator placeholder; nullptr when too large.
  Expr of(const Expr& e, const std::vector<Var>& indices, const VarNode* acc) {
    own_.clear();
    for (std::size_t d = 0; d < indices.size(); ++d) own_[indices[d].get()] = placeholder(static_cast<int>(d), indices[d]->type.elem);
    if (acc) own_[acc] = placeholder(-1, acc->type.elem);
    nodes_ = 0;
    Expr c = mutate(e);
    return nodes_ > kMaxKeyNodes ? nullptr : c;
  }

  bool is_placeholder(const VarNode* v) const {
    for (const auto& [k, p] : placeholders_)
      if (p.get() == v) return true;
    return false;
  }

 protected:
  using IRMutator::visit;
  Expr visit(const VarRefExpr& r, const Expr& self) override {
    if (++nodes_ > kMaxKeyNodes) return self;
    if (auto o = own_.find(r.var.get()); o != own_.end()) return make_ref(o->second);
    if (auto p = replaced_.find(r.var.get()); p != replaced_.end()) return make_ref(p->second);
    if (auto l = lets_.find(r.var.get()); l != lets_.end()) return mutate(l->second);
    return self;
  }
  Expr visit(const LoadExpr& l, const Expr& self) override {
    ++nodes_;
    return IRMutator::visit(l, self);
  }

 private:
  const LetValues& lets_;
  const std::unordered_map<const VarNode*, Var>& replaced_;
  std::unordered_map<const VarNode*, Var> own_;
  /// (position: an index's dimension, -1 the accumulator; its type) -> the placeholder both loops share.
  std::map<std::pair<int, DType>, Var> placeholders_;
  std::size_t nodes_ = 0;

  const Var& placeholder(int position, DType t) {
    Var& p = placeholders_[{position, t}];
    if (!p)
      p = position < 0 ? make_var("accumulator", Type::scalar(t), VarKind::Local)
                       : make_var("index" + std::to_string(position), Type::scalar(t), VarKind::Index);
    return p;
  }
};

/// The arrays `e` loads from.
VarSet loaded_arrays(const Expr& e) {
  struct Loads : IRVisitor {
    VarSet arrays;
    void visit(const LoadExpr& l) override {
      arrays.insert(l.array.get());
      IRVisitor::visit(l);
    }
  } loads;
  loads.walk(e);
  return loads.arrays;
}

class Reuser {
 public:
  Reuser(const Function& f, PassContext& ctx) : ctx_(ctx) {
    // A let stands for its value wherever it is read when that value cannot change: it reads no variable that is
    // ever assigned, except the total of a reduction whose loop has run before the let (a settled total: its
    // only assignments are that loop's updates). `let m = s / n` before s's loop reads the start, so it is kept
    // as itself.
    struct Totals : IRVisitor {
      std::unordered_map<const VarNode*, int> reduced;  ///< how many parfors reduce into each variable
      VarSet assigned_outside;  ///< assigned by a statement that is not an update inside its own reduction loop
      std::vector<const ParforStmt*> loops;
      void visit(const ParforStmt& p) override {
        for (const Reduction& r : p.reductions) {
          ++reduced[r.var.get()];
          if (r.index) assigned_outside.insert(r.index.get());  // argmin/argmax: their updates are not plain
        }
        loops.push_back(&p);
        IRVisitor::visit(p);
        loops.pop_back();
      }
      void visit(const AssignStmt& a) override {
        bool update = false;
        for (const ParforStmt* p : loops)
          for (const Reduction& r : p->reductions) update = update || (r.var == a.var && !is_arg_reduction(r.op));
        if (!update) assigned_outside.insert(a.var.get());
        IRVisitor::visit(a);
      }
    } totals;
    totals.walk(f.body);
    const VarSet assigned = assigned_vars(f.body);
    struct Lets : IRVisitor {
      const VarSet* assigned;
      const Totals* totals;
      VarSet settled;  ///< totals whose loop has run, at this point of the walk
      LetValues values;
      void visit(const ParforStmt& p) override {
        IRVisitor::visit(p);
        for (const Reduction& r : p.reductions)
          if (totals->reduced.at(r.var.get()) == 1 && !totals->assigned_outside.count(r.var.get())) settled.insert(r.var.get());
      }
      void visit(const LetStmt& s) override {
        bool fixed = !assigned->count(s.var.get());
        for (const Var& v : free_vars(s.init)) fixed = fixed && (!assigned->count(v.get()) || settled.count(v.get()));
        if (fixed) values[s.var.get()] = s.init;
        IRVisitor::visit(s);
      }
    } lets;
    lets.assigned = &assigned;
    lets.totals = &totals;
    lets.walk(f.body);
    lets_ = std::move(lets.values);
  }

  Function rewrite(const Function& f) {
    Function out = f;
    out.body = rewrite_statement_lists(f.body, [this](std::vector<Stmt> list) { return reuse(std::move(list)); });
    if (replaced_.empty()) return out;
    // The results read the body's last values: a reduction replaced in the body's own block is the one that
    // replaced it there too.
    Replacements results;
    for (const auto& [r2, r1] : replaced_) results[r2] = make_ref(r1);
    return substitute(out, results);
  }

 private:
  PassContext& ctx_;
  LetValues lets_;
  std::unordered_map<const VarNode*, Var> replaced_;  ///< r2 -> r1, over the whole function
  Canonical canonical_{lets_, replaced_};

  /// A reduction some loop of the block computes, as later loops compare theirs with it.
  struct Done {
    std::size_t at;  ///< its loop's position in the block's new list
    Stmt loop;       ///< the loop as it was (its body is what ran)
    Reduction r;
    Expr start;
    Expr update;
    std::vector<Expr> begins, ends;
  };

  /// A reduction of a loop with what identifies it; nullopt when it has not the simple form.
  struct Candidate {
    Reduction r;
    const AssignStmt* update;
    std::size_t let_at;  ///< position of its let in the block's new list
    Expr start, key;
  };

  std::vector<Stmt> reuse(std::vector<Stmt> list) {
    std::vector<Stmt> out;
    std::vector<Done> done;
    Replacements renamed;  // r2 -> r1 in the statements after the loop that lost r2
    for (std::size_t k = 0; k < list.size(); ++k) {
      Stmt s = renamed.empty() ? list[k] : substitute(list[k], renamed);
      const auto* p = dyn<ParforStmt>(s);
      if (p && !p->reductions.empty() && p->array_reductions.empty()) s = reuse_in(s, list, k, out, done, renamed);
      if (s) out.push_back(s);
    }
    return out;
  }

  std::optional<Candidate> candidate(const ParforStmt& p, const Reduction& r, const std::vector<Stmt>& out) {
    if (is_arg_reduction(r.op)) return std::nullopt;
    const AssignStmt* update = nullptr;
    for (const Stmt& s : loops::statements(p.body)) {
      if (!uses(s, r.var.get())) continue;
      const auto* a = dyn<AssignStmt>(s);
      if (update || !a || a->var != r.var || !is_reduction_update(*a, r.op)) return std::nullopt;
      update = a;
    }
    if (!update) return std::nullopt;
    std::optional<std::size_t> let_at;
    for (std::size_t j = out.size(); j-- > 0 && !let_at;) {
      const auto* l = dyn<LetStmt>(out[j]);
      if (l && l->var == r.var) let_at = j;
    }
    if (!let_at) return std::nullopt;
    for (std::size_t j = *let_at + 1; j < out.size(); ++j)
      if (uses(out[j], r.var.get())) return std::nullopt;  // read before the loop: its let must stay
    const Expr start = canonical_.of(out[*let_at]->as<LetStmt>().init, {}, nullptr);
    const Expr key = canonical_.of(update->value, p.indices, r.var.get());
    if (!start || !key) return std::nullopt;
    return Candidate{r, update, *let_at, start, key};
  }

  /// Whether done reduction `d` still has the value candidate `c` of loop `s2` (at `k` in `list`) would compute.
  bool same_value(const Done& d, const Candidate& c, const Stmt& s2, const std::vector<Stmt>& list, std::size_t k,
                  const std::vector<Stmt>& out) {
    const auto& p2 = s2->as<ParforStmt>();
    if (d.r.op != c.r.op || !equal(d.start, c.start) || !equal(d.update, c.key)) return false;
    if (!loops::equal_all(d.begins, canonical_bounds(p2.begins)) || !loops::equal_all(d.ends, canonical_bounds(p2.ends))) return false;
    const bool same_loop = d.at == out.size();
    // Nothing the update reads changes from the first loop's start to the second loop's end.
    std::vector<Stmt> span;
    if (!same_loop) {
      span.push_back(d.loop);
      span.insert(span.end(), out.begin() + static_cast<std::ptrdiff_t>(d.at) + 1, out.end());
    }
    span.push_back(s2);
    const VarSet arrays = loaded_arrays(c.key);
    for (const Stmt& s : span) {
      const VarSet stored = stored_arrays(s), assigned = assigned_vars(s);
      for (const VarNode* a : arrays)
        if (loops::may_alias_any(a, stored) || assigned.count(a)) return false;
      for (const Var& v : free_vars(c.key))
        if (!canonical_.is_placeholder(v.get()) && assigned.count(v.get())) return false;
    }
    // r1 keeps its value wherever r2 is read: nothing after the first loop assigns it.
    std::vector<Stmt> after(out.begin() + static_cast<std::ptrdiff_t>(std::min(d.at + 1, out.size())), out.end());
    if (!same_loop) after.push_back(s2);
    after.insert(after.end(), list.begin() + static_cast<std::ptrdiff_t>(k) + 1, list.end());
    for (const Stmt& s : after)
      if (assigned_vars(s).count(d.r.var.get())) return false;
    return true;
  }

  std::vector<Expr> canonical_bounds(const std::vector<Expr>& b) {
    std::vector<Expr> c;
    for (const Expr& e : b) {
      const Expr k = canonical_.of(e, {}, nullptr);
      c.push_back(k ? k : e);
    }
    return c;
  }

  /// Loop `s` (at `k` of `list`, the block's new list so far `out`) without the reductions it repeats.
  Stmt reuse_in(const Stmt& s, const std::vector<Stmt>& list, std::size_t k, std::vector<Stmt>& out, std::vector<Done>& done,
                Replacements& renamed) {
    const auto& p = s->as<ParforStmt>();
    std::vector<Reduction> kept;
    std::vector<const StmtNode*> dropped;
    const std::size_t first_own = done.size();
    for (const Reduction& r : p.reductions) {
      const std::optional<Candidate> c = candidate(p, r, out);
      const Done* match = nullptr;
      if (c)
        for (const Done& d : done)
          if (!match && same_value(d, *c, s, list, k, out)) match = &d;
      if (!match) {
        kept.push_back(r);
        if (c) done.push_back(Done{out.size(), s, r, c->start, c->key, canonical_bounds(p.begins), canonical_bounds(p.ends)});
        continue;
      }
      const auto& first = match->loop->as<ParforStmt>();
      ctx_.note(Topic::reductions, loops::origin_text(p) + ": " + r.var->name + " (" + std::string(name_of(r.op)) + ") repeats " +
                                       match->r.var->name + (match->at == out.size() ? " of the same loop" : " of " + loops::origin_text(first)) +
                                       " over the same space, and what it reads is unchanged since: " + r.var->name + " is " +
                                       match->r.var->name);
      replaced_[r.var.get()] = match->r.var;
      renamed[r.var.get()] = make_ref(match->r.var);
      dropped.push_back(c->update);
      const std::size_t let_at = c->let_at;
      out.erase(out.begin() + static_cast<std::ptrdiff_t>(let_at));
      for (Done& d : done)
        if (d.at > let_at) --d.at;
    }
    for (std::size_t j = first_own; j < done.size(); ++j) done[j].at = out.size();
    if (dropped.empty()) return s;
    std::vector<Stmt> body;
    bool work = false;
    for (const Stmt& b : loops::statements(p.body)) {
      if (std::find(dropped.begin(), dropped.end(), b.get()) != dropped.end()) continue;
      work |= b->kind != StmtKind::Let;
      body.push_back(b);
    }
    if (kept.empty() && !work) {
      ctx_.note(Topic::reductions, loops::origin_text(p) + " " + loops::space_text(p) + ": removed, every reduction of it is computed before");
      return nullptr;
    }
    return make_parfor(p.indices, p.begins, p.ends, make_block(std::move(body)), std::move(kept), p.array_reductions, p.origin);
  }
};

}  // namespace

ir::Function reuse_reductions(const ir::Function& f, PassContext& ctx) {
  Reuser reuser(f, ctx);
  return reuser.rewrite(f);
}

}  // namespace kiln::passes
