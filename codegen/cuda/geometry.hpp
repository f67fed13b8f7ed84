// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Launch geometry: how many blocks of how many threads run a parfor. Reducing kernels get a geometry that
// depends only on the iteration counts, so their partial results (and the rounding of float reductions)
// are the same on every run and every device.
#pragma once

#include <cstdint>

#include "codegen/cuda/program.hpp"

namespace kiln::codegen::cuda {

struct Dims {
  unsigned x = 1, y = 1, z = 1;
  std::uint64_t count() const { return static_cast<std::uint64_t>(x) * y * z; }
};

struct Geometry {
  Dims grid, block;
};

/// Device facts that shape elementwise launches.
struct DeviceShape {
  int sm_count = 132;
  int max_threads_per_sm = 2048;
  unsigned max_grid_x = 2147483647u;
};

/// counts[d]: iterations in dimension d (all > 0). `threads`: block size for elementwise kernels (from the
/// occupancy API) and tiled loops (the launch model's, at most kTiledThreads). Elementwise grids give each thread `unroll` iterations of the innermost dimension;
/// `waves` > 0 caps a 1-d one at that many full waves of the device (the grid-stride loops cover the rest).
/// `rows`: iterations of the next-to-last dimension per thread (stencil kernels). Elementwise blocks are
/// always whole warps wide, which stencil kernels rely on. `march` (3-d stencil kernels that walk their
/// planes, GpuKernel::stencil_march): grid z is the number of chunks the first dimension is cut into,
/// enough for one device-full of threads (SMs x threads per SM) but no chunk under kMinMarchPlanes planes
/// (each chunk loads the planes below its first again).
inline constexpr std::uint64_t kMinMarchPlanes = 8;
Geometry geometry(Strategy s, int rank, const std::uint64_t* counts, int threads, const DeviceShape& dev, int waves, int unroll = 1,
                  int rows = 1, bool march = false);

/// Cooperative rows (Strategy::Cooperative): `rows` iterations of the launched parfor, each reducing over
/// `row_length` elements (negative: not known at launch). A warp per row (blocks of 32 x 8: one row per warp)
/// unless the rows are too few to give the device's SMs a full load of threads and long enough to share:
/// then a block per row of T threads, T the power of two nearest below 2 * sm_count * max_threads_per_sm / rows,
/// at most kMaxRowThreads and at most row_length / kMinRowElements (the block tree's two barriers pay off
/// only when each thread has work). `row_threads` (32..1024, a multiple of 32) overrides T; 0 chooses.
/// The group size fixes the reductions' order: it is a pure function of these arguments.
inline constexpr std::int64_t kMinRowElements = 16;
Geometry cooperative_geometry(std::uint64_t rows, std::int64_t row_length, const DeviceShape& dev, int row_threads = 0);

}  // namespace kiln::codegen::cuda
