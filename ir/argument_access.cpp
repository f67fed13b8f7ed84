// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "ir/argument_access.hpp"

#include <map>
#include <vector>

#include "ir/visitor.hpp"

namespace kiln::ir {
namespace {

/// Which parameters each Binding may name: the closure over every BindStmt of the function (a time loop
/// rebinds `u` to `v` and back, so position does not matter).
class BindingSources final : public IRVisitor {
 public:
  std::map<const VarNode*, std::vector<const VarNode*>> sources;
  void visit(const BindStmt& s) override { sources[s.target.get()].push_back(s.source.get()); }
};

/// One read or write of a parameter, with where it happens.
struct Access {
  std::uint32_t params = 0;  ///< the parameters it may touch (several through a binding)
  bool store = false;
  std::size_t pos = 0;                           ///< evaluation order: reads of a store's operands come first
  std::vector<const StmtNode*> loops;            ///< enclosing loops (For, Parfor, array-level), outermost first
  const ParforStmt* own_element_of = nullptr;    ///< set when the indices are exactly this parfor's indices
};

class Collector final : public IRVisitor {
 public:
  explicit Collector(const Function& f) {
    for (std::size_t p = 0; p < f.params.size() && p < ArgumentAccess::kMaxParams; ++p)
      if (f.params[p]->type.is_array()) param_bits_[f.params[p].get()] = 1u << p;
    BindingSources b;
    b.walk(f);
    // Fixpoint: a binding names what its sources name.
    for (bool changed = true; changed;) {
      changed = false;
      for (const auto& [target, srcs] : b.sources) {
        std::uint32_t bits = param_bits_[target];
        for (const VarNode* s : srcs) bits |= bits_of(s);
        if (bits != param_bits_[target]) {
          param_bits_[target] = bits;
          changed = true;
        }
      }
    }
  }

  std::vector<Access> accesses;

 protected:
  void visit(const LoadExpr& e) override {
    IRVisitor::visit(e);
    record(e.array.get(), e.indices, false);
  }
  void visit(const StoreStmt& s) override {
    IRVisitor::visit(s);  // indices and value first: they are read before the element is written
    record(s.array.get(), s.indices, true);
  }
  // An atomic reads the element, then writes it.
  void visit(const AtomicStmt& s) override {
    IRVisitor::visit(s);
    record(s.array.get(), s.indices, false);
    record(s.array.get(), s.indices, true);
  }
  void visit(const ForStmt& s) override {
    walk(s.begin);
    walk(s.end);
    loops_.push_back(&s);
    walk(s.body);
    loops_.pop_back();
  }
  void visit(const ParforStmt& s) override {
    for (const auto& b : s.begins) walk(b);
    for (const auto& e : s.ends) walk(e);
    loops_.push_back(&s);
    walk(s.body);
    loops_.pop_back();
  }
  // Array-level statements (not lowered) are loops over their space: their target's writes interleave with
  // their reads.
  void visit(const MapStmt& s) override {
    loops_.push_back(&s);
    IRVisitor::visit(s);
    record(s.target.get(), {}, true);
    loops_.pop_back();
  }
  void visit(const StencilStmt& s) override {
    loops_.push_back(&s);
    IRVisitor::visit(s);
    for (const Var& w : s.windows) record(w.get(), {}, false);
    record(s.target.get(), {}, true);
    loops_.pop_back();
  }
  // A sort reads every element of its arrays and writes them back elsewhere in the rows: a loop over them
  // (forward_destinations may sort a 1-d parameter in place).
  void visit(const SortStmt& s) override {
    loops_.push_back(&s);
    for (const Var& a : {s.keys, s.positions})
      if (a) record(a.get(), {}, false);
    for (const Var& a : {s.keys, s.positions})
      if (a) record(a.get(), {}, true);
    loops_.pop_back();
  }
  // A scan reads every element of its source and writes every element of its result.
  void visit(const ScanStmt& s) override {
    loops_.push_back(&s);
    record(s.source.get(), {}, false);
    record(s.out.get(), {}, true);
    loops_.pop_back();
  }
  void visit(const ReduceStmt& s) override {
    loops_.push_back(&s);
    IRVisitor::visit(s);
    loops_.pop_back();
  }
  void visit(const ReduceAxisStmt& s) override {
    loops_.push_back(&s);
    IRVisitor::visit(s);
    record(s.target.get(), {}, true);
    loops_.pop_back();
  }

