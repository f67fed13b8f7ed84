// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Loop-invariant code motion. A value that is the same in every iteration is computed once before the
// loop. Pure expressions can be evaluated anywhere (integer division is total, nothing else traps), so
// only loads need care: the array must not be written by the loop (nor by a store to a parameter that
// may be the same array), the load must not move above a check that may be what keeps it in bounds, and
// it must not run when the loop runs zero times, so it is hoisted as `select(loop non-empty, load, 0)`.
// Runs after fusion: the variables it introduces would make equal subscripts of two parfors (x[i + n - 1]
// in both) differ syntactically and keep them apart.
#include "passes/hoist_invariants.hpp"

#include "ir/builder.hpp"
#include "ir/printer.hpp"
#include "ir/reductions.hpp"
#include "ir/analysis.hpp"
#include "passes/loop_analysis.hpp"
#include "passes/statement_lists.hpp"

namespace kiln::passes {
namespace {

using namespace kiln::ir;

/// What a loop body may change: the variables invariant expressions must not read.
struct LoopFacts {
  VarSet variant;  ///< declared or assigned in the body, and the loop's indices
  VarSet stored;   ///< arrays the body writes

  bool invariant(const Expr& e) const {
    for (const Var& v : free_vars(e)) {
      if (variant.count(v.get())) return false;
      if (v->type.is_array() && ir::loads_from(e, v.get()) && loops::may_alias_any(v.get(), stored)) return false;
    }
    return true;
  }
};

bool has_free_var(const Expr& e) { return !free_vars(e).empty(); }

/// Every argmin/argmax reduction of the function: their updates must keep the shape ir/reductions.hpp
/// matches (`isnan(x)` in the condition, x also assigned), so nothing is extracted from them.
std::vector<Reduction> arg_reductions(const Function& f) {
  struct Collect : IRVisitor {
    std::vector<Reduction> out;
    void visit(const ParforStmt& p) override {
      for (const auto& r : p.reductions)
        if (is_arg_reduction(r.op)) out.push_back(r);
      IRVisitor::visit(p);
    }
  } c;
  c.walk(f.body);
  return std::move(c.out);
}

/// Replaces maximal invariant pure subexpressions by variables declared before the loop.
class Extract : public IRMutator {
 public:
  Extract(const LoopFacts& facts, const std::vector<Reduction>& args, std::vector<std::pair<Var, Expr>>& hoisted)
      : facts_(facts), args_(args), hoisted_(hoisted) {}

 protected:
  using IRMutator::visit;
  const LoopFacts& facts_;
  const std::vector<Reduction>& args_;
  std::vector<std::pair<Var, Expr>>& hoisted_;

  Stmt visit(const IfStmt& s, const Stmt& self) override {
    for (const auto& r : args_)
      if (match_arg_update(s, r)) return self;
    return IRMutator::visit(s, self);
  }

  Expr replace(const Expr& self) {
    for (const auto& [v, e] : hoisted_)
      if (equal(e, self)) return make_ref(v);
    const Var v = make_var("inv", Type::scalar(self->type), VarKind::Local);
    hoisted_.emplace_back(v, self);
    return make_ref(v);
  }
  bool candidate(const Expr& e) const {
    return node_count(e) >= 2 && has_free_var(e) && !has_load(e) && facts_.invariant(e);
  }

  Expr visit(const UnaryExpr& e, const Expr& self) override {
    return candidate(self) ? replace(self) : IRMutator::visit(e, self);
  }
  Expr visit(const BinaryExpr& e, const Expr& self) override {
    return candidate(self) ? replace(self) : IRMutator::visit(e, self);
  }
  Expr visit(const SelectExpr& e, const Expr& self) override {
    return candidate(self) ? replace(self) : IRMutator::visit(e, self);
  }
  Expr visit(const CastExpr& e, const Expr& self) override {
    return candidate(self) ? replace(self) : IRMutator::visit(e, self);
  }
  Expr visit(const CallExpr& e, const Expr& self) override {
    return candidate(self) ? replace(self) : IRMutator::visit(e, self);
  }
};

class Hoister {
 public:
  Hoister(const Function& f, PassContext& ctx) : ctx_(ctx), args_(arg_reductions(f)) {}

