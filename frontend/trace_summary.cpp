// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "frontend/trace_summary.hpp"

#include <unordered_map>

#include "ir/hash.hpp"
#include "ir/visitor.hpp"

namespace kiln::detail {
namespace {

class Stencils : public ir::IRVisitor {
 public:
  explicit Stencils(const ir::Function& f) {
    for (std::size_t i = 0; i < f.params.size(); ++i) params_[f.params[i].get()] = static_cast<int>(i);
  }
  std::vector<StencilUse> found;

 protected:
  using IRVisitor::visit;
  void visit(const ir::StencilStmt& s) override {
    StencilUse u;
    u.origin = s.origin;
    for (const auto& w : s.windows) {
      u.windows.push_back(param(w.get()));
      u.window_names.push_back(w->name);
    }
    u.target = s.allocate ? -1 : param(s.target.get());
    u.lo = s.lo;
    u.hi = s.hi;
    u.border = static_cast<std::uint8_t>(s.border);
    if (const auto* c = s.cval ? ir::dyn<ir::ConstExpr>(s.cval) : nullptr) u.cval = is_float(c->type) ? c->f : static_cast<double>(c->i);
    found.push_back(std::move(u));
    IRVisitor::visit(s);
  }

 private:
  int param(const ir::VarNode* v) const {
    const auto it = params_.find(v);
    return it == params_.end() ? -1 : it->second;
  }
  std::unordered_map<const ir::VarNode*, int> params_;
};

}  // namespace

TraceSummary summarize_trace(const ir::Function& f) {
  TraceSummary out;
  Stencils s(f);
  s.walk(f);
  out.stencils = std::move(s.found);
  const ir::Hash128 h = ir::structural_hash(f);
  out.ir_hash_lo = h.lo;
  out.ir_hash_hi = h.hi;
  out.has_result = f.returns_scalar() || f.returns_array() || f.returns_tuple();
  for (const auto& p : f.params) out.param_names.push_back(p->name);
  return out;
}

}  // namespace kiln::detail
