#include "ir/verifier.hpp"

#include <algorithm>

#include "ir/analysis.hpp"
#include "ir/builder.hpp"
#include "ir/printer.hpp"
#include "ir/visitor.hpp"

namespace kiln::ir {
namespace {

class Verifier {
 public:
  std::vector<std::string> problems;

  void function(const Function& f) {
    scopes_.emplace_back();
    for (const auto& p : f.params) {
      if (p->kind != VarKind::Param) report("parameter " + p->name + " is not of kind Param");
      define(p);
    }
    // The body's top-level definitions stay visible to the result.
    if (const auto* b = dyn<BlockStmt>(f.body)) {
      for (const auto& s : b->stmts) stmt(s);
    } else if (f.body) {
      stmt(f.body);
    } else {
      report("function has no body");
    }
    if (f.result) expr(f.result, "the result");
    if (f.result_array) {
      if (!in_scope(f.result_array.get())) report("result array " + f.result_array->name + " is not in scope");
      if (f.result_array->kind != VarKind::Local) report("result array " + f.result_array->name + " is not allocated by the kernel");
    }
    if (f.result && f.result_array) report("function has both a scalar and an array result");
  }

 private:
  struct ParforFrame {
    const ParforStmt* parfor;
    size_t scope_depth;  // variables defined at scopes below this depth are outside the parfor
  };
  std::vector<VarSet> scopes_;
  VarSet ever_defined_;
  std::vector<ParforFrame> parfors_;

  void report(std::string msg) { problems.push_back(std::move(msg)); }

  bool in_scope(const VarNode* v) const {
    return std::any_of(scopes_.begin(), scopes_.end(), [&](const VarSet& s) { return s.count(v) > 0; });
  }

  /// The scope depth at which `v` was defined (index into scopes_), or npos.
  size_t depth_of(const VarNode* v) const {
    for (size_t d = scopes_.size(); d-- > 0;)
      if (scopes_[d].count(v)) return d;
    return std::string::npos;
  }

  void define(const Var& v) {
    if (!ever_defined_.insert(v.get()).second) report("variable " + v->name + " is defined twice");
    scopes_.back().insert(v.get());
  }

  void use(const Var& v, const std::string& where) {
    if (!in_scope(v.get())) report(v->name + " is used out of scope in " + where);
  }

  void expr(const Expr& e, const std::string& where) {
    for (const auto& v : free_vars(e)) use(v, where);
  }

  void block(const Stmt& s) {
    scopes_.emplace_back();
    if (const auto* b = dyn<BlockStmt>(s)) {
      for (const auto& x : b->stmts) stmt(x);
    } else if (s) {
      stmt(s);
    }
    scopes_.pop_back();
  }

  /// The parfors (innermost first) for which `v` is defined outside the body: each must reduce it.
  std::vector<const ParforStmt*> crossing_parfors(const VarNode* v) const {
    const size_t d = depth_of(v);
    std::vector<const ParforStmt*> out;
    for (auto it = parfors_.rbegin(); it != parfors_.rend(); ++it)
      if (d < it->scope_depth) out.push_back(it->parfor);
    return out;
  }

