// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A program's __global__ functions compiled as several NVRTC programs at the same time. NVRTC compiles one
// program on one thread, and its time grows with the functions in it: a program of 9-12 functions (covariance,
// correlation, row_stats, 2mm of the public suite: every launch's kernel, its fold, alias and tiles variants)
// took 0.5-0.9 s of CPU on the 2-core VM where one of 1-4 functions took 0.17-0.28 s. The functions use nothing
// of one another, only the prelude (program.hpp, Program::functions), so they are dealt into parts, each the
// prelude and its functions, compiled on threads of their own (NVRTC is thread-safe across programs) and loaded
// as one module each (runtime/cuda/module.hpp).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "codegen/cuda/nvrtc.hpp"
#include "codegen/cuda/program.hpp"

namespace kiln::codegen::cuda {

/// What a program costs besides its functions, in bytes of their CUDA C: the prelude, NVRTC's builtin header and
/// ptxas's setup. On the H100 machine (16 cores, CUDA 13.0, NVRTC's compute cache off) a program of one function
/// compiled in 131-132 ms (gesummv, nbody: 2.8 and 4.6 KB of function text) and covariance's nine (23 KB) in
/// 451 ms: about 16 us per byte and 5.5 KB's worth per program. (On the 2-core VM: 65 ms for the prelude with
/// an empty kernel, 17-40 us per byte.)
inline constexpr std::size_t kPartFixedBytes = 6000;
/// A program is split only where the estimate of its longest part is at most this fraction of the whole: in the
/// H100 run (kPartFixedBytes 3000, no least gain), splits estimated to save less than a fifth took as long or
/// longer (syrk 296 -> 335 ms, hist2d 258 -> 257, gemm 363 -> 364), those estimated to save more took 12-43 %
/// less (covariance 451 -> 323 ms, correlation 614 -> 463, row_stats 414 -> 279, 2mm 745 -> 426).
inline constexpr double kWorthSplitting = 0.8;

/// How `program`'s functions are dealt into parts for `threads` threads (>= 1).
struct PartPlan {
  /// Indices into Program::functions, in the program's order within each part; one part: the whole source.
  std::vector<std::vector<std::size_t>> parts;
  std::size_t longest = 0;  ///< the largest part's cost in bytes (kPartFixedBytes included)
  std::size_t whole = 0;    ///< the cost of one program of every function
};

/// The fewest parts, up to `threads` and the number of functions, whose largest part (largest function first
/// into the smallest part) costs within 10 % of the least reachable: a part more costs kPartFixedBytes of CPU
/// again, so it must shorten the longest part to be worth it. One part unless that estimate is at most
/// kWorthSplitting of the whole program's.
PartPlan plan_parts(const Program& program, int threads);

/// The source of part `p` of `plan`: the prelude and the part's functions (the whole source for one part).
std::string part_source(const Program& program, const PartPlan& plan, std::size_t p);

/// The threads ptxas may use for a part of `functions` functions when `threads` are shared by `parts` parts:
/// its share, at most one a function (ptxas's `--split-compile` optimizes each function on a thread of its
/// own), at least 1.
int ptxas_threads(std::size_t functions, int threads, std::size_t parts);

/// The NVRTC options of one of kiln's programs besides compile_source's own: `--ptxas-options=--split-compile=N`
/// for `ptxas_threads` > 1 (each function's machine code is the same bytes as on one thread, only sooner);
/// `--minimal` when `minimal` (NVRTC leaves out the builtin declarations of textures, surfaces and the device
/// runtime, which kiln's CUDA C never uses: the same PTX, a shorter front end; cuda_compile_parts_test compares
/// the PTX of every kernel kind); `-Ofast-compile=min|mid|max` for `fast_compile` 1-3 (CudaOptions::fast_compile).
std::vector<std::string> program_flags(int ptxas_threads, bool minimal, int fast_compile);

/// Compiles `program` for `arch` (compile_source's options) in the parts plan_parts gives for `threads`
/// (0: the hardware threads idle now, codegen/compile_threads.hpp): part 0 on this thread, the others on threads
/// of their own, each part's ptxas on its share of the threads (ptxas_threads), with `--minimal` (a part that does
/// not compile with it is compiled again without: the notes say so). The result's `more` holds parts
/// 1.., `notes` says how and why. Where a part fails to compile alone, the whole program is compiled instead
/// (its notes say so); a CompileError (naming `kernel`) is the whole program's. `fast_compile`: as
/// compile_source's (CudaOptions::fast_compile).
Binary compile_program(const Program& program, const std::string& kernel, const std::string& arch, const CodegenOptions& opts,
                       bool lineinfo, int threads, int fast_compile = 0);

}  // namespace kiln::codegen::cuda
