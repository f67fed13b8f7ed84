// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A rank whose kernel throws ends the whole job: run under mpirun -np 2, rank 1 passes an array a kernel
// rejects while rank 0 waits in a barrier it would otherwise wait in forever. The ctest entry expects
// rank 1's kiln error on the output (and a time limit catches a hang).
#include <mpi.h>

#include <vector>

#include "kiln/distributed.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  kiln::dist::run_or_abort([] {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const auto boom = kiln::jit("boom", [](kiln::Array<double, 1> a, kiln::Int i) { a(i) = 1.0; });
    std::vector<double> a(4);
    if (rank == 1) boom(a, 1.5);  // a float for an Int parameter: kiln::TypeError naming the kernel
    MPI_Barrier(MPI_COMM_WORLD);
  });
  MPI_Finalize();
  return 0;
}
