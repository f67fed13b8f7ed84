// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// From a traced kernel to callable code: the pass pipeline, then the backend of the target.
// (The on-disk cache and the GPU backend plug in here.)
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codegen/backend.hpp"
#include "codegen/target_options.hpp"
#include "ir/argument_access.hpp"
#include "ir/stmt.hpp"
#include "kiln/cache.hpp"
#include "kiln/options.hpp"
#include "passes/pipeline.hpp"
#include "runtime/cache/entry.hpp"

namespace kiln::detail {

struct CompiledVariant {
  codegen::CompiledKernel code;
  ir::Function lowered;            ///< the IR after all passes
  passes::PipelineReport report;   ///< pass timings and decisions
  double passes_ms = 0;
  /// What the disk cache stores for this target ("object" for the CPU; see docs/cache.md). Empty: not cached.
  std::vector<cache::Blob> payloads;
};

/// What the options ask of the pass pipeline (bounds-checked mode).
passes::PipelineOptions pipeline_options(const Options& opts);

/// Lowers `traced` through the pipeline and compiles it with the backend of `opts.target`, told `topts`
/// (target_options(opts)). Throws TraceError for user errors found by passes, CompileError/DeviceError for
/// backend failures.
CompiledVariant compile_traced(const ir::Function& traced, const Options& opts, const codegen::TargetOptions& topts);

/// What dispatch needs of a compiled signature, restorable from the disk cache without running passes.
/// Shared: kernels and signatures of this process with the same cache key use one loaded copy, so nothing
/// here may depend on names or source locations (the key ignores them).
struct VariantCode {
  codegen::CompiledKernel code;
  std::uint32_t written = 0;  ///< bit i: the kernel stores to (array) parameter i
  int result_rank = 0;        ///< rank of an array result, 0 otherwise
  std::vector<int> member_ranks;  ///< a tuple result: each member's rank (0: a scalar); empty otherwise
  ir::ArgumentAccess access;  ///< which overlaps of array arguments the kernel could observe (call-time check)
};

/// The lowered IR and what the passes did, in the kernel's own names, for diagnostics.
struct LoweringReport {
  std::string lowered_ir;   ///< the IR after all passes, as text
  std::string pass_report;  ///< passes::report_text: the pass timings line, then the notes by section
  passes::ParforGraph parfors{};  ///< the parfors and their fusion, for the source listing (frontend/source_listing.hpp)
};

struct BuiltVariant {
  std::shared_ptr<const VariantCode> code;
  CompileRecord record;                    ///< where the code came from this time and what it cost
  std::optional<LoweringReport> lowering;  ///< when the passes ran (a miss); else see describe_lowering
};

/// Runs the passes on `traced` only to describe them: diagnostics of code that came from a cache. Pass
/// pipeline_options(opts) of the kernel's options, so that the description is of the code that runs.
LoweringReport describe_lowering(const ir::Function& traced, const passes::PipelineOptions& popts = {});

/// Code for `traced` (traced in `trace_us`): this process's loaded kernels, else the disk cache, else
/// compile_traced (whose result is then stored). Records the compilation in kiln::compile_history() and
/// prints it under KILN_LOG=compile. Throws what compile_traced throws; cache problems are only warnings.
BuiltVariant build_variant(const ir::Function& traced, const Options& opts, double trace_us);

}  // namespace kiln::detail
