// What every backend produces: an entry point with kiln's calling convention (kiln/abi.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "kiln/abi.hpp"

namespace kiln::codegen {

/// Options that change generated code. All of them are part of a kernel's cache key.
struct CodegenOptions {
  int opt_level = 3;         ///< 0..3
  /// Allow reassociation, contraction, reciprocals, approximate functions and ignoring the sign of zero
  /// everywhere (reductions always reassociate). NaN and infinity semantics are kept, so isnan and
  /// NaN-propagating min/max still work.
  bool fast_math = false;
  bool keep_llvm_ir = false; ///< keep the optimized LLVM IR text in the result (for tests and dumps)
};

/// A loaded, callable kernel.
struct CompiledKernel {
  KernelEntry entry = nullptr;  ///< plain function pointer when the backend has one (the fast path)
  std::function<std::int32_t(void* const*, void*, KernelStatus*)> call;  ///< otherwise this
  std::shared_ptr<void> keepalive;  ///< owns the code (JIT dylib, module, ...)
  std::string llvm_ir;              ///< optimized LLVM IR if requested
  double codegen_ms = 0;            ///< IR emission + optimization + machine code generation
  double load_us = 0;               ///< linking/loading the machine code

  std::int32_t operator()(void* const* args, void* result, KernelStatus* status) const {
    return entry ? entry(args, result, status) : call(args, result, status);
  }
};

}  // namespace kiln::codegen
