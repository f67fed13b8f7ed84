// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Backends whose code the disk cache does not hold: the interpreter (it compiles nothing) and, in a build
// without LLVM or the CUDA headers, the target the build lacks.
#pragma once

#include <exception>
#include <functional>
#include <string>
#include <utility>

#include "codegen/backend.hpp"
#include "kiln/error.hpp"

namespace kiln::codegen {

class UncachedBackend : public Backend {
 public:
  explicit UncachedBackend(std::string target) : target_(std::move(target)) {}

  std::optional<CacheIdentity> cache_identity(const TargetOptions&) const override { return std::nullopt; }

  /// Never asked for by the driver (nothing was stored), so reaching it means an entry of another target.
  CompiledKernel load(const cache::Entry&, std::string_view, const TargetOptions&) const override {
    throw CacheError("no loader for target " + target_);
  }

 private:
  std::string target_;
};

/// A target this build lacks: every compilation throws the error `why` makes for the kernel's name.
class UnavailableBackend final : public UncachedBackend {
 public:
  using Why = std::function<std::exception_ptr(const std::string& kernel)>;

  UnavailableBackend(std::string target, Why why) : UncachedBackend(std::move(target)), why_(std::move(why)) {}

  CompiledKernel compile(const ir::Function& f, const TargetOptions&, std::vector<cache::Blob>&) const override {
    std::rethrow_exception(why_(f.name));
  }

 private:
  Why why_;
};

}  // namespace kiln::codegen
