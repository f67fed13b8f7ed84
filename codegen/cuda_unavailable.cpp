// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CUDA target in a kiln built without the CUDA toolkit headers: every compilation reports why.
#include "codegen/uncached_backend.hpp"

namespace kiln::codegen {

const Backend& detail::cuda_backend() {
  // Never destroyed: a kernel may be compiled while the process exits (docs/architecture.md, "Exit").
  static const Backend& backend = *new UnavailableBackend("cuda", [](const std::string& kernel) {
    return std::make_exception_ptr(
        DeviceError("no CUDA driver/GPU: kernel '" + kernel + "': this kiln was built without the CUDA toolkit headers"));
  });
  return backend;
}

}  // namespace kiln::codegen
