// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "passes/offload.hpp"

#include "ir/analysis.hpp"
#include "ir/builder.hpp"
#include "ir/cooperative.hpp"
#include "ir/interior.hpp"
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
                   : "") +
              (!rows.eligible && p.reductions.empty() && p.array_reductions.empty() ? stencil_text(p) : std::string()));
    return ir::make_launch(kernel, self);
  }

  /// What the CUDA backend's stencil form (codegen/cuda/emit_stencil.cpp) does with the parfor's shape: its
  /// bounds tests (the interior it tiles) and the planes it walks; empty for a parfor that has neither.
  static std::string stencil_text(const ir::ParforStmt& p) {
    const ir::VarSet assigned = ir::assigned_vars(p.body), declared = ir::declared_in(p.body);
    auto fixed = [&](const ir::Expr& e) {
      if (ir::has_load(e)) return false;
      for (const ir::Var& v : ir::free_vars(e))
        if (assigned.count(v.get()) || declared.count(v.get())) return false;
      for (const ir::Var& i : p.indices)
        if (ir::uses(e, i.get())) return false;
      return true;
    };
    std::vector<ir::Expr> tests;
    const ir::Stmt interior = ir::split_interior(p.body, tests, fixed, p.indices);
    std::string text;
    if (!tests.empty())
      text += "; its " + std::to_string(tests.size()) +
              " bounds test(s) of the indices mark an interior: as a stencil, the elements inside run the interior arm on tiled "
              "windows and the others the whole body after their strip";
    for (const ir::PlaneReads& r : ir::plane_reads(interior, p, ir::kMaxStencilReach))
      text += "; it reads " + r.array->name + " at planes " + p.indices[0]->name + (r.lo < 0 ? "" : "+") + std::to_string(r.lo) + ".." +
              p.indices[0]->name + (r.hi < 0 ? "" : "+") + std::to_string(r.hi) +
              ": as a stencil with shared tiles, each thread walks a chunk of " + p.indices[0]->name +
              " holding those planes (2.5-d blocking)";
    return text;
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
