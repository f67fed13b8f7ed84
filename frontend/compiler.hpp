// From a traced kernel to callable code: the pass pipeline, then the backend of the target.
// (The on-disk cache and the GPU backend plug in here.)
#pragma once

#include <string>

#include "codegen/backend.hpp"
#include "ir/stmt.hpp"
#include "kiln/options.hpp"
#include "passes/pipeline.hpp"

namespace kiln::detail {

struct CompiledVariant {
  codegen::CompiledKernel code;
  ir::Function lowered;            ///< the IR after all passes
  passes::PipelineReport report;   ///< pass timings and decisions
  double passes_ms = 0;
};

/// Lowers `traced` through the pipeline and compiles it for `opts.target`. Throws TraceError for user
/// errors found by passes, CompileError/DeviceError for backend failures.
CompiledVariant compile_traced(const ir::Function& traced, const Options& opts);

}  // namespace kiln::detail
