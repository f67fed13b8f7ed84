// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "passes/loop_analysis.hpp"

#include "ir/analysis.hpp"
#include "ir/builder.hpp"
#include "ir/printer.hpp"

namespace kiln::passes::loops {

using namespace kiln::ir;

bool may_alias_any(const VarNode* a, const VarSet& set) {
  if (set.count(a)) return true;
  for (const VarNode* b : set)
    if (ir::may_alias(a, b)) return true;
  return false;
}

VarSet bound_arrays(const Stmt& s) {
  struct Finder : IRVisitor {
    VarSet out;
    void visit(const BindStmt& b) override { out.insert(b.source.get()); }
  } f;
  f.walk(s);
  return std::move(f.out);
}

namespace {

class Collect : public IRVisitor {
 public:
  Effects& out;
  explicit Collect(Effects& e) : out(e) {}

 protected:
  void visit(const LoadExpr& e) override {
    out.loaded.insert(e.array.get());
    out.accesses.push_back(Access{e.array, e.indices, false});
    IRVisitor::visit(e);
  }
  void visit(const StoreStmt& s) override {
    IRVisitor::visit(s);  // the value is read before the element is written
    out.stored.insert(s.array.get());
    out.accesses.push_back(Access{s.array, s.indices, true});
  }
  void visit(const AssignStmt& s) override {
    IRVisitor::visit(s);
    out.writes.insert(s.var.get());
  }
  // An atomic reads its element and writes it: a load and a store at the same subscripts.
  void visit(const AtomicStmt& s) override {
    IRVisitor::visit(s);
    out.loaded.insert(s.array.get());
    out.stored.insert(s.array.get());
    out.accesses.push_back(Access{s.array, s.indices, false});
    out.accesses.push_back(Access{s.array, s.indices, true});
  }
  void visit(const MapStmt& s) override {
    IRVisitor::visit(s);
    out.stored.insert(s.target.get());
    out.accesses.push_back(Access{s.target, s.target_index, true});
  }
  void visit(const ParforStmt& s) override {
    for (const auto& r : s.reductions) {
      out.writes.insert(r.var.get());
      if (r.index) out.writes.insert(r.index.get());
    }
    for (const auto& r : s.array_reductions) {
      out.loaded.insert(r.array.get());
      out.stored.insert(r.array.get());
    }
    IRVisitor::visit(s);
  }
  void visit(const CheckStmt& s) override {
    out.checks = true;
    IRVisitor::visit(s);
  }
  // Rebinding changes which array the binding names: to the passes it is an assignment of the variable.
  void visit(const BindStmt& s) override {
    if (!s.declare) out.writes.insert(s.target.get());
  }
  // A sort reads and writes every element: no subscripts to record, which keeps it out of the passes that
  // reason about one element per iteration.
  void visit(const SortStmt& s) override {
    out.loaded.insert(s.keys.get());
    out.stored.insert(s.keys.get());
    if (s.positions) out.stored.insert(s.positions.get());
  }
  void visit(const ScanStmt& s) override {
    out.loaded.insert(s.source.get());
    out.stored.insert(s.out.get());
  }
  void visit(const StencilStmt& s) override {
    IRVisitor::visit(s);
    for (const auto& w : s.windows) out.loaded.insert(w.get());
    out.stored.insert(s.target.get());
    out.accesses.push_back(Access{s.target, s.target_index, true});
  }
};

}  // namespace

Effects effects_of(const Stmt& s) {
  Effects e;
  for (const Var& v : free_vars(s)) e.uses.insert(v.get());
  Collect c(e);
  c.walk(s);
  for (const Var& v : declared_by(s)) e.defines.insert(v.get());
  return e;
}

namespace {

bool intersects(const VarSet& a, const VarSet& b) {
  for (const VarNode* v : a)
    if (b.count(v)) return true;
  return false;
}

bool arrays_conflict(const VarSet& written, const VarSet& touched) {
  for (const VarNode* w : written)
    if (may_alias_any(w, touched)) return true;
  return false;
}

}  // namespace

bool conflict(const Effects& a, const Effects& b) {
  if (intersects(a.writes, b.uses) || intersects(b.writes, a.uses)) return true;
  VarSet b_touched = b.loaded, a_touched = a.loaded;
  b_touched.insert(b.stored.begin(), b.stored.end());
  a_touched.insert(a.stored.begin(), a.stored.end());
  return arrays_conflict(a.stored, b_touched) || arrays_conflict(b.stored, a_touched);
}

bool needs(const Effects& user, const Effects& e) { return intersects(user.uses, e.defines); }

VarSet variant_in(const Stmt& body) {
  VarSet out = declared_in(body);
  for (const VarNode* v : assigned_vars(body)) out.insert(v);
  return out;
}

bool invariant_in(const Expr& e, const std::vector<Var>& indices, const VarSet& variant) {
  if (has_load(e)) return false;
  for (const Var& v : free_vars(e)) {
    if (variant.count(v.get())) return false;
    for (const Var& i : indices)
      if (i == v) return false;
  }
  return true;
}

namespace {

/// The position in `indices` of the index that is the unit term of `e`, or -1.
int unit_index(const Expr& e, const std::vector<Var>& indices, const VarSet& variant) {
  auto position = [&](const Expr& x) {
    const auto* r = dyn<VarRefExpr>(x);
    if (!r) return -1;
    for (size_t k = 0; k < indices.size(); ++k)
      if (indices[k] == r->var) return static_cast<int>(k);
    return -1;
  };
  if (int k = position(e); k >= 0) return k;
  const auto* b = dyn<BinaryExpr>(e);
  if (!b || (b->op != BinaryOp::Add && b->op != BinaryOp::Sub)) return -1;
  if (int k = position(b->a); k >= 0 && invariant_in(b->b, indices, variant)) return k;
  if (b->op == BinaryOp::Add)
    if (int k = position(b->b); k >= 0 && invariant_in(b->a, indices, variant)) return k;
  return -1;
}

}  // namespace

bool one_element_per_iteration(const std::vector<Expr>& index, const std::vector<Var>& indices, const VarSet& variant) {
  std::vector<int> seen(indices.size(), 0);
  for (const Expr& e : index) {
    const int k = unit_index(e, indices, variant);
    if (k >= 0) ++seen[static_cast<size_t>(k)];
    else if (!invariant_in(e, indices, variant)) return false;
  }
  for (int n : seen)
    if (n != 1) return false;
  return true;
}

bool stable_extents(const std::vector<Expr>& shape, const VarSet& assigned) {
  for (const auto& e : shape) {
    if (has_load(e)) return false;
    for (const Var& v : free_vars(e))
      if (assigned.count(v.get())) return false;
  }
  return true;
}

bool equal_all(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k)
    if (!equal(a[k], b[k])) return false;
  return true;
}

