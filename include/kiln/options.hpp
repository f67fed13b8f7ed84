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

/// Per-kernel options. Everything except arg_names is part of the compiled kernel's signature, so
/// kernels compiled with different options coexist.
struct Options {
  Target target = default_target();
  int opt_level = 3;        ///< 0..3
  bool fast_math = false;   ///< let the compiler reassociate and contract all float math (reductions always may)
  bool keep_llvm_ir = false;  ///< keep the optimized LLVM IR for Kernel::llvm_ir() (also KILN_DUMP_LLVM=1)
  /// Names of the lambda's parameters for error messages. When empty, kiln reads them from the source of
  /// the lambda passed to kiln::jit if it can, else calls them arg0, arg1, ...
  std::vector<std::string> arg_names;

  Options& on(Target t) {
    target = t;
    return *this;
  }
};

}  // namespace kiln
