// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// One GPU per rank: the ranks of one node take its GPUs in turn.
#include <mpi.h>

#include <fmt/format.h>

#include "kiln/device.hpp"
#include "kiln/distributed.hpp"

namespace kiln::dist {

int select_gpu(MPI_Comm comm) {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int local = 0;
  MPI_Comm_rank(node, &local);
  MPI_Comm_free(&node);
  const int count = cuda::device_count();
  // Every rank learns whether any has no GPU, so that all throw here rather than some waiting for the others
  // in their next collective.
  int none_here = count == 0 ? 1 : 0, none_somewhere = 0;
  MPI_Allreduce(&none_here, &none_somewhere, 1, MPI_INT, MPI_MAX, comm);
  if (none_here)
    throw DeviceError(fmt::format("kiln::dist::select_gpu: this rank's node has no CUDA GPU ({}): run the cpu target "
                                  "there",
                                  cuda::unavailable_reason()));
  if (none_somewhere)
    throw DeviceError("kiln::dist::select_gpu: another rank's node has no CUDA GPU (its error is printed there): run the "
                      "cpu target on such nodes");
  const int ordinal = local % count;
  cuda::set_device(ordinal);
  return ordinal;
}

}  // namespace kiln::dist
