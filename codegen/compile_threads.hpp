// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Compiling one kernel's code in parts at the same time (codegen/llvm/partition.hpp, codegen/cuda/compile_parts.hpp):
// how many hardware threads are idle now, and the CPU time a compiling thread took.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <vector>

namespace kiln::codegen {

/// Hardware threads with nothing to run right now: the hardware threads this process may use (Linux: its
/// CPU affinity) less the runnable threads of other processes (/proc/stat's procs_running less this
/// process's runnable threads, /proc/self/task/*/stat), at least 1; elsewhere all of them.
/// The least of 4 readings 0.4 ms apart (about 1.2 ms: ask only where it decides something).
int idle_hardware_threads();

/// The calling thread's CPU time so far, in milliseconds (0 where the clock is missing): compile times that
/// do not count waiting for a core, so that they can be compared on a busy machine.
double thread_cpu_ms();

/// Runs `part(p)` for every p in [0, parts): part 0 on the calling thread, the others on threads of their own
/// (on the calling thread too where no thread can be had). Returns each part's exception, null where the part
/// finished: what a failed part means is the caller's (the CPU backend rethrows it; CUDA compiles the program
/// whole instead).
std::vector<std::exception_ptr> run_parts(std::size_t parts, const std::function<void(std::size_t)>& part);

}  // namespace kiln::codegen
