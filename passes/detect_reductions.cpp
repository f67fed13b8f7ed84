#include "passes/detect_reductions.hpp"

#include <algorithm>
#include <map>

#include "ir/analysis.hpp"
#include "ir/builder.hpp"
#include "ir/printer.hpp"
#include "ir/reductions.hpp"
#include "ir/visitor.hpp"

namespace kiln::passes {
namespace {

std::string describe(const ir::Var& v) {
  std::string s = "'" + v->name + "'";
  if (!v->where.empty()) s += " (declared at " + v->where + ")";
  return s;
}

std::string loop_name(const ir::ParforStmt& p) { return p.origin.empty() ? "a prange" : "the " + p.origin; }

/// The reduction an assignment `v = v op e` implies, if it has that shape.
std::optional<ir::ReduceOp> implied_op(const ir::AssignStmt& a) {
  for (ir::ReduceOp op : {ir::ReduceOp::Add, ir::ReduceOp::Mul, ir::ReduceOp::Min, ir::ReduceOp::Max})
    if (ir::is_reduction_update(a, op)) return op;
  return std::nullopt;
}

/// Everything a parfor body does to variables declared outside it.
struct OuterWrites {
  ir::VarSet defined;  // declared inside the body
  std::vector<ir::Var> order;  // outer variables written, in first-write order
  std::map<const ir::VarNode*, std::vector<const ir::AssignStmt*>> assigns;
  std::map<const ir::VarNode*, std::vector<ir::ReduceOp>> inherited;  // via nested parfors' reductions

  void note(const ir::Var& v) {
    if (!assigns.count(v.get()) && !inherited.count(v.get())) order.push_back(v);
  }

  void walk(const ir::Stmt& s) {
    if (!s) return;
    switch (s->kind) {
      case ir::StmtKind::Block:
        for (const auto& x : s->as<ir::BlockStmt>().stmts) walk(x);
        break;
      case ir::StmtKind::Let: defined.insert(s->as<ir::LetStmt>().var.get()); break;
      case ir::StmtKind::Allocate: defined.insert(s->as<ir::AllocateStmt>().array.get()); break;
      case ir::StmtKind::Assign: {
        const auto& a = s->as<ir::AssignStmt>();
        if (defined.count(a.var.get())) break;
        note(a.var);
        assigns[a.var.get()].push_back(&a);
        break;
      }
      case ir::StmtKind::For: {
        const auto& f = s->as<ir::ForStmt>();
        defined.insert(f.index.get());
        walk(f.body);
        break;
      }
      case ir::StmtKind::If: {
        const auto& i = s->as<ir::IfStmt>();
        walk(i.then_body);
        walk(i.else_body);
        break;
      }
      case ir::StmtKind::Parfor: {
        // A nested parfor has already declared its own reductions; those on our outer variables are
        // reductions of ours too (with the same operator), and its updates of them are its business.
        const auto& p = s->as<ir::ParforStmt>();
        for (const auto& i : p.indices) defined.insert(i.get());
        OuterWrites inner;
        inner.defined = defined;
        for (const auto& r : p.reductions) inner.defined.insert(r.var.get());
        inner.walk(p.body);
        for (const auto& r : p.reductions) {
          if (defined.count(r.var.get())) continue;
          note(r.var);
          inherited[r.var.get()].push_back(r.op);
        }
        for (const auto& v : inner.order) {
          if (defined.count(v.get())) continue;
          note(v);
          auto& mine = assigns[v.get()];
          mine.insert(mine.end(), inner.assigns[v.get()].begin(), inner.assigns[v.get()].end());
        }
        break;
      }
      case ir::StmtKind::Map:
        if (s->as<ir::MapStmt>().allocate) defined.insert(s->as<ir::MapStmt>().target.get());
        break;
      case ir::StmtKind::Reduce: defined.insert(s->as<ir::ReduceStmt>().result.get()); break;
      case ir::StmtKind::ReduceAxis: defined.insert(s->as<ir::ReduceAxisStmt>().target.get()); break;
      case ir::StmtKind::Store:
      case ir::StmtKind::Check:
        break;
    }
  }
};

/// True if `s` reads `v` anywhere other than inside `v`'s own reduction updates.
bool read_outside_updates(const ir::Stmt& s, const ir::VarNode* v, ir::ReduceOp op) {
  struct Finder : ir::IRVisitor {
    const ir::VarNode* v;
    ir::ReduceOp op;
    bool found = false;
    void visit(const ir::VarRefExpr& e) override { found |= e.var.get() == v; }
    void visit(const ir::AssignStmt& a) override {
      if (a.var.get() == v && ir::is_reduction_update(a, op)) return;
      ir::IRVisitor::visit(a);
    }
    void visit(const ir::ParforStmt& p) override {
      for (const auto& r : p.reductions)
        if (r.var.get() == v) return;  // checked when that parfor was processed
      ir::IRVisitor::visit(p);
    }
  } finder;
  finder.v = v;
  finder.op = op;
  finder.walk(s);
  return finder.found;
}

class Detector : public ir::IRMutator {
 public:
  Detector(const ir::Function& f, PassContext& ctx) : fn_(f), ctx_(ctx) {}

