// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "passes/pipeline.hpp"

#include <chrono>
#include <cstdio>
#include <stdexcept>

#include "ir/printer.hpp"
#include "ir/verifier.hpp"
#include "passes/array_analysis.hpp"
#include "passes/band_clamps.hpp"
#include "passes/collapse_parfors.hpp"
#include "passes/detect_reductions.hpp"
#include "passes/eliminate_temporaries.hpp"
#include "passes/fuse_parfors.hpp"
#include "passes/forward_destinations.hpp"
#include "passes/fuse_stencils.hpp"
#include "passes/hoist_allocations.hpp"
#include "passes/hoist_invariants.hpp"
#include "passes/insert_bounds_checks.hpp"
#include "passes/lower_array_ops.hpp"
#include "passes/lower_stencils.hpp"
#include "passes/offload.hpp"
#include "passes/partition_loops.hpp"
#include "passes/plan_lanes.hpp"
#include "passes/plan_splits.hpp"
#include "passes/recompute_temporaries.hpp"
#include "passes/report.hpp"
#include "passes/reuse_buffers.hpp"
#include "passes/reuse_reductions.hpp"
#include "passes/simplify.hpp"
#include "passes/spread_loops.hpp"
#include "passes/tile_products.hpp"
#include "passes/two_way_products.hpp"