  void stmt(const Stmt& s) {
    switch (s->kind) {
      case StmtKind::Block: block(s); break;
      case StmtKind::Let: {
        const auto& l = s->as<LetStmt>();
        expr(l.init, "the initializer of " + l.var->name);
        define(l.var);
        break;
      }
      case StmtKind::Assign: {
        const auto& a = s->as<AssignStmt>();
        use(a.var, "an assignment");
        expr(a.value, "the assignment to " + a.var->name);
        for (const ParforStmt* p : crossing_parfors(a.var.get())) {
          auto r = std::find_if(p->reductions.begin(), p->reductions.end(),
                                [&](const Reduction& x) { return x.var == a.var; });
          if (r == p->reductions.end()) {
            report(a.var->name + " is defined outside a parfor and assigned inside it without being a reduction");
            break;
          }
          if (!is_reduction_update(a, r->op)) {
            report("reduction variable " + a.var->name + " is updated as `" + to_string(a.value) + "`, not as a " +
                   std::string(name_of(r->op)) + " reduction");
            break;
          }
        }
        break;
      }
      case StmtKind::Store: {
        const auto& st = s->as<StoreStmt>();
        use(st.array, "a store");
        for (const auto& i : st.indices) expr(i, "an index of " + st.array->name);
        expr(st.value, "the value stored to " + st.array->name);
        break;
      }
      case StmtKind::For: {
        const auto& f = s->as<ForStmt>();
        expr(f.begin, "a loop bound");
        expr(f.end, "a loop bound");
        scopes_.emplace_back();
        define(f.index);
        block(f.body);
        scopes_.pop_back();
        break;
      }
      case StmtKind::Parfor: parfor(s->as<ParforStmt>()); break;
      case StmtKind::If: {
        const auto& i = s->as<IfStmt>();
        expr(i.cond, "an if condition");
        block(i.then_body);
        if (i.else_body) block(i.else_body);
        break;
      }
      case StmtKind::Allocate: {
        const auto& a = s->as<AllocateStmt>();
        for (const auto& e : a.shape) expr(e, "the shape of " + a.array->name);
        define(a.array);
        break;
      }
    }
  }

  void parfor(const ParforStmt& p) {
    for (size_t d = 0; d < p.indices.size(); ++d) {
      expr(p.begins[d], "a parfor bound");
      expr(p.ends[d], "a parfor bound");
    }
    for (const auto& r : p.reductions) {
      use(r.var, "a reduction clause");
      if (std::count_if(p.reductions.begin(), p.reductions.end(), [&](const Reduction& x) { return x.var == r.var; }) > 1)
        report("reduction variable " + r.var->name + " is listed twice");
    }
    scopes_.emplace_back();
    for (const auto& i : p.indices) define(i);
    parfors_.push_back({&p, scopes_.size()});
    // Reduction variables may be read inside the body only within their own updates.
    for (const auto& r : p.reductions) check_reduction_reads(p.body, r);
    block(p.body);
    parfors_.pop_back();
    scopes_.pop_back();
  }

  void check_reduction_reads(const Stmt& body, const Reduction& r) {
    struct Reads : IRVisitor {
      const Reduction& r;
      bool bad = false;
      explicit Reads(const Reduction& red) : r(red) {}
      void visit(const VarRefExpr& e) override { bad |= e.var == r.var; }
      void visit(const AssignStmt& s) override {
        if (s.var == r.var && is_reduction_update(s, r.op)) return;  // the update itself may read it
        IRVisitor::visit(s);
      }
    } reads(r);
    reads.walk(body);
    if (reads.bad) report("reduction variable " + r.var->name + " is read inside its parfor outside its own update");
  }
};

}  // namespace

bool is_reduction_update(const AssignStmt& s, ReduceOp op) {
  const auto* b = dyn<BinaryExpr>(s.value);
  if (!b) return false;
  const VarNode* v = s.var.get();
  auto is_v = [&](const Expr& e) {
    const auto* r = dyn<VarRefExpr>(e);
    return r && r->var.get() == v;
  };
  const BinaryOp comb = combiner(op);
  // v - e is an Add reduction (partials start at 0). v / e is a Mul reduction only for floats: truncating
  // integer division does not regroup (1 / e would be the partial of a block).
  const bool op_ok = b->op == comb || (op == ReduceOp::Add && b->op == BinaryOp::Sub) ||
                     (op == ReduceOp::Mul && b->op == BinaryOp::Div && is_float(b->type));
  if (!op_ok) return false;
  if (is_v(b->a) && !uses(b->b, v)) return true;
  return is_commutative(b->op) && is_v(b->b) && !uses(b->a, v);
}

std::vector<std::string> verify(const Function& f) {
  Verifier v;
  v.function(f);
  return std::move(v.problems);
}

void verify_or_throw(const Function& f, const std::string& context) {
  auto problems = verify(f);
  if (problems.empty()) return;
  std::string msg = "IR verification failed (" + context + ") for kernel '" + f.name + "':";
  for (const auto& p : problems) msg += "\n  - " + p;
  msg += "\n" + to_string(f);
  throw IRError(msg);
}

}  // namespace kiln::ir
