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
  /// Shared memory: what one block may have without opting in (static + dynamic), what an SM holds, and
  /// what the system reserves per resident block (the H100's: 48 KiB, 228 KiB, 1 KiB).
  int shared_per_block = 48 * 1024;
  int shared_per_sm = 228 * 1024;
  int shared_reserved = 1024;
  int max_blocks_per_sm = 32;
};

/// counts[d]: iterations in dimension d (all > 0). `threads`: block size for elementwise kernels (from the
/// occupancy API) and tiled loops (the launch model's, at most kTiledThreads). Elementwise grids give each thread `unroll` iterations of the innermost dimension;
/// `waves` > 0 caps a 1-d one at that many full waves of the device (the grid-stride loops cover the rest).
/// `rows`: iterations of the next-to-last dimension per thread (stencil kernels). Elementwise blocks are
/// always whole warps wide, which stencil kernels rely on. `march` (3-d stencil kernels that walk their
/// planes, GpuKernel::stencil_march): grid z is the number of chunks the first dimension is cut into
/// (march_chunks), given `resident` threads per SM (the occupancy API's for the kernel; 0: the device's maximum)
/// and the `halo` planes each chunk loads below its first.
inline constexpr std::uint64_t kMinMarchPlanes = 8;
Geometry geometry(Strategy s, int rank, const std::uint64_t* counts, int threads, const DeviceShape& dev, int waves, int unroll = 1,
                  int rows = 1, bool march = false, int resident = 0, int halo = 2, int block_rows = 0);

/// The chunks of a marching grid whose `plane_blocks` blocks walk `planes` planes, `resident_blocks` of them
/// resident on the device at once. Blocks of one wave do not finish together, and an SM whose blocks are done
/// waits for the next wave's: many short chunks even that out, but each chunk loads its `halo` planes again.
/// Chunks of about kMarchChunkPlanes planes (a halo of 2 costs 6 %), and at least kMarchWaves waves: on the
/// H100 (512^3 float and double, 382^3 double), 16 chunks of 32 planes beat the 2-9 chunks of one device-full of
/// threads by 0-8 % on all four marching rows and 32 chunks of 16 planes by 1-5 %, and one wave of chunks of 256
/// planes left 12.7 % of the warps active against 15.6 % at four waves. From there, up to half as many again, the
/// count with the least waves x (chunk + halo), so that the last wave is full. No chunk under kMinMarchPlanes.
inline constexpr std::uint64_t kMarchWaves = 4;
inline constexpr std::uint64_t kMarchChunkPlanes = 32;
std::uint64_t march_chunks(std::uint64_t planes, std::uint64_t plane_blocks, std::uint64_t resident_blocks, std::uint64_t halo);

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
