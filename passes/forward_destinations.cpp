// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "passes/forward_destinations.hpp"

#include <algorithm>

#include "ir/analysis.hpp"
#include "ir/builder.hpp"
#include "ir/compact.hpp"
#include "ir/substitute.hpp"
#include "passes/statement_lists.hpp"

namespace kiln::passes {
namespace {

using namespace kiln::ir;

/// The array a map copies element for element into its target (`o[i, j] = T[i, j]` over the whole space), or
/// null.
const VarNode* copied_from(const MapStmt& m) {
  if (m.allocate) return nullptr;
  const auto* load = dyn<LoadExpr>(m.value);
  if (!load || load->array == m.target || load->array->type.elem != m.target->type.elem) return nullptr;
  if (m.target_index.size() != m.indices.size() || load->indices.size() != m.indices.size()) return nullptr;
  for (size_t d = 0; d < m.indices.size(); ++d) {
    const auto* t = dyn<VarRefExpr>(m.target_index[d]);
    const auto* l = dyn<VarRefExpr>(load->indices[d]);
    if (!t || !l || t->var != m.indices[d] || l->var != m.indices[d]) return nullptr;
  }
  return load->array.get();
}

/// `dim(array, d)` replaced by `extents[d]` (or by 0 with no extents: what is left then does not read the
/// array's extents).
class ReplaceDims : public IRMutator {
 public:
  ReplaceDims(const VarNode* array, const std::vector<Expr>* extents) : array_(array), extents_(extents) {}

 protected:
  using IRMutator::visit;
  Expr visit(const DimExpr& e, const Expr& self) override {
    if (e.array.get() != array_) return self;
    return extents_ ? (*extents_)[static_cast<size_t>(e.axis)] : make_i64(0);
  }

 private:
  const VarNode* array_;
  const std::vector<Expr>* extents_;
};

/// Whether `s` makes a binding name `array` (which would then name the destination).
bool binds(const Stmt& s, const VarNode* array) {
  struct Finder : IRVisitor {
    const VarNode* array;
    bool found = false;
    explicit Finder(const VarNode* a) : array(a) {}
    void visit(const BindStmt& b) override { found |= b.source.get() == array; }
  } finder(array);
  finder.walk(s);
  return finder.found;
}

/// Whether `s` holds `array` in a statement that works on whole rows of compact memory (a SortStmt, a ScanStmt).
bool sorts(const Stmt& s, const VarNode* array) {
  struct Finder : IRVisitor {
    const VarNode* array;
    bool found = false;
    explicit Finder(const VarNode* a) : array(a) {}
    void visit(const SortStmt& x) override { found |= x.keys.get() == array || x.positions.get() == array; }
    void visit(const ScanStmt& x) override { found |= x.source.get() == array || x.out.get() == array; }
  } finder(array);
  finder.walk(s);
  return finder.found;
}

/// The array a statement creates and its shape: an allocation, or an allocating map (which also fills it).
struct NewArray {
  const VarNode* array = nullptr;
  const std::vector<Expr>* shape = nullptr;
  const MapStmt* map = nullptr;  ///< the allocating map, if that is what creates it
};

NewArray new_array(const Stmt& s) {
  if (const auto* a = dyn<AllocateStmt>(s)) return {a->array.get(), &a->shape, nullptr};
  if (const auto* m = dyn<MapStmt>(s); m && m->allocate) return {m->target.get(), &m->shape, m};
  return {};
}

class Forwarding {
 public:
  Forwarding(const Function& f, PassContext& ctx) : f_(f), ctx_(ctx) {}

  std::vector<Stmt> rewrite(std::vector<Stmt> s) {
    for (size_t p = 0; p < s.size(); ++p)
      if (const NewArray a = new_array(s[p]); a.array && !f_.returns(a.array)) forward(s, p);
    return s;
  }

 private:
  const Function& f_;
  PassContext& ctx_;

  /// Forwards the array created at s[p] into the array it is copied into, if it can.
  void forward(std::vector<Stmt>& s, size_t p) {
    const NewArray a = new_array(s[p]);
    const VarNode* t = a.array;
    size_t q = p + 1;
    for (; q < s.size(); ++q)
      if (const auto* m = dyn<MapStmt>(s[q]); m && copied_from(*m) == t) break;
    if (q == s.size()) return;
    const MapStmt& copy = s[q]->as<MapStmt>();
    const Var o = copy.target;
    if (o->kind == VarKind::Binding || f_.returns(o.get())) return;  // a binding may name anything
    for (size_t k = q + 1; k < s.size(); ++k)
      if (uses(s[k], t)) return;
    // An allocating map fills o instead: its value may not read o (it would read elements it has written). A
    // map copied straight away is fusion's (it puts the map into the copy).
    if (a.map && (q == p + 1 || uses(ReplaceDims(o.get(), nullptr).mutate(a.map->value), o.get()))) return;
    // o untouched between the allocation and the copy (its extents aside), and the variables of T's extents
    // not assigned there, so that the extents mean at the checks what they meant at the allocation.
    VarSet assigned;
    for (size_t k = p + 1; k < q; ++k) {
      if (uses(ReplaceDims(o.get(), nullptr).mutate(s[k]), o.get()) || binds(s[k], t)) return;
      if (!always_compact(*o) && sorts(s[k], t)) return;  // a sort needs compact rows; o's strides are the caller's
      for (const VarNode* v : assigned_vars(s[k])) assigned.insert(v);
      for (const VarNode* v : declared_in(s[k])) assigned.insert(v);
    }
    for (const Expr& e : *a.shape)
      for (const Var& v : free_vars(e))
        if (assigned.count(v.get())) return;
    // The copy's checks (its shapes against o's) move before everything that now writes o; they may read
    // nothing made in between.
    std::vector<Stmt> checks, fill;
    ReplaceDims extents(t, a.shape);
    for (size_t k = p + 1; k < q; ++k) {
      Stmt st = extents.mutate(s[k]);
      if (dyn<CheckStmt>(st) && uses(st, o.get())) {
        for (const Var& v : free_vars(st))
          if (assigned.count(v.get())) return;
        checks.push_back(st);
      } else {
        fill.push_back(st);
      }
    }
    Renamer rename;
    rename.vars[t] = o;
    std::vector<Stmt> out(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(p));
    out.insert(out.end(), checks.begin(), checks.end());
    if (a.map) {
      std::vector<Expr> own;
      for (const Var& i : a.map->indices) own.push_back(make_ref(i));
      out.push_back(make_map_into(o, a.map->indices, a.map->shape, std::move(own), a.map->value, a.map->origin));
    }
    for (const Stmt& st : fill) out.push_back(rename.mutate(st));
    out.insert(out.end(), s.begin() + static_cast<std::ptrdiff_t>(q) + 1, s.end());
    ctx_.note("wrote " + t->name + " straight into " + o->name + " (" + copy.origin + "): no allocation, no copy");
    s = std::move(out);
  }
};

}  // namespace

ir::Function forward_destinations(const ir::Function& f, PassContext& ctx) {
  Forwarding fw(f, ctx);
  ir::Function out = f;
  out.body = rewrite_statement_lists(f.body, [&](std::vector<ir::Stmt> s) { return fw.rewrite(std::move(s)); });
  return out;
}

}  // namespace kiln::passes
