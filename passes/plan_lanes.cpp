// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "passes/plan_lanes.hpp"

#include "ir/lanes.hpp"
#include "ir/visitor.hpp"

namespace kiln::passes {

ir::Function plan_lanes(const ir::Function& f, PassContext& ctx) {
  struct Notes : ir::IRVisitor {
    PassContext& ctx;
    explicit Notes(PassContext& c) : ctx(c) {}
    void visit(const ir::ParforStmt& p) override {
      const ir::LanePlan plan = ir::plan_lanes(p);
      if (plan.wanted) ctx.note((p.origin.empty() ? std::string("parfor") : p.origin) + ": " + plan.reason);
      ir::IRVisitor::visit(p);
    }
  } notes(ctx);
  notes.walk(f);
  return f;
}

}  // namespace kiln::passes
