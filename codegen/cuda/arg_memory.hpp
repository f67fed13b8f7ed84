// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Where the array arguments of a call live. The frontend passes it to a CUDA kernel as argv[nparams] (one
// past the arguments), so that the calling convention of kiln/abi.hpp stays the same for every backend.
#pragma once

#include <cstdint>

namespace kiln::codegen::cuda {

struct ArgMemory {
  std::uint32_t device_arrays = 0;  ///< bit i: argument i is a DeviceArray (a device address, no copies)
  int device = -1;                  ///< the device those arrays live on; -1: none (run on the current device)
};

}  // namespace kiln::codegen::cuda
