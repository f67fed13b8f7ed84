// The pass pipeline: the one place that lists kiln's passes in order.
#pragma once

#include <string>
#include <vector>

#include "passes/pass.hpp"
#include "passes/report.hpp"

namespace kiln::passes {

/// What kiln::Options asks of the passes (the rest of the options concern code generation).
struct PipelineOptions {
  bool boundscheck = false;  ///< insert_bounds_checks runs: every element access of the kernel is checked
};

/// The passes, in the order they run.
const std::vector<Pass>& pipeline();

/// Runs every pass, verifying the IR after each one; with KILN_DUMP_IR set, prints the IR before the
/// first pass and after each pass to stderr; with KILN_DUMP_DOT=dir, writes the fused parfor graph to
/// dir/<kernel>.dot (passes/report.hpp). Throws TraceError for user errors a pass finds (e.g. a racy
/// write in a prange) and ir::IRError if a pass produced malformed IR. Passes marked boundscheck_only run
/// only when `opts.boundscheck` is set.
ir::Function run_pipeline(const ir::Function& traced, PipelineReport* report = nullptr, const PipelineOptions& opts = {});

/// Runs one named pass (for tests); throws std::out_of_range for an unknown name.
ir::Function run_pass(const std::string& name, const ir::Function& f, PassContext& ctx);

}  // namespace kiln::passes
