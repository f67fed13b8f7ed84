// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "passes/plan_splits.hpp"

#include "ir/uneven_work.hpp"
#include "ir/visitor.hpp"

namespace kiln::passes {

ir::Function plan_splits(const ir::Function& f, PassContext& ctx) {
  struct Notes : ir::IRVisitor {
    PassContext& ctx;
    explicit Notes(PassContext& c) : ctx(c) {}
    // Only outermost parfors reach the runtime; nested ones run inside their enclosing piece.
    void visit(const ir::ParforStmt& p) override {
      const std::string loop = ir::uneven_work(p);
      if (loop.empty()) return;
      const std::string name = p.origin.empty() ? std::string("parfor") : p.origin;
      const std::string& index = p.indices.front()->name;
      if (ir::splits_by_work(p))
        ctx.note(name + ": pieces of equal work, not of equal length: the trip count of `" + loop + "` changes with " + index);
      else
        ctx.note(name + ": pieces of equal length (its reductions' pieces fix the order of their sums), though the trip count of `" +
                 loop + "` changes with " + index);
    }
  } notes(ctx);
  notes.walk(f);
  return f;
}

}  // namespace kiln::passes
