// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The pass pipeline: the one place that lists kiln's passes in order.
#pragma once

#include <string>
#include <vector>

#include "kiln/options.hpp"
#include "passes/pass.hpp"
#include "passes/report.hpp"

namespace kiln::passes {

/// What the passes are asked: by kiln::Options (the rest of the options concern code generation) and by
/// the dump switches, which the frontend reads from the environment (frontend/settings.hpp).
struct PipelineOptions {
  bool boundscheck = false;  ///< insert_bounds_checks runs: every element access of the kernel is checked
  Target target = Target::cpu;  ///< passes marked host_only run unless it is cuda, device_only ones only then
  bool dump_ir = false;      ///< print the IR before the first pass and after each pass to stderr
  std::string dot_dir{};     ///< not empty: write the fused parfor graph to dot_dir/<kernel>.dot
  bool halo_reads = false;   ///< stencils read beyond their arrays (kiln::Options::halo_reads): PassContext
  /// Device targets: the threads that keep the device busy (pass.hpp, kDefaultDeviceThreads): PassContext
  std::int64_t device_threads = kDefaultDeviceThreads;
};

/// The passes, in the order they run.
const std::vector<Pass>& pipeline();

/// Runs every pass, verifying the IR after each one, and dumps what `opts` asks for (the graph through
/// passes/report.hpp). Throws TraceError for user errors a pass finds (e.g. a racy
/// write in a prange) and ir::IRError if a pass produced malformed IR. Passes marked boundscheck_only run
/// only when `opts.boundscheck` is set, those marked host_only only when `opts.target` is not cuda, those marked
/// device_only only when it is.
ir::Function run_pipeline(const ir::Function& traced, PipelineReport* report = nullptr, const PipelineOptions& opts = {});

/// Runs one named pass (for tests); throws std::out_of_range for an unknown name.
ir::Function run_pass(const std::string& name, const ir::Function& f, PassContext& ctx);

}  // namespace kiln::passes