// ---- text ------------------------------------------------------------------------------------------------

std::vector<Stmt> statements(const Stmt& body) {
  if (!body) return {};
  if (const auto* b = dyn<BlockStmt>(body)) return b->stmts;
  return {body};
}

std::string origin_text(const ParforStmt& p) {
  if (p.origin.empty()) return "a parfor";
  const std::string sep = kOriginSeparator;
  size_t parts = 1;
  for (size_t at = p.origin.find(sep); at != std::string::npos; at = p.origin.find(sep, at + sep.size())) ++parts;
  if (parts <= 2) return p.origin;
  return p.origin.substr(0, p.origin.find(sep)) + " and " + std::to_string(parts - 1) + " more fused with it";
}

std::string joined_origin(const std::string& a, const std::string& b) {
  if (b.empty() || a == b) return a;
  if (a.empty()) return b;
  const std::string sep = kOriginSeparator;
  size_t start = 0;
  while (start <= a.size()) {
    size_t end = a.find(sep, start);
    if (end == std::string::npos) end = a.size();
    if (a.compare(start, end - start, b) == 0) return a;
    start = end + sep.size();
  }
  return a + sep + b;
}

std::string space_text(const ParforStmt& p) {
  std::string s = "(";
  for (size_t d = 0; d < p.indices.size(); ++d)
    s += (d ? ", " : "") + p.indices[d]->name + " in " + to_string(p.begins[d]) + " .. " + to_string(p.ends[d]);
  return s + ")";
}

std::string first_line(const Stmt& s) {
  std::string t = to_string(s);
  const size_t nl = t.find('\n');
  if (nl != std::string::npos) t.resize(nl);
  if (t.size() > 2 && t.substr(t.size() - 2) == " {") t.resize(t.size() - 2);
  return t;
}

}  // namespace kiln::passes::loops
