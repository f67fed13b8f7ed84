// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A random kiln program: the IR function, how to build its arguments, and how exactly each output must match.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/stmt.hpp"
#include "tools/test_support/buffers.hpp"

namespace kiln::fuzz {

/// How the elements of an array argument are laid out in memory.
using test_support::Layout;

/// How far a compiled or optimized result may be from the reference.
enum class Precision : std::uint8_t {
  Exact,   ///< bitwise (NaN matches NaN whatever its payload)
  Approx,  ///< a few ulps: the value went through a libm function (libm vs libmvec vs constant folding)
};

struct ParamSpec {
  std::vector<std::int64_t> shape;  ///< arrays only
  Layout layout = Layout::RowMajor;
  Precision precision = Precision::Exact;  ///< arrays written by the kernel
  bool integral = false;  ///< floats: fill with small integers (targets of exact array reductions)
};

struct Program {
  ir::Function function;
  std::vector<ParamSpec> params;  ///< parallel to function.params
  Precision result_precision = Precision::Exact;
  int opt_level = 1;
  int threads = 2;  ///< the JIT runs with 1 thread and with this many
};

struct GeneratorOptions {
  /// Include libm functions (exp, sin, pow, ...). Their results are compared with a tolerance and never feed a
  /// comparison, a cast or anything else that would turn an ulp into a different answer.
  bool approximate_functions = true;
  /// Allow extents of a few thousand (more than one reduction block); otherwise at most a few hundred elements.
  bool large_sizes = true;
  /// Include array-level statements (maps, whole-space reductions, stencils with every border mode).
  bool array_operations = true;
};

/// The program for `seed`; the same seed always gives the same program and arguments.
Program generate(std::uint64_t seed, const GeneratorOptions& options = {});

}  // namespace kiln::fuzz
