// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Compiling one kernel's code in parts at the same time (codegen/llvm/partition.hpp, codegen/cuda/compile_parts.hpp):
// how many hardware threads are idle now, and the CPU time a compiling thread took.
#pragma once

namespace kiln::codegen {

/// Hardware threads with nothing to run right now: the hardware threads this process may use (Linux: its
/// CPU affinity) less the runnable threads of other processes (/proc/stat's procs_running less this
/// process's runnable threads, /proc/self/task/*/stat), at least 1; elsewhere all of them.
/// The least of 4 readings 0.4 ms apart (about 1.2 ms: ask only where it decides something).
int idle_hardware_threads();

/// The calling thread's CPU time so far, in milliseconds (0 where the clock is missing): compile times that
/// do not count waiting for a core, so that they can be compared on a busy machine.
double thread_cpu_ms();

}  // namespace kiln::codegen
