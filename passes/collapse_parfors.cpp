// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Collapsing perfectly nested parfors. Numba runs a prange nested in a prange serially; here the nest
// becomes one n-d parfor, whose whole space the backend schedules at once. Runs after hoist_invariants
// (which moves out of the outer body whatever the inner loop does not need, making more nests perfect)
// and before fuse_parfors, so that a collapsed nest can fuse with an n-d parfor over the same space.
// Bounds are evaluated up front in an n-d parfor, so inner bounds must not load (an empty outer loop
// never evaluated them); pure expressions cannot fail. Lets before the inner parfor that do not depend on
// the outer indices (and load nothing) move out of the outer loop first, as LICM would; the general LICM
// pass runs only after fusion.
#include "passes/collapse_parfors.hpp"

#include <unordered_set>

#include "ir/builder.hpp"
#include "ir/visitor.hpp"
#include "passes/loop_analysis.hpp"
#include "passes/statement_lists.hpp"

namespace kiln::passes {
namespace {

using namespace kiln::ir;

class Collapser : public SplicingMutator {
 public:
  explicit Collapser(PassContext& ctx) : ctx_(ctx) {}

 protected:
  using SplicingMutator::visit;
  PassContext& ctx_;
  /// The lets at the start of `body` that may run once before the loop with `indices`: they read no array,
  /// no index and nothing the body assigns.
  static size_t invariant_prefix(const std::vector<Stmt>& body, const std::vector<Var>& indices) {
    VarSet variant;
    for (const auto& i : indices) variant.insert(i.get());
    for (const auto& s : body)
      for (const VarNode* v : assigned_vars(s)) variant.insert(v);
    size_t k = 0;
    for (; k < body.size(); ++k) {
      const auto* l = dyn<LetStmt>(body[k]);
      if (!l || has_load(l->init) || variant.count(l->var.get())) break;
      bool ok = true;
      for (const Var& v : free_vars(l->init)) ok = ok && !variant.count(v.get());
      if (!ok) break;
    }
    return k;
  }

  Stmt visit(const ParforStmt& s, const Stmt& self) override {
    Stmt r = IRMutator::visit(s, self);  // inner nests first
    const auto& outer = r->as<ParforStmt>();
    const std::vector<Stmt> all = loops::statements(outer.body);
    const size_t lets = invariant_prefix(all, outer.indices);
    const std::vector<Stmt> hoisted(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(lets));
    const std::vector<Stmt> body(all.begin() + static_cast<std::ptrdiff_t>(lets), all.end());
    if (body.size() != 1 || body.front()->kind != StmtKind::Parfor) return r;
    const auto& inner = body.front()->as<ParforStmt>();
    const std::string what = loops::origin_text(outer) + " and the " + loops::origin_text(inner) + " nested in it";
    if (outer.indices.size() + inner.indices.size() > static_cast<size_t>(kMaxRank)) {
      ctx_.note(Topic::collapse, "kept " + what + " apart: more than " + std::to_string(kMaxRank) + " dimensions");
      return r;
    }
    for (size_t d = 0; d < inner.indices.size(); ++d)
      for (const Expr& e : {inner.begins[d], inner.ends[d]}) {
        bool outer_index = false;
        for (const Var& v : free_vars(e))
          for (const Var& i : outer.indices) outer_index |= v == i;
        if (outer_index || has_load(e)) {
          ctx_.note(Topic::collapse, "kept " + what + " apart: the inner bounds " +
                                         (outer_index ? "depend on the outer index" : "read an array"));
          return r;
        }
      }
    std::vector<Reduction> reds = inner.reductions;
    for (const auto& o : outer.reductions) {
      bool listed = false;
      for (const auto& i : reds)
        if (i.var == o.var) {
          if (i.op != o.op || i.index != o.index) {
            ctx_.note(Topic::collapse, "kept " + what + " apart: " + o.var->name + " is reduced differently");
            return r;
          }
          listed = true;
        }
      if (!listed) reds.push_back(o);
    }
    std::vector<ArrayReduction> ars = inner.array_reductions;
    for (const auto& o : outer.array_reductions) {
      bool listed = false;
      for (const auto& i : ars) listed |= i.array == o.array;
      if (!listed) ars.push_back(o);
    }
    std::vector<Var> idx = outer.indices;
    std::vector<Expr> begins = outer.begins, ends = outer.ends;
    idx.insert(idx.end(), inner.indices.begin(), inner.indices.end());
    begins.insert(begins.end(), inner.begins.begin(), inner.begins.end());
    ends.insert(ends.end(), inner.ends.begin(), inner.ends.end());
    std::string origin = outer.origin;
    if (!inner.origin.empty() && inner.origin != outer.origin) origin += (origin.empty() ? "" : " x ") + inner.origin;
    Stmt collapsed = make_parfor(std::move(idx), std::move(begins), std::move(ends), inner.body, std::move(reds),
                                 std::move(ars), origin);
    std::string moved;
    for (const auto& h : hoisted) moved += (moved.empty() ? " (moved out first: " : "; ") + loops::first_line(h);
    ctx_.note(Topic::collapse, "collapsed " + what + " into one parfor over " +
                                   loops::space_text(collapsed->as<ParforStmt>()) + (moved.empty() ? "" : moved + ")"));
    if (hoisted.empty()) return collapsed;
    std::vector<Stmt> out = hoisted;
    out.push_back(collapsed);
    return splice(std::move(out));  // the hoisted lets stay visible to the statements after the parfor
  }
};

}  // namespace

ir::Function collapse_parfors(const ir::Function& f, PassContext& ctx) {
  Collapser c(ctx);
  return c.mutate(f);
}

}  // namespace kiln::passes
