// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What every backend produces (an entry point with kiln's calling convention, kiln/abi.hpp) and the one
// interface through which the driver (frontend/compiler.cpp) uses a target: compile a lowered function, load
// code from a disk-cache entry, and say what the cache must know about the code. Each target's .cpp
// implements the interface; builds without LLVM or CUDA link one that reports the target unavailable.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/stmt.hpp"
#include "kiln/abi.hpp"
#include "kiln/options.hpp"

namespace kiln::cache {
struct Blob;
struct Entry;
}  // namespace kiln::cache

namespace kiln::codegen {

/// Options of every target that change generated code. All of them are part of a kernel's cache key.
/// Target-specific settings are in TargetOptions (codegen/target_options.hpp).
struct CodegenOptions {
  int opt_level = 3;         ///< 0..3
  /// Allow reassociation, contraction, reciprocals, approximate functions and ignoring the sign of zero
  /// everywhere (reductions always reassociate). NaN and infinity semantics are kept, so isnan and
  /// NaN-propagating min/max still work.
  bool fast_math = false;
};

struct TargetOptions;

/// A loaded, callable kernel.
struct CompiledKernel {
  KernelEntry entry = nullptr;  ///< plain function pointer when the backend has one (the fast path)
  std::function<std::int32_t(void* const*, void*, KernelStatus*)> call;  ///< otherwise this
  std::shared_ptr<void> keepalive;  ///< owns the code (JIT dylib, module, ...)
  std::string llvm_ir;              ///< optimized LLVM IR if requested
  double codegen_ms = 0;            ///< IR emission + optimization + machine code generation
  double codegen_cpu_ms = 0;        ///< its CPU time, summed over the compiling threads (0 where not measured)
  double codegen_cpu_longest_ms = 0;  ///< compiled in parts: the CPU time of the longest part's thread, else 0
  double load_us = 0;               ///< linking/loading the machine code
  /// What the target decided per kernel (the CUDA launch model's plans and latest launches), for diagnostics;
  /// empty where the target has nothing to add.
  std::function<std::string()> describe;
  /// A repeated asynchronous call without the general path (the CUDA target's launch plans,
  /// codegen/cuda/launch_plan.hpp): args as for `call` (argv[nparams] the call's placement); returns true when it
  /// ran the call, false, having done nothing, when the general path must. Empty where the target has none.
  std::function<bool(void* const*, void*)> repeat;

  std::int32_t operator()(void* const* args, void* result, KernelStatus* status) const {
    return entry ? entry(args, result, status) : call(args, result, status);
  }
};

/// What the disk cache must know about a target's code besides the kernel's IR and the CodegenOptions: the
/// machine it is for and the versions of the tools that generate it (all hashed into the key).
struct CacheIdentity {
  std::string description, llvm_version, nvrtc_version;
  /// The stored code names its functions after the kernel (CUDA's `<kernel>_k0`, which a load checks and
  /// profilers show), so the kernel's name is part of the key.
  bool code_names_kernel = false;
  /// The stored code names arrays in its run-time messages (CUDA's host function: an element access out of
  /// range, an allocation that fails), so the kernel's array names are part of the key.
  bool code_names_arrays = false;
};

class Backend {
 public:
  virtual ~Backend() = default;

  /// The cache identity of code compiled with `opts`, or nullopt when this target's code is not cached
  /// (the interpreter compiles nothing; a target that cannot compile here has nothing to store).
  virtual std::optional<CacheIdentity> cache_identity(const TargetOptions& opts) const = 0;

  /// Compiles and loads `lowered` (the pipeline's output), appending what the disk cache stores for it to
  /// `payloads` (nothing: the code is not cached). Throws CompileError/DeviceError for backend failures.
  virtual CompiledKernel compile(const ir::Function& lowered, const TargetOptions& opts,
                                 std::vector<cache::Blob>& payloads) const = 0;

  /// Loads the code of the disk-cache entry `e` for the kernel named `kernel`, running no pass: what the
  /// code needs is in the entry. Throws CacheError (or another kiln::Error) if the entry is unusable;
  /// DeviceError when the entry may be fine but this process has no GPU to load it on.
  virtual CompiledKernel load(const cache::Entry& e, std::string_view kernel, const TargetOptions& opts) const = 0;
};

/// The backend of `t`. Backends are stateless and live for the whole process.
const Backend& backend_for(Target t);

namespace detail {
// One per target, defined by the target's backend .cpp, or in builds without its toolkit by
// codegen/<target>_unavailable.cpp. backend_for() is the registry over them.
const Backend& cpu_backend();
const Backend& cuda_backend();
const Backend& interpreter_backend();
}  // namespace detail

}  // namespace kiln::codegen
