// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A failing rank ends the job: its error printed, then MPI_Abort, so that ranks waiting for it in a
// collective or a halo exchange do not hang.
#include <cstdio>
#include <exception>

#include "distributed/block.hpp"

namespace kiln::dist {

int run_or_abort(const std::function<void()>& body, MPI_Comm comm) {
  try {
    body();
    return 0;
  } catch (const std::exception& e) {
    int rank = -1;
    MPI_Comm_rank(comm, &rank);
    std::fprintf(stderr, "kiln: rank %d: %s\n", rank, e.what());
  } catch (...) {
    int rank = -1;
    MPI_Comm_rank(comm, &rank);
    std::fprintf(stderr, "kiln: rank %d: an exception that is not a std::exception\n", rank);
  }
  std::fflush(stderr);
  MPI_Abort(comm, 1);
  return 1;
}

}  // namespace kiln::dist
