// Process-wide runtime settings.
#pragma once

namespace kiln {

/// Threads used by parfors on the CPU: KILN_NUM_THREADS if set, else OpenMP's default (OMP_NUM_THREADS or
/// the number of cores).
int num_threads();
/// Overrides the number of threads for all later kernel calls (n >= 1).
void set_num_threads(int n);

/// Whether this build has the CPU (LLVM) backend.
bool has_cpu_backend();

}  // namespace kiln