namespace kiln::passes {

const std::vector<Pass>& pipeline() {
  // Never destroyed: a kernel may be compiled while the process exits (docs/architecture.md, "Exit").
  static const std::vector<Pass>& passes = *new std::vector<Pass>{
      // prange scalar writes -> reductions, or TraceError
      {"detect_reductions", detect_reductions, Topic::reductions},
      // `o(all) = <new array>`: the statements that fill the new array fill o (a scan's passes)
      {"forward_destinations", forward_destinations, Topic::allocations},
      // bounds-checked mode: a check before each element access the user wrote, before lowering adds the
      // accesses of array operations (which index their own spaces) and before fusion and hoisting see them
      {"insert_bounds_checks", insert_bounds_checks, Topic::other, /*boundscheck_only=*/true},
      // device targets: two reductions of one matrix in opposite directions (bicg's r^T A and A p) -> one pass
      // over the matrix in tiles, before lowering gives each its own pass. Not on host targets: for matrices of
      // up to 31744 columns fuse_parfors' prefix fusion already puts the column sums into the loop over each row
      // (two_way_products.hpp says what is left for wider ones).
      {"two_way_products", two_way_products, Topic::fusion, /*boundscheck_only=*/false, /*host_only=*/false, /*device_only=*/true},
      {"lower_array_ops", lower_array_ops},  // array-level statements -> parfors over their index spaces
      // host targets: products written as i-k-j loop nests -> register tiles (as lower_array_ops does for
      // kiln::dot), before fusion or hoisting change the nest's shape
      {"tile_products", tile_products, Topic::other, /*boundscheck_only=*/false, /*host_only=*/true},
      {"array_analysis", array_analysis},    // equal extents made syntactically equal; shape checks proven
      // pointwise maps around a stencil folded into it (a consumer) or recomputed per read (a producer)
      {"fuse_stencils", fuse_stencils, Topic::fusion},
      // stencils -> an interior parfor with plain loads + border slabs, before the loop passes see them
      {"lower_stencils", lower_stencils},
      // Loop passes (passes/loop_analysis.hpp). Nests collapse first so that they can fuse with other n-d
      // parfors. Temporaries become scalars only once fusion has put their producer and consumer in one
      // body, and buffers are reused among the allocations that remain. LICM runs after fusion because
      // its new variables would make the equal subscripts of two parfors differ; allocations whose
      // extents it made invariant are hoisted last.
      {"collapse_parfors", collapse_parfors, Topic::collapse},
      {"fuse_parfors", fuse_parfors, Topic::fusion},
      // a cheap pointwise temporary that fusion left between loops is recomputed where it is read
      {"recompute_temporaries", recompute_temporaries, Topic::allocations},
      {"eliminate_temporaries", eliminate_temporaries, Topic::allocations},
      // a reduction that repeats one already complete (var's and std's sums of one row) takes its value: once
      // fusion has put them side by side and the statistics they feed are scalars
      {"reuse_reductions", reuse_reductions, Topic::reductions},
      {"reuse_buffers", reuse_buffers, Topic::allocations},
      {"hoist_invariants", hoist_invariants, Topic::hoisting},
      {"hoist_allocations", hoist_allocations, Topic::allocations},
      // host targets: a loop whose body tests its index (a stencil's band tests) cut into loops that test
      // nothing, after fusion has put a stencil's rows where they run; the CUDA backend keeps the tests
      {"partition_loops", partition_loops, Topic::other, /*boundscheck_only=*/false, /*host_only=*/true},
      // device targets: a parfor that clamps its indices tests once per element whether a clamp is active, so
      // its interior is a stencil of plain offsets the CUDA backend tiles (a loop per band would be a launch)
      {"band_clamps", band_clamps, Topic::other, /*boundscheck_only=*/false, /*host_only=*/false, /*device_only=*/true},
      // fold constants, propagate copies, CSE, remove dead code
      {"simplify", simplify},
      // host targets: which parfors run in vector lanes and why (the IR is unchanged; the CPU backend
      // applies the same rule, ir/lanes.hpp)
      {"plan_lanes", plan_lanes, Topic::other, /*boundscheck_only=*/false, /*host_only=*/true},
      // host targets: which parfors the runtime cuts into pieces of equal work, not equal length, and why (the
      // IR is unchanged; the CPU backend applies the same rule, ir/uneven_work.hpp)
      {"plan_splits", plan_splits, Topic::other, /*boundscheck_only=*/false, /*host_only=*/true},
      // device targets: a launched parfor with few iterations whose loop writes one element per step gets
      // that loop as a dimension (a thread per element instead of a thread walking a row of them)
      {"spread_loops", spread_loops, Topic::other, /*boundscheck_only=*/false, /*host_only=*/false, /*device_only=*/true},
      // device targets: the function splits into host code and device kernels, each parfor outside parfors
      // a launch; last, so that no pass needs to know launches
      {"offload", offload, Topic::other, /*boundscheck_only=*/false, /*host_only=*/false, /*device_only=*/true},
  };
  return passes;
}

namespace {

void dump(const char* stage, const ir::Function& f) {
  std::fprintf(stderr, "=== kiln: %s: IR after %s ===\n%s", f.name.c_str(), stage, ir::to_string(f).c_str());
}

}  // namespace

ir::Function run_pipeline(const ir::Function& traced, PipelineReport* report, const PipelineOptions& opts) {
  if (opts.dump_ir) dump("trace", traced);
  PassContext ctx;
  ctx.halo_reads = opts.halo_reads;
  ctx.device = opts.target == Target::cuda;
  ctx.device_threads = opts.device_threads;
  ir::Function f = traced;
  for (const Pass& p : pipeline()) {
    if (p.boundscheck_only && !opts.boundscheck) continue;
    if (p.host_only && opts.target == Target::cuda) continue;
    if (p.device_only && opts.target != Target::cuda) continue;
    ctx.pass = p.name;
    ctx.topic = p.topic;
    const auto t0 = std::chrono::steady_clock::now();
    f = p.run(f, ctx);
    ir::verify_or_throw(f, std::string("after pass ") + p.name);
    const auto t1 = std::chrono::steady_clock::now();
    if (report) report->timings.push_back({p.name, std::chrono::duration<double, std::micro>(t1 - t0).count()});
    if (opts.dump_ir) dump(p.name, f);
  }
  if (!opts.dot_dir.empty()) write_parfor_dot(opts.dot_dir, f.name, ctx.parfors);
  if (report) {
    report->notes = std::move(ctx.notes);
    report->parfors = std::move(ctx.parfors);
  }
  return f;
}

ir::Function run_pass(const std::string& name, const ir::Function& f, PassContext& ctx) {
  for (const Pass& p : pipeline())
    if (name == p.name) {
      ctx.pass = p.name;
      ctx.topic = p.topic;
      return p.run(f, ctx);
    }
  throw std::out_of_range("no pass named " + name);
}

}  // namespace kiln::passes
