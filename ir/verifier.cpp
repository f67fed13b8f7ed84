// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "ir/verifier.hpp"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ir/analysis.hpp"
#include "ir/atomics.hpp"
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
    if (f.returns_tuple()) tuple(f);
    binding_lifetimes();
  }

 private:
  void tuple(const Function& f) {
    if (f.result || f.result_array) report("function has both a tuple and a single result");
    if (f.tuple.size() < 2 || f.tuple.size() > static_cast<size_t>(kMaxResults))
      report("a tuple result has " + std::to_string(f.tuple.size()) + " members (2.." + std::to_string(kMaxResults) + ")");
    for (size_t i = 0; i < f.tuple.size(); ++i) {
      const ResultMember& m = f.tuple[i];
      const std::string what = "result member " + std::to_string(i);
      if (!m.scalar == !m.array) report(what + " must be exactly one of a scalar and an array");
      if (m.scalar) expr(m.scalar, "the " + what);
      if (!m.array) continue;
      if (!in_scope(m.array.get())) report(what + ": array " + m.array->name + " is not in scope");
      if (m.array->kind != VarKind::Local) report(what + ": array " + m.array->name + " is not allocated by the kernel");
      for (size_t j = 0; j < i; ++j)  // the caller owns each array once
        if (f.tuple[j].array == m.array) report(what + ": array " + m.array->name + " is returned twice");
    }
  }

  struct ParforFrame {
    const ParforStmt* parfor;
    size_t scope_depth;  // variables defined at scopes below this depth are outside the parfor
  };
  std::vector<VarSet> scopes_;
  VarSet ever_defined_;
  std::unordered_map<const VarNode*, size_t> def_depth_;  ///< scope depth of each definition
  std::vector<const BindStmt*> binds_;
  std::vector<ParforFrame> parfors_;
  int launches_ = 0;        ///< launches seen so far: the next one's kernel number
  bool in_launch_ = false;

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
    def_depth_[v.get()] = scopes_.size() - 1;
  }

  /// A binding may only name arrays whose scope encloses its own: the backends free an array when its scope
  /// ends (or when its Allocate runs again in a loop), and a binding outliving it would dangle. The arrays a
  /// binding may name are followed through every bind in the function, wherever it is (a rebind late in a
  /// loop body reaches the bindings copied from it earlier in the next iteration); a temporary binding
  /// declared inside a time loop to swap two outer buffers names only outer arrays and is fine. Depth stands
  /// for containment here: source and target are both in scope at each bind, so their scopes are nested.
  void binding_lifetimes() {
    std::unordered_map<const VarNode*, size_t> reach;  // binding -> deepest scope of an array it may name
    auto reach_of = [&](const VarNode* v) {
      if (v->kind != VarKind::Binding) return def_depth_.count(v) ? def_depth_.at(v) : size_t{0};
      const auto it = reach.find(v);
      return it == reach.end() ? size_t{0} : it->second;
    };
    for (bool changed = true; changed;) {
      changed = false;
      for (const BindStmt* b : binds_) {
        const size_t r = reach_of(b->source.get());
        size_t& t = reach[b->target.get()];
        if (r > t) t = r, changed = true;
      }
    }
    std::unordered_set<const VarNode*> reported;
    for (const BindStmt* b : binds_) {
      const VarNode* t = b->target.get();
      const auto d = def_depth_.find(t);
      if (d == def_depth_.end() || reach_of(t) <= d->second || !reported.insert(t).second) continue;
      report("array binding " + t->name + " may name an array declared in a scope that ends before the binding's (through its bind to " +
             b->source->name + ")");
    }
  }

  void use(const Var& v, const std::string& where) {
    if (!in_scope(v.get())) report(v->name + " is used out of scope in " + where);
  }

  void expr(const Expr& e, const std::string& where) {
    for (const auto& v : free_vars(e)) use(v, where);
  }

  void exprs(const std::vector<Expr>& es, const std::string& where) {
    for (const auto& e : es) expr(e, where);
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

  static const Reduction* reduction_of(const ParforStmt& p, const VarNode* v) {
    for (const auto& r : p.reductions)
      if (r.var.get() == v || r.index.get() == v) return &r;
    return nullptr;
  }

  void assign(const AssignStmt& a) {
    use(a.var, "an assignment");
    if (a.var->kind != VarKind::Local || a.var->type.is_array())
      report("assignment to " + a.var->name + ", which is not a local scalar (parameters and loop indices are read-only)");
    expr(a.value, "the assignment to " + a.var->name);
    for (const ParforStmt* p : crossing_parfors(a.var.get())) {
      const Reduction* r = reduction_of(*p, a.var.get());
      if (!r) {
        report(a.var->name + " is defined outside a parfor and assigned inside it without being a reduction");
        return;
      }
      if (is_arg_reduction(r->op)) {
        if (!in_arg_update_) report(a.var->name + " (an " + std::string(name_of(r->op)) + " reduction) is assigned outside its update");
        return;
      }
      if (!is_reduction_update(a, r->op)) {
        report("reduction variable " + a.var->name + " is updated as `" + to_string(a.value) + "`, not as a " +
               std::string(name_of(r->op)) + " reduction");
        return;
      }
    }
  }

  void store(const StoreStmt& st) {
    use(st.array, "a store");
    exprs(st.indices, "an index of " + st.array->name);
    expr(st.value, "the value stored to " + st.array->name);
    for (const auto& f : parfors_)
      for (const auto& r : f.parfor->array_reductions)
        if (r.array == st.array && !is_array_update(st, r))
          report("array " + st.array->name + " is an array reduction of a parfor but is stored to as `" +
                 to_string(st.value) + "`");
  }

  void atomic(const AtomicStmt& a) {
    use(a.array, "an atomic");
    exprs(a.indices, "an index of " + a.array->name);
    expr(a.value, "the value of " + std::string(name_of(a.op)) + " on " + a.array->name);
    if (a.expected) expr(a.expected, "the expected value of an atomic on " + a.array->name);
    for (const auto& f : parfors_)
      for (const auto& r : f.parfor->array_reductions)
        if (r.array == a.array)
          report("array " + a.array->name + " is an array reduction of a parfor but is updated by " +
                 std::string(name_of(a.op)));
    define(a.result);
  }

  /// Opens a scope holding the indices of an array operation's space; the extents are outside it.
  void index_space(const std::vector<Var>& indices, const std::vector<Expr>& shape, const std::string& what) {
    exprs(shape, "the shape of " + what);
    scopes_.emplace_back();
    for (const auto& i : indices) define(i);
  }

  bool in_arg_update_ = false;

  void stmt(const Stmt& s) {
    switch (s->kind) {
      case StmtKind::Block: block(s); break;
      case StmtKind::Let: {
        const auto& l = s->as<LetStmt>();
        expr(l.init, "the initializer of " + l.var->name);
        define(l.var);
        break;
      }
      case StmtKind::Assign: assign(s->as<AssignStmt>()); break;
      case StmtKind::Store: store(s->as<StoreStmt>()); break;
      case StmtKind::Atomic: atomic(s->as<AtomicStmt>()); break;
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
      case StmtKind::Launch: launch(s->as<LaunchStmt>()); break;
      case StmtKind::If: {
        const auto& i = s->as<IfStmt>();
        expr(i.cond, "an if condition");
        const bool arg_update = is_arg_update(i);
        const bool outer = in_arg_update_;
        in_arg_update_ = outer || arg_update;
        block(i.then_body);
        in_arg_update_ = outer;
        if (i.else_body) block(i.else_body);
        break;
      }
      case StmtKind::Allocate: {
        const auto& a = s->as<AllocateStmt>();
        exprs(a.shape, "the shape of " + a.array->name);
        define(a.array);
        break;
      }
      case StmtKind::Check: {
        const auto& c = s->as<CheckStmt>();
        expr(c.cond, "a check");
        exprs(c.args, "a check message");
        break;
      }
      case StmtKind::Map: {
        const auto& m = s->as<MapStmt>();
        for (const auto& f : parfors_)
          for (const auto& r : f.parfor->array_reductions)
            if (r.array == m.target && !is_array_update(m.target, m.target_index, m.value, r))
              report("array " + m.target->name + " is an array reduction of a parfor but a map writes it as `" +
                     to_string(m.value) + "`");
        index_space(m.indices, m.shape, "a map");
        exprs(m.target_index, "the target index of a map");
        expr(m.value, "the value of a map");
        if (!m.allocate && reads_at_other_index(m)) report("map into " + m.target->name + " reads it at another index");
        scopes_.pop_back();
        if (m.allocate) define(m.target);
        else use(m.target, "a map");
        break;
      }
      case StmtKind::Reduce: {
        const auto& r = s->as<ReduceStmt>();
        index_space(r.indices, r.shape, "a reduction");
        expr(r.value, "the value of a reduction");
        scopes_.pop_back();
        define(r.result);
        break;
      }
      case StmtKind::ReduceAxis: {
        const auto& r = s->as<ReduceAxisStmt>();
        index_space(r.indices, r.shape, "a reduction");
        expr(r.value, "the value of a reduction");
        scopes_.pop_back();
        define(r.target);
        break;
      }
      case StmtKind::Sort: {
        const auto& x = s->as<SortStmt>();
        use(x.keys, "a sort");
        if (x.positions) use(x.positions, "a sort");
        if (!parfors_.empty()) report("sort of " + x.keys->name + " inside a parfor (a sort is host code)");
        if (x.positions == x.keys) report("sort of " + x.keys->name + " writes its positions into its keys");
        break;
      }
      case StmtKind::Scan: {
        const auto& x = s->as<ScanStmt>();
        use(x.source, "a scan");
        use(x.out, "a scan");
        if (!parfors_.empty()) report("scan of " + x.source->name + " inside a parfor (a scan statement is host code)");
        break;
      }
      case StmtKind::Bind: {
        const auto& b = s->as<BindStmt>();
        use(b.source, "a bind");
        if (b.declare) define(b.target);
        else use(b.target, "a rebind");
        if (!crossing_parfors(b.target.get()).empty())
          report("array binding " + b.target->name + " is rebound inside a parfor it is declared outside of");
        binds_.push_back(&b);
        break;
      }
      case StmtKind::Stencil: {
        const auto& st = s->as<StencilStmt>();
        for (const auto& w : st.windows) {
          use(w, "a stencil window");
          if (w == st.target) report("stencil target " + st.target->name + " is also one of its windows");
        }
        index_space(st.indices, st.shape, "a stencil");
        exprs(st.target_index, "the target index of a stencil");
        expr(st.value, "the value of a stencil");
        if (st.cval) expr(st.cval, "a stencil border value");
        if (!st.allocate && uses(st.value, st.target.get()))
          report("stencil into " + st.target->name + " reads its own target");
        scopes_.pop_back();
        if (st.allocate) define(st.target);
        else use(st.target, "a stencil");
        break;
      }
    }
  }

  /// True if `i` is the update of an arg reduction of an enclosing parfor.
  bool is_arg_update(const IfStmt& i) const {
    for (const auto& f : parfors_)
      for (const auto& r : f.parfor->reductions)
        if (is_arg_reduction(r.op) && match_arg_update(i, r)) return true;
    return false;
  }

  static bool reads_at_other_index(const MapStmt& m) {
    struct Finder : IRVisitor {
      const MapStmt& m;
      bool found = false;
      explicit Finder(const MapStmt& map) : m(map) {}
      void visit(const LoadExpr& l) override {
        if (l.array == m.target)
          for (size_t d = 0; d < l.indices.size(); ++d) found |= !equal(l.indices[d], m.target_index[d]);
        IRVisitor::visit(l);
      }
    } f(m);
    f.walk(m.value);
    return f.found;
  }

  /// A launch is a parfor on the device: never inside another parfor or launch, numbered in order.
  void launch(const LaunchStmt& l) {
    if (!parfors_.empty() || in_launch_) report("launch of kernel " + std::to_string(l.kernel) + " is nested in a parfor or launch");
    if (l.kernel != launches_) report("launch of kernel " + std::to_string(l.kernel) + " where kernel " + std::to_string(launches_) + " is next");
    ++launches_;
    in_launch_ = true;
    parfor(l.parfor());
    in_launch_ = false;
  }

  void parfor(const ParforStmt& p) {
    for (size_t d = 0; d < p.indices.size(); ++d) {
      expr(p.begins[d], "a parfor bound");
      expr(p.ends[d], "a parfor bound");
    }
    for (const auto& r : p.reductions) {
      use(r.var, "a reduction clause");
      if (r.index) use(r.index, "a reduction clause");
      if (std::count_if(p.reductions.begin(), p.reductions.end(), [&](const Reduction& x) { return x.var == r.var; }) > 1)
        report("reduction variable " + r.var->name + " is listed twice");
    }
    for (const auto& r : p.array_reductions) use(r.array, "an array reduction clause");
    scopes_.emplace_back();
    for (const auto& i : p.indices) define(i);
    parfors_.push_back({&p, scopes_.size()});
    // Reduction variables may be read inside the body only within their own updates.
    for (const auto& r : p.reductions) check_reduction_reads(p.body, r);
    for (const auto& r : p.array_reductions) check_array_reduction_reads(p.body, r);
    block(p.body);
    parfors_.pop_back();
    scopes_.pop_back();
  }

  void check_reduction_reads(const Stmt& body, const Reduction& r) {
    struct Reads : IRVisitor {
      const Reduction& r;
      bool bad = false;
      explicit Reads(const Reduction& red) : r(red) {}
      void visit(const VarRefExpr& e) override { bad |= e.var == r.var || (r.index && e.var == r.index); }
      void visit(const AssignStmt& s) override {
        if (s.var == r.var && is_reduction_update(s, r.op)) return;  // the update itself may read it
        IRVisitor::visit(s);
      }
      void visit(const IfStmt& s) override {
        if (match_arg_update(s, r)) return;  // the arg update reads (var, index) in its condition
        IRVisitor::visit(s);
      }
    } reads(r);
    reads.walk(body);
    if (reads.bad) report("reduction variable " + r.var->name + " is read inside its parfor outside its own update");
  }

  void check_array_reduction_reads(const Stmt& body, const ArrayReduction& r) {
    struct Reads : IRVisitor {
      const ArrayReduction& r;
      bool bad = false;
      explicit Reads(const ArrayReduction& red) : r(red) {}
      void visit(const LoadExpr& e) override {
        bad |= e.array == r.array;
        IRVisitor::visit(e);
      }
      void visit(const StoreStmt& s) override {
        if (is_array_update(s, r)) return;
        IRVisitor::visit(s);
      }
      void visit(const MapStmt& m) override {
        if (!m.allocate && is_array_update(m.target, m.target_index, m.value, r)) return;
        IRVisitor::visit(m);
      }
    } reads(r);
    reads.walk(body);
    if (reads.bad) report("array reduction " + r.array->name + " is read inside its parfor outside its updates");
  }
};

}  // namespace

std::vector<std::string> verify(const Function& f) {
  Verifier v;
  v.function(f);
  return std::move(v.problems);
}

void verify_or_throw(const Function& f, const std::string& context) {
  auto problems = verify(f);
  if (problems.empty()) return;
  throw IRError(fmt::format("IR verification failed ({}) for kernel '{}':\n  - {}\n{}", context, f.name,
                            fmt::join(problems, "\n  - "), to_string(f)));
}

}  // namespace kiln::ir
