// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The interpreter target: the lowered function runs on ir::interpret, which defines kiln's semantics. It
// compiles nothing, so nothing of it is cached.
#include <memory>

#include "codegen/uncached_backend.hpp"
#include "ir/interpreter.hpp"

namespace kiln::codegen {
namespace {

class InterpreterBackend final : public UncachedBackend {
 public:
  InterpreterBackend() : UncachedBackend("interpreter") {}

  CompiledKernel compile(const ir::Function& f, const TargetOptions&, std::vector<cache::Blob>&) const override {
    CompiledKernel code;
    auto fn = std::make_shared<const ir::Function>(f);
    code.call = [fn](void* const* argv, void* result, KernelStatus*) {
      ir::interpret(*fn, argv, result);
      return 0;
    };
    return code;
  }
};

}  // namespace

const Backend& detail::interpreter_backend() {
  // Never destroyed: a kernel may be compiled while the process exits (docs/architecture.md, "Exit").
  static const Backend& backend = *new InterpreterBackend();
  return backend;
}

}  // namespace kiln::codegen