 protected:
  using ir::IRMutator::visit;

  ir::Stmt visit(const ir::ParforStmt& p, const ir::Stmt& self) override {
    ir::Stmt lowered = ir::IRMutator::visit(p, self);  // inner parfors first
    const auto& q = lowered->as<ir::ParforStmt>();
    OuterWrites w;
    for (const auto& i : q.indices) w.defined.insert(i.get());
    for (const auto& r : q.reductions) w.defined.insert(r.var.get());
    w.walk(q.body);
    if (w.order.empty()) return lowered;

    std::vector<ir::Reduction> reductions = q.reductions;
    for (const ir::Var& v : w.order) reductions.push_back({v, op_for(q, v, w)});
    for (const auto& r : reductions)
      if (read_outside_updates(q.body, r.var.get(), r.op))
        fail("scalar " + describe(r.var) + " is a " + std::string(ir::name_of(r.op)) + " reduction of " +
             loop_name(q) + " but is also read inside the loop, where it holds only a partial result. Read it "
             "after the loop, or use a variable declared inside the loop");
    for (size_t k = q.reductions.size(); k < reductions.size(); ++k)
      ctx_.note("reduction: " + reductions[k].var->name + " (" + std::string(ir::name_of(reductions[k].op)) +
                ", identity " + ir::to_string(ir::identity_of(reductions[k].op, reductions[k].var->type.elem)) +
                ") in " + (q.origin.empty() ? "prange" : q.origin));
    return ir::with_reductions(q, std::move(reductions));
  }

 private:
  const ir::Function& fn_;
  PassContext& ctx_;

  [[noreturn]] void fail(const std::string& msg) const { throw TraceError("kernel '" + fn_.name + "': " + msg); }

  ir::ReduceOp op_for(const ir::ParforStmt& p, const ir::Var& v, OuterWrites& w) const {
    const auto& assigns = w.assigns[v.get()];
    const auto& inherited = w.inherited[v.get()];
    const std::string advice =
        "Iterations of a prange run in parallel, so this would race. Update it only as " + v->name + " += e, " +
        v->name + " -= e, " + v->name + " *= e, " + v->name + " /= e, " + v->name + " = kiln::min(" + v->name +
        ", e) or " + v->name + " = kiln::max(" + v->name + ", e), or declare it inside the loop";
    if (v->type.elem == DType::Bool)
      fail("bool scalar " + describe(v) + " is assigned inside " + loop_name(p) + "; bool reductions are not "
           "supported (use an int32 with kiln::max/min). " + advice);
    std::optional<ir::ReduceOp> op;
    auto agree = [&](ir::ReduceOp o, const std::string& how) {
      if (op && *op != o)
        fail("scalar " + describe(v) + " is updated with both " + std::string(ir::name_of(*op)) + " and " +
             std::string(ir::name_of(o)) + " inside " + loop_name(p) + " (" + how + "); a reduction needs one operator");
      op = o;
    };
    for (ir::ReduceOp o : inherited) agree(o, "in a nested prange");
    for (const ir::AssignStmt* a : assigns) {
      const std::string text = v->name + " = " + ir::to_string(a->value);
      const auto o = implied_op(*a);
      if (!o) fail("scalar " + describe(v) + " is assigned inside " + loop_name(p) + " as `" + text + "`, which is not a reduction. " + advice);
      agree(*o, "`" + text + "`");
    }
    return *op;
  }
};

}  // namespace

ir::Function detect_reductions(const ir::Function& f, PassContext& ctx) {
  Detector d(f, ctx);
  return d.mutate(f);
}

}  // namespace kiln::passes
