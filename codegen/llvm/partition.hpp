// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Splitting one kernel's LLVM module into parts that are optimized and compiled at the same time, each on a
// thread of its own with an LLVMContext of its own (a context is not thread-safe), and linked together into
// one kernel by the JIT (issue #15, compile latency). A kernel's parfor bodies are outlined functions that
// only the runtime calls, through addresses the entry passes it, so they optimize alone as well as
// together. On the 2-core znver4 VM over kiln-suite --smoke and the examples (CPU time per thread, median
// of 3 runs), the longest part of the heaviest kernels: 2mm 92 -> 49 ms, correlation 91 -> 56, row_stats
// 90 -> 49, heat3d 61 -> 37, conv5x5_into 77 -> 70 (one function holds most of it); total CPU rises ~8 %
// (bitcode round trip, a target machine per thread, module-level passes run per part). On a machine whose
// other cores are busy the parts take turns and the wall time is the total's.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace llvm {
class Module;
}  // namespace llvm

namespace kiln::codegen::cpu::detail {

/// How many parts `m` is worth compiling in, given `threads` threads (>= 1): 1 unless the module defines
/// several functions whose instructions add up to kMinSplitInstructions and the largest part would still
/// hold at least kMinPartInstructions. Partitioning costs a bitcode round trip and a target machine per
/// extra part (about 1 ms together on the 2-core VM), which a kernel of a few small functions does not
/// win back. The sizes are weighted instruction counts before optimization (partition.cpp), which the
/// vectorizer multiplies: on the 2-core znver5 VM (kiln-suite --smoke and the examples, codegen CPU of the
/// whole module) 150-160 give pi and dot 16 ms, while 390-580 give 16-31 ms (softmax 393: 31 ms,
/// normalize_clip_sum 479: 28, jacobi 578: 24, smooth 411: 19), about as much as the 900-1200 of the kernels
/// split before (jacobi_2d 902: 24 ms, fdtd_2d 1227: 37), so modules from 300 are split.
int partition_count(const llvm::Module& m, int threads);

inline constexpr std::size_t kMinSplitInstructions = 300;
inline constexpr std::size_t kMinPartInstructions = 150;

/// The functions of `m` dealt into `parts` groups of about equal instruction count (largest function first,
/// each to the lightest group), `kiln_entry` in part 0; each part as LLVM bitcode of a module that defines
/// its group's functions, declares the others and has its own copy of every constant global. Functions
/// become external (default visibility, not DSO-local) so the parts reference one another through the
/// linker's GOT and PLT stubs, wherever the JIT places them. `m` itself is changed that way too. Requires
/// that `m` has no global variable that is written (kiln's are constants: messages, reduction identities).
std::vector<std::string> partition_module(llvm::Module& m, int parts);

}  // namespace kiln::codegen::cpu::detail
