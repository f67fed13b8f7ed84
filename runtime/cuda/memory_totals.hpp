// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln's GPU memory summed over the devices it has used, for kiln::allocation_stats (runtime/parallel.cpp). No
// CUDA header: builds without the toolkit define these as zeros (runtime/cuda/unavailable.cpp).
#pragma once

#include <cstdint>

namespace kiln::gpu {

struct MemoryTotals {
  std::int64_t in_use_bytes = 0;
  std::int64_t peak_bytes = 0;  ///< the sum of the devices' peaks
};
MemoryTotals memory_totals() noexcept;
void reset_memory_peaks() noexcept;

}  // namespace kiln::gpu
