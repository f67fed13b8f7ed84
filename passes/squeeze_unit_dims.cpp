// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "passes/squeeze_unit_dims.hpp"

#include "ir/builder.hpp"
#include "ir/substitute.hpp"
#include "ir/visitor.hpp"

namespace kiln::passes {
namespace {

using namespace kiln::ir;

class SqueezeUnitDims : public IRMutator {
 public:
  explicit SqueezeUnitDims(SqueezedParfors& out) : out_(out) {}

 protected:
  using IRMutator::visit;
  Stmt visit(const ParforStmt& s, const Stmt& self) override {
    Stmt r = IRMutator::visit(s, self);
    const auto& p = r->as<ParforStmt>();
    std::vector<size_t> keep;
    Replacements zero;
    std::string names;
    auto unit = [&](size_t d) { return is_const_value(p.begins[d], 0) && is_const_value(p.ends[d], 1); };
    bool all_unit = true;
    for (size_t d = 0; d < p.indices.size(); ++d) all_unit = all_unit && unit(d);
    for (size_t d = 0; d < p.indices.size(); ++d) {
      if (unit(d) && !(all_unit && d == 0)) {  // one dimension stays
        zero[p.indices[d].get()] = p.begins[d];
        names += (names.empty() ? "" : ", ") + p.indices[d]->name;
      } else {
        keep.push_back(d);
      }
    }
    if (keep.size() == p.indices.size()) return r;
    std::vector<Var> idx;
    std::vector<Expr> begins, ends;
    for (size_t d : keep) {
      idx.push_back(p.indices[d]);
      begins.push_back(p.begins[d]);
      ends.push_back(p.ends[d]);
    }
    Stmt q = make_parfor(std::move(idx), std::move(begins), std::move(ends), substitute(p.body, zero), p.reductions,
                         p.array_reductions, p.origin);
    out_.alive.push_back(q);
    out_.dropped[q.get()] = names;
    return q;
  }

 private:
  SqueezedParfors& out_;
};

}  // namespace

ir::Function squeeze_unit_dims(const ir::Function& f, SqueezedParfors& out) {
  SqueezeUnitDims squeeze(out);
  return squeeze.mutate(f);
}

}  // namespace kiln::passes
