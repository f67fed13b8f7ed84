// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Timing under MPI for kiln-dist-bench and kiln-dist-gpu-bench: every rank starts a repetition together, and
// the slowest rank's time is the repetition's.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <chrono>

namespace bench {

inline double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// The slowest rank of `comm`'s best-of-reps time for `body` (seconds), after one warm-up (compilation,
/// ghost layers, device copies). Every rank of `comm` starts each repetition together.
template <class F>
double timed(MPI_Comm comm, int reps, F&& body) {
  body();
  double best = 1e300;
  for (int r = 0; r < reps; ++r) {
    MPI_Barrier(comm);
    const double t0 = now();
    body();
    double t = now() - t0, slowest = 0;
    MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
    best = std::min(best, slowest);
  }
  return best;
}

}  // namespace bench
