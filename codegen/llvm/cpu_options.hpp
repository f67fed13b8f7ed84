// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Settings of the CPU (LLVM) backend that only it understands. LLVM-free: the driver builds them.
#pragma once

#include <string>

namespace kiln::codegen::cpu {

struct CpuOptions {
  bool keep_llvm_ir = false;  ///< keep the optimized LLVM IR text in the result (for tests and dumps)
  bool dump_llvm = false;     ///< print the optimized LLVM IR to stderr (KILN_DUMP_LLVM)
  /// Developer knobs, for measuring code-generation choices on a given CPU (both are part of the cache key):
  /// `features` is appended to the host's feature string (KILN_CPU_FEATURES, e.g. "-prefer-256-bit");
  /// `llvm_options` holds LLVM command-line options (KILN_LLVM_OPTIONS, e.g. "-force-vector-interleave=1"),
  /// which LLVM keeps process-wide: the first compilation's apply to the whole process.
  std::string features;
  std::string llvm_options;
  /// Parfor bodies with an in-order inner loop run in vector lanes (ir/lanes.hpp); off (KILN_CPU_LANES=0)
  /// leaves them to LLVM's loop vectorizer, for comparisons. Part of the cache key.
  bool lanes = true;
  /// Threads one kernel's code generation may use (KILN_COMPILE_THREADS): a kernel with enough code is
  /// split into parts compiled at the same time (codegen/llvm/partition.hpp). 0: the host's hardware
  /// threads that are idle when it starts; 1: one part. Not part of the cache key: the parts are the same
  /// code, linked together.
  int compile_threads = 0;
};

}  // namespace kiln::codegen::cpu
