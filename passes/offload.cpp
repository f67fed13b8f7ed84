// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "passes/offload.hpp"

#include "ir/analysis.hpp"
#include "ir/builder.hpp"
#include "ir/cooperative.hpp"
#include "ir/visitor.hpp"
#include "passes/loop_analysis.hpp"

namespace kiln::passes {
namespace {

/// Parfors nested in a parfor stay in its kernel: the mutator does not descend into the parfors it wraps.
class Offloader final : public ir::IRMutator {
 public:
  explicit Offloader(PassContext& ctx) : ctx_(ctx) {}

 protected:
  ir::Stmt visit(const ir::ParforStmt& p, const ir::Stmt& self) override {
    const int kernel = next_++;
    // How the CUDA backend spreads rows that reduce over threads (ir/cooperative.hpp): the decision and why.
    const ir::CooperativePlan rows = ir::plan_cooperative(p);
    ctx_.note("kernel " + std::to_string(kernel) + ": the parfor " + loops::space_text(p) + " from " +
              loops::origin_text(p) + " runs on the device; the host launches it" + (rows.wanted ? "; " + rows.reason : std::string()) +
              (rows.eligible ? " (a warp per row, or a block per row when few long rows leave the device's SMs idle: chosen at launch"
                               " from the rows, the row length and the SM count)"
                             : "") +
              // The CUDA emitter's unrolling rule (codegen/cuda/emit_kernel.cpp), said where the report shows it.
              (!rows.eligible && ir::runs_a_loop(p.body)
                   ? "; one iteration per thread, not unrolled: the body runs a sequential loop, which is a thread's work already"
                   : ""));
    return ir::make_launch(kernel, self);
  }
  ir::Stmt visit(const ir::LaunchStmt& l, const ir::Stmt& self) override {
    next_ = l.kernel + 1;  // already offloaded (a function offloaded twice keeps its numbering)
    return self;
  }

 private:
  PassContext& ctx_;
  int next_ = 0;
};

}  // namespace

ir::Function offload(const ir::Function& f, PassContext& ctx) {
  Offloader o(ctx);
  return o.mutate(f);
}

}  // namespace kiln::passes
