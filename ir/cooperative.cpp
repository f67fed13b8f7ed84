// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "ir/cooperative.hpp"

#include "ir/analysis.hpp"
#include "ir/reductions.hpp"
#include "ir/visitor.hpp"

namespace kiln::ir {
namespace {

std::string origin_of(const ParforStmt& p) { return p.origin.empty() ? std::string("a nested parfor") : "`" + p.origin + "`"; }

/// True if `e` is `v` plus a term that does not use `v` (`v`, `v + c`, `c + v`, `v - c`, through lets):
/// consecutive values of `v` give consecutive values of `e`, so consecutive threads read consecutive elements.
bool unit_in(const Expr& e, const VarNode* v, const LetValues& lets, int depth = 0) {
  if (!e || depth > 16) return false;
  if (const auto* r = dyn<VarRefExpr>(e)) {
    if (r->var.get() == v) return true;
    auto it = lets.find(r->var.get());
    return it != lets.end() && unit_in(it->second, v, lets, depth + 1);
  }
  const auto* b = dyn<BinaryExpr>(e);
  if (!b || b->type != DType::I64) return false;
  // A let between the index and the term hides nothing: a term that reads one of the index's lets uses it.
  auto free_of = [&](const Expr& x) {
    for (const Var& f : free_vars(x)) {
      if (f.get() == v) return false;
      auto it = lets.find(f.get());
      if (it != lets.end() && uses(it->second, v)) return false;
    }
    return true;
  };
  if (b->op == BinaryOp::Add) return (unit_in(b->a, v, lets, depth + 1) && free_of(b->b)) || (unit_in(b->b, v, lets, depth + 1) && free_of(b->a));
  if (b->op == BinaryOp::Sub) return unit_in(b->a, v, lets, depth + 1) && free_of(b->b);
  return false;
}

/// Lets that are never assigned, by value: what a subscript may be named through.
LetValues let_values(const Stmt& s) {
  struct Lets : IRVisitor {
    LetValues found;
    void visit(const LetStmt& l) override {
      found[l.var.get()] = l.init;
      IRVisitor::visit(l);
    }
  } lets;
  lets.walk(s);
  for (const VarNode* v : assigned_vars(s)) lets.found.erase(v);
  return lets.found;
}

/// Checks a row's statements: what the group runs in every thread (lets, assignments, stores by one thread,
/// sequential loops and branches, whose conditions are the same in every thread) and the nested parfors it
/// spreads over its threads.
class Checker {
 public:
  explicit Checker(CooperativePlan& plan) : plan_(plan) {}

  /// The first statement a group cannot run, as a reason; empty when there is none.
  std::string row(const Stmt& s) {
    if (!s) return {};
    switch (s->kind) {
      case StmtKind::Block:
        for (const Stmt& x : s->as<BlockStmt>().stmts)
          if (std::string why = row(x); !why.empty()) return why;
        return {};
      case StmtKind::Let:
      case StmtKind::Assign:
      case StmtKind::Store: return {};
      case StmtKind::For: return row(s->as<ForStmt>().body);
      case StmtKind::If: {
        const auto& i = s->as<IfStmt>();
        if (std::string why = row(i.then_body); !why.empty()) return why;
        return row(i.else_body);
      }
      case StmtKind::Parfor: return nested(s->as<ParforStmt>());
      case StmtKind::Check: return "the row checks a condition (a failing thread would leave its group)";
      case StmtKind::Allocate: return "the row allocates an array (each thread would allocate its own)";
      case StmtKind::Bind: return "the row binds an array";
      default: return "the row holds a statement a group cannot share";
    }
  }

 private:
  std::string nested(const ParforStmt& q) {
    if (q.indices.size() != 1) return origin_of(q) + " is " + std::to_string(q.indices.size()) + "-d (only 1-d ranges are spread over a group)";
    for (const Reduction& r : q.reductions)
      if (is_arg_reduction(r.op)) return origin_of(q) + " is an argmin/argmax (its first-index rule is an order)";
    struct Inside : IRVisitor {
      std::string why;
      void visit(const ParforStmt&) override { why = "a parfor nested in it"; }
      void visit(const CheckStmt&) override { why = "a check in it"; }
      void visit(const AllocateStmt&) override { why = "an allocation in it"; }
      void visit(const BindStmt&) override { why = "an array binding in it"; }
    } inside;
    inside.walk(q.body);
    if (!inside.why.empty()) return origin_of(q) + " has " + inside.why;
    plan_.spread.push_back(&q);
    if (!q.reductions.empty() && !plan_.first_reduction) plan_.first_reduction = &q;
    return {};
  }

  CooperativePlan& plan_;
};

}  // namespace

CooperativePlan plan_cooperative(const ParforStmt& p) {
  CooperativePlan plan;
  struct Reducing : IRVisitor {
    bool found = false;
    void visit(const ParforStmt& q) override {
      found = found || !q.reductions.empty();
      IRVisitor::visit(q);
    }
  } reducing;
  reducing.walk(p.body);
  if (!reducing.found) return plan;
  plan.wanted = true;
  if (!p.reductions.empty()) {
    plan.reason = "one thread per row: the rows' parfor is itself a reduction";
    return plan;
  }
  if (std::string why = Checker(plan).row(p.body); !why.empty()) {
    plan.spread.clear();
    plan.first_reduction = nullptr;
    plan.reason = "one thread per row: " + why;
    return plan;
  }
  // Where do a warp's loads go? In the reductions' bodies, a subscript unit in the nested index reads a row
  // contiguously when the group's threads take consecutive iterations; one unit in the rows' own last index
  // (and free of the nested one) already reads contiguously with one thread per row, as a column sum does.
  const LetValues lets = let_values(p.body);
  const VarNode* row_index = p.indices.back().get();
  int along_row = 0, across_rows = 0;
  std::string array_name;
  for (const ParforStmt* q : plan.spread) {
    if (q->reductions.empty()) continue;
    const VarNode* k = q->indices[0].get();
    struct Loads : IRVisitor {
      std::vector<const LoadExpr*> found;
      void visit(const LoadExpr& l) override {
        found.push_back(&l);
        IRVisitor::visit(l);
      }
    } loads;
    loads.walk(q->body);
    for (const LoadExpr* l : loads.found) {
      if (l->indices.empty()) continue;
      const Expr& last = l->indices.back();
      if (unit_in(last, k, lets)) {
        if (!along_row++) array_name = l->array->name;
      } else if (!uses(last, k) && unit_in(last, row_index, lets)) {
        ++across_rows;
      }
    }
  }
  if (across_rows) {
    plan.spread.clear();
    plan.first_reduction = nullptr;
    plan.reason = "one thread per row: the reductions read along the rows' index (consecutive rows are adjacent in memory)";
    return plan;
  }
  if (!along_row) {
    plan.spread.clear();
    plan.first_reduction = nullptr;
    plan.reason = "one thread per row: no reduction reads its row contiguously";
    return plan;
  }
  plan.eligible = true;
  int reductions = 0;
  for (const ParforStmt* q : plan.spread) reductions += static_cast<int>(q->reductions.size());
  plan.reason = "a group of threads per row: " + std::to_string(reductions) + (reductions == 1 ? " reduction" : " reductions") +
                " read " + array_name + " contiguously along the row (coalesced loads), combined in a fixed shuffle tree";
  return plan;
}

}  // namespace kiln::ir
