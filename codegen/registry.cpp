// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The registry of backends: one per kiln::Target (codegen/backend.hpp).
#include "codegen/backend.hpp"

namespace kiln::codegen {

const Backend& backend_for(Target t) {
  switch (t) {
    case Target::cpu: return detail::cpu_backend();
    case Target::cuda: return detail::cuda_backend();
    case Target::interpreter: break;
  }
  return detail::interpreter_backend();
}

}  // namespace kiln::codegen
