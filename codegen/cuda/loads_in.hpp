// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Every load of a loop body, and the site a load reads: what the tiled (emit_tiled.cpp) and contraction
// (emit_contraction.cpp) forms stage through shared memory is chosen from the one and numbered by the other.
#pragma once

#include <utility>
#include <vector>

#include "ir/analysis.hpp"
#include "ir/visitor.hpp"

namespace kiln::codegen::cuda {

/// Every load inside `s`, nested ones (a load in another's index) too, in visiting order.
inline std::vector<const ir::LoadExpr*> loads_in(const ir::Stmt& s) {
  struct Collect : ir::IRVisitor {
    std::vector<const ir::LoadExpr*> out;
    void visit(const ir::LoadExpr& l) override {
      out.push_back(&l);
      ir::IRVisitor::visit(l);
    }
  } c;
  c.walk(s);
  return std::move(c.out);
}

/// The index in `sites` of the one that reads `l`'s element (its array at equal indices), or -1. A plan stages
/// each element a step reads once, however many loads name it. `Site` has `array` and `indices`.
template <class Site>
int site_of(const std::vector<Site>& sites, const ir::LoadExpr& l) {
  for (std::size_t s = 0; s < sites.size(); ++s) {
    const Site& o = sites[s];
    if (o.array != l.array.get() || o.indices.size() != l.indices.size()) continue;
    bool same = true;
    for (std::size_t d = 0; same && d < l.indices.size(); ++d) same = ir::equal(o.indices[d], l.indices[d]);
    if (same) return static_cast<int>(s);
  }
  return -1;
}

}  // namespace kiln::codegen::cuda