  /// The statements that replace `loop` (its body already done): what was hoisted out of it, then the loop.
  std::vector<Stmt> hoist(const Stmt& loop) {
    if (const auto* f = dyn<ForStmt>(loop))
      return hoist(loop, {f->index}, make_binary(BinaryOp::Lt, f->begin, f->end), "for " + f->index->name);
    const auto& p = loop->as<ParforStmt>();
    Expr nonempty;
    for (size_t d = 0; d < p.indices.size(); ++d) {
      Expr c = make_binary(BinaryOp::Lt, p.begins[d], p.ends[d]);
      nonempty = nonempty ? make_binary(BinaryOp::And, nonempty, c) : c;
    }
    return hoist(loop, p.indices, nonempty, loops::origin_text(p));
  }

 private:
  PassContext& ctx_;
  std::vector<Reduction> args_;

  static const Stmt& body_of(const Stmt& loop) {
    return loop->kind == StmtKind::For ? loop->as<ForStmt>().body : loop->as<ParforStmt>().body;
  }

  static Stmt with_new_body(const Stmt& loop, Stmt b) {
    if (const auto* f = dyn<ForStmt>(loop)) return make_for(f->index, f->begin, f->end, std::move(b));
    return with_body(loop->as<ParforStmt>(), std::move(b));
  }

  std::vector<Stmt> hoist(const Stmt& loop, const std::vector<Var>& indices, const Expr& nonempty,
                          const std::string& where) {
    const Stmt& b = body_of(loop);
    LoopFacts facts{loops::variant_in(b), loops::effects_of(b).stored};
    for (const auto& i : indices) facts.variant.insert(i.get());
    const VarSet assigned = assigned_vars(b);

    // Lets directly in the body, in order; each one hoisted makes its variable invariant for the next.
    std::vector<Stmt> out, kept;
    bool after_check = false;
    for (const auto& s : loops::statements(b)) {
      const auto* l = dyn<LetStmt>(s);
      if (l && !assigned.count(l->var.get()) && facts.invariant(l->init) && !(has_load(l->init) && after_check)) {
        const Expr init = has_load(l->init) ? make_select(nonempty, l->init, make_const(l->init->type, 0)) : l->init;
        out.push_back(make_let(l->var, init));
        facts.variant.erase(l->var.get());
        ctx_.note(Topic::hoisting, "hoisted `let " + l->var->name + " = " + to_string(l->init) + "` out of " + where +
                                       (has_load(l->init) ? " (a load, guarded by the loop being non-empty)" : ""));
        continue;
      }
      after_check = after_check || loops::effects_of(s).checks;
      kept.push_back(s);
    }

    // Then invariant pure subexpressions anywhere in what is left.
    std::vector<std::pair<Var, Expr>> hoisted;
    Extract extract(facts, args_, hoisted);
    for (auto& s : kept) s = extract.mutate(s);
    for (const auto& [v, e] : hoisted) {
      out.push_back(make_let(v, e));
      ctx_.note(Topic::hoisting, "hoisted " + to_string(e) + " out of " + where);
    }
    if (out.empty()) return {loop};
    out.push_back(with_new_body(loop, make_block(std::move(kept))));
    return out;
  }
};

}  // namespace

ir::Function hoist_invariants(const ir::Function& f, PassContext& ctx) {
  Hoister h(f, ctx);
  ir::Function out = f;
  out.body = expand_loops(f.body, [&h](const ir::Stmt& loop) { return h.hoist(loop); });
  return out;
}

}  // namespace kiln::passes
