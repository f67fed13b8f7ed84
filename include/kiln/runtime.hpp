// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Process-wide runtime settings.
#pragma once

#include <cstdint>

namespace kiln {

/// Threads used by parfors on the CPU: KILN_NUM_THREADS if set, else OpenMP's default (OMP_NUM_THREADS or
/// the number of cores).
int num_threads();
/// Overrides the number of threads for all later kernel calls (n >= 1).
void set_num_threads(int n);

/// Memory that compiled CPU kernels take through the runtime (their arrays and the private copies of array
/// reductions), in bytes as the allocator reports them (malloc_usable_size), for measuring what a kernel
/// needs beyond its inputs. An array a kernel returns stops counting when the kernel hands it to the
/// caller, so after a call `in_use_bytes` is back where it was; the peak still saw it.
struct AllocationStats {
  std::int64_t in_use_bytes = 0;   ///< allocated by kernels and neither freed nor returned yet
  std::int64_t peak_bytes = 0;     ///< the most in use at once since the last reset_allocation_peak()
  std::uint64_t allocations = 0;   ///< allocations made, ever
  /// GPU memory kiln holds on every device it has used (DeviceArrays, call results and temporaries; per device
  /// and with the pool's size: kiln::cuda::memory_stats), and the sum of the devices' peaks.
  std::int64_t device_in_use_bytes = 0;
  std::int64_t device_peak_bytes = 0;
};
AllocationStats allocation_stats();
/// Starts a new high-water mark at the current in_use_bytes (and on every device).
void reset_allocation_peak();

/// Whether this build has the CPU (LLVM) backend.
bool has_cpu_backend();

}  // namespace kiln
