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

/// What a part costs besides its functions, in bytes of their CUDA C: NVRTC spent 65 ms of CPU on the
/// prelude with one empty kernel, and 17-40 us per byte of a function's text (covariance's nine functions,
/// 0.9-13 KB, each alone with the prelude; the 2-core VM, CUDA 13.0).
inline constexpr std::size_t kPartFixedBytes = 3000;

/// How `program`'s functions are dealt into parts for `threads` threads (>= 1).
struct PartPlan {
  /// Indices into Program::functions, in the program's order within each part; one part: the whole source.
  std::vector<std::vector<std::size_t>> parts;
  std::size_t longest = 0;  ///< the largest part's cost in bytes (kPartFixedBytes included)
  std::size_t whole = 0;    ///< the cost of one program of every function
};

/// The fewest parts, up to `threads` and the number of functions, whose largest part (largest function first
/// into the smallest part) costs within 10 % of the least reachable: a part more costs kPartFixedBytes of CPU
/// again for the prelude, so it must shorten the longest part to be worth it.
PartPlan plan_parts(const Program& program, int threads);

/// The source of part `p` of `plan`: the prelude and the part's functions (the whole source for one part).
std::string part_source(const Program& program, const PartPlan& plan, std::size_t p);

/// Compiles `program` for `arch` (compile_source's options) in the parts plan_parts gives for `threads`
/// (0: the hardware threads idle now, codegen/compile_threads.hpp): part 0 on this thread, the others on threads
/// of their own. The result's `more` holds parts 1.., `notes` says how and why. A failure of any part throws
/// its CompileError (naming `kernel`), the first part's first.
Binary compile_program(const Program& program, const std::string& kernel, const std::string& arch, const CodegenOptions& opts,
                       bool lineinfo, int threads);

}  // namespace kiln::codegen::cuda
