// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CPU backend: kiln IR -> LLVM IR -> optimized machine code for the host, linked by LLVM JITLink.
// This header is LLVM-free; LLVM stays inside codegen/llvm/*.cpp.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "codegen/backend.hpp"
#include "codegen/llvm/cpu_options.hpp"
#include "ir/stmt.hpp"

namespace kiln::codegen::cpu {

/// The host as code generation with `opts` sees it: target triple, CPU name, feature string (with
/// opts.features) and LLVM options. Part of cache keys.
std::string host_target_description(const CpuOptions& opts = {});

/// Relocatable objects for the host, together exporting `kiln_entry` with kiln's calling convention.
struct ObjectCode {
  std::string object;    ///< ELF relocatable bytes; the object defining kiln_entry
  /// The kernel's other parts when its module was compiled in parts at the same time (partition.hpp),
  /// linked with `object`; empty otherwise.
  std::vector<std::string> more_objects;
  std::string llvm_ir;   ///< optimized LLVM IR, if CpuOptions::keep_llvm_ir
  double codegen_ms = 0; ///< emission + optimization + machine-code generation
  /// The CPU time of the same, summed over the threads that compiled the kernel's parts: unlike codegen_ms,
  /// it does not count waiting for a core on a busy machine (KILN_LOG=compile's codegen_cpu).
  double codegen_cpu_ms = 0;
  /// Compiled in parts: the largest CPU time of one part's thread (what the wall time is when each part has
  /// a core of its own); 0 when compiled whole.
  double codegen_cpu_longest_ms = 0;
  /// What code generation decided for this kernel, for its diagnostics (entry_level.hpp); kept in the disk
  /// cache's entry with the object.
  std::string notes;
};

/// Emits, optimizes (new pass manager, O0..O3, host CPU and features) and compiles `f`.
/// Throws CompileError carrying the LLVM IR if the LLVM verifier rejects the module.
ObjectCode compile_to_object(const ir::Function& f, const CodegenOptions& opts, const CpuOptions& cpu = {});

/// Links the objects produced by compile_to_object into this process, in memory of their own that is
/// released when the returned kernel's keepalive is dropped. Throws CompileError on link failure.
CompiledKernel load_object(const std::string& object, std::string_view debug_name,
                           const std::vector<std::string>& more_objects = {});

/// compile_to_object followed by load_object.
CompiledKernel compile(const ir::Function& f, const CodegenOptions& opts, const CpuOptions& cpu = {});

}  // namespace kiln::codegen::cpu
