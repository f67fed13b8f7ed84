// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Every load of a loop body: what the tiled (emit_tiled.cpp) and contraction (emit_contraction.cpp) forms stage
// through shared memory is chosen from it.
#pragma once

#include <utility>
#include <vector>

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

}  // namespace kiln::codegen::cuda
