// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Compilation targets and options.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

enum class Target : std::uint8_t {
  cpu,          ///< native code through LLVM ORC, parfors on an OpenMP team
  cuda,         ///< CUDA C through NVRTC, launched with the driver API
  interpreter,  ///< kiln's IR interpreter: slow, the reference semantics
};

std::string_view name_of(Target t);

/// The process default target: KILN_TARGET=cpu|cuda|interpreter, else cpu (or interpreter in a build
/// without LLVM).
Target default_target();

/// KILN_BOUNDSCHECK=1: the default of Options::boundscheck (read once, in frontend/options.cpp).
bool default_boundscheck();
/// KILN_CHECK=1: the default of Options::check (read once, in frontend/options.cpp).
bool default_check();

/// Per-kernel options. Everything except arg_names is part of the compiled kernel's signature, so
/// kernels compiled with different options coexist.
struct Options {
  Target target = default_target();
  int opt_level = 3;        ///< 0..3
  bool fast_math = false;   ///< let the compiler reassociate and contract all float math (reductions always may)
  bool keep_llvm_ir = false;  ///< keep the optimized LLVM IR for Kernel::llvm_ir() (also KILN_DUMP_LLVM=1)
  /// Compiled code checks every array index against its extent and throws kiln::IndexError naming the
  /// kernel, the array, the index and the extent (the interpreter always checks). Part of the cache key.
  bool boundscheck = default_boundscheck();
  /// Check mode: every call traces the lambda again and throws kiln::TraceError, naming the kernel, when the
  /// IR differs from the compiled one (e.g. a `[&]`-captured host value changed since the first call).
  /// Costs a trace per call; for finding stale captures, not for production runs.
  bool check = default_check();
  /// Halo reads, for the distributed layer (kiln/distributed.hpp): stencils compute every element of the
  /// arrays they are given and read their neighbours from the memory around them (the ghost layers of a
  /// rank's block) instead of applying the border rule; the caller fills that memory, the border rule
  /// included at the global edges. No minimum extent applies. Host targets (cpu) only: the interpreter
  /// checks every read against the arrays' extents. Part of the signature and the cache key.
  bool halo_reads = false;
  /// Names of the lambda's parameters for error messages. When empty, kiln reads them from the source of
  /// the lambda passed to kiln::jit if it can, else calls them arg0, arg1, ...
  std::vector<std::string> arg_names;

  Options& on(Target t) {
    target = t;
    return *this;
  }
};

}  // namespace kiln