 private:
  std::uint32_t bits_of(const VarNode* v) const {
    const auto it = param_bits_.find(v);
    return it == param_bits_.end() ? 0 : it->second;
  }

  void record(const VarNode* array, const std::vector<Expr>& indices, bool store) {
    Access a;
    a.params = bits_of(array);
    if (!a.params) return;
    a.store = store;
    a.pos = next_pos_++;
    a.loops = loops_;
    // The iteration's own element: the innermost loop is a parfor whose indices are the access's, axis by
    // axis, and the array is a parameter itself (a binding may name another array each time round).
    const ParforStmt* p = loops_.empty() || loops_.back()->kind != StmtKind::Parfor
                              ? nullptr
                              : static_cast<const ParforStmt*>(loops_.back());
    if (p && array->kind == VarKind::Param && indices.size() == p->indices.size() &&
        indices.size() == static_cast<std::size_t>(array->type.rank)) {
      bool own = true;
      for (std::size_t d = 0; d < indices.size() && own; ++d) {
        const auto* ref = indices[d] && indices[d]->kind == ExprKind::VarRef ? &indices[d]->as<VarRefExpr>() : nullptr;
        own = ref && ref->var == p->indices[d];
      }
      if (own) a.own_element_of = p;
    }
    accesses.push_back(std::move(a));
  }

  std::map<const VarNode*, std::uint32_t> param_bits_;
  std::vector<const StmtNode*> loops_;
  std::size_t next_pos_ = 0;
};

/// Number of loops enclosing both accesses.
std::size_t common_loops(const Access& a, const Access& b) {
  std::size_t n = 0;
  while (n < a.loops.size() && n < b.loops.size() && a.loops[n] == b.loops[n]) ++n;
  return n;
}

/// The read `r` is over before the write `w` starts, once and for all.
bool finished_before(const Access& r, const Access& w) { return r.pos < w.pos && common_loops(r, w) == 0; }

/// The read and the write touch the same parfor iteration's own element, read first, and no loop inside the
/// parfor repeats them (with one view, iterations then touch disjoint elements).
bool same_iteration_read_first(const Access& r, const Access& w) {
  return r.pos < w.pos && r.own_element_of && r.own_element_of == w.own_element_of && common_loops(r, w) == 1;
}

}  // namespace

ArgumentAccess argument_access(const Function& f) {
  Collector c(f);
  c.walk(f);
  ArgumentAccess out;
  for (const Access& a : c.accesses) (a.store ? out.stored : out.loaded) |= a.params;
  for (int w = 0; w < ArgumentAccess::kMaxParams; ++w) {
    if (!((out.stored >> w) & 1u)) continue;
    for (int r = 0; r < ArgumentAccess::kMaxParams; ++r) {
      if (r == w || !((out.loaded >> r) & 1u)) continue;
      bool before = true, same_view = true;
      for (const Access& rd : c.accesses) {
        if (rd.store || !((rd.params >> r) & 1u)) continue;
        for (const Access& wr : c.accesses) {
          if (!wr.store || !((wr.params >> w) & 1u)) continue;
          const bool fin = finished_before(rd, wr);
          before = before && fin;
          same_view = same_view && (fin || same_iteration_read_first(rd, wr));
        }
      }
      if (before) out.before[w] |= 1u << r;
      if (same_view) out.same_view[w] |= 1u << r;
    }
  }
  return out;
}

}  // namespace kiln::ir
