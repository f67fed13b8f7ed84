// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CPU target in a kiln built without LLVM (KILN_ENABLE_LLVM=OFF): every compilation reports why.
#include "codegen/uncached_backend.hpp"

namespace kiln::codegen {

const Backend& detail::cpu_backend() {
  // Never destroyed: a kernel may be compiled while the process exits (docs/architecture.md, "Exit").
  static const Backend& backend = *new UnavailableBackend("cpu", [](const std::string& kernel) {
    return std::make_exception_ptr(Error("kernel '" + kernel + "': the CPU target is unavailable: this kiln was built "
                                         "without LLVM (KILN_ENABLE_LLVM=OFF); use kiln::Target::interpreter"));
  });
  return backend;
}

}  // namespace kiln::codegen
