// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "codegen/cuda/geometry.hpp"

#include <algorithm>
#include <cstdint>

namespace kiln::codegen::cuda {
namespace {

constexpr unsigned kMaxGridYZ = 65535;

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return a / b + (a % b != 0); }

unsigned clamp_to(std::uint64_t v, std::uint64_t hi) { return static_cast<unsigned>(std::max<std::uint64_t>(1, std::min(v, hi))); }

std::uint64_t pow2_at_least(std::uint64_t v) {
  std::uint64_t p = 1;
  while (p < v && p < (1ull << 31)) p <<= 1;
  return p;
}

/// The block's shape for `threads` threads: the innermost dimension along x, at least a warp wide (whole
/// warps read consecutive elements) and at most `widest`, the rest along y (rows of a tile, which share
/// their neighbours' cache lines in a stencil).
Dims block_shape(int rank, const std::uint64_t* counts, unsigned threads, unsigned widest) {
  Dims b;
  if (rank == 1) {
    b.x = threads;
    return b;
  }
  b.x = static_cast<unsigned>(std::min<std::uint64_t>({threads, widest, std::max<std::uint64_t>(32, pow2_at_least(counts[rank - 1]))}));
  b.y = threads / b.x;
  return b;
}

}  // namespace

std::uint64_t march_chunks(std::uint64_t planes, std::uint64_t plane_blocks, std::uint64_t resident_blocks, std::uint64_t halo) {
  plane_blocks = std::max<std::uint64_t>(1, plane_blocks);
  resident_blocks = std::max<std::uint64_t>(1, resident_blocks);
  const std::uint64_t most = std::max<std::uint64_t>(1, planes / kMinMarchPlanes);
  const std::uint64_t least =
      std::min(most, std::max<std::uint64_t>({1, ceil_div(kMarchWaves * resident_blocks, plane_blocks), ceil_div(planes, kMarchChunkPlanes)}));
  std::uint64_t best = least, best_cost = ~0ull;
  // Past half as many again, the chunks' halos cost more than a last wave's slots can save.
  for (std::uint64_t c = least; c <= std::min(most, least + least / 2); ++c) {
    const std::uint64_t cost = ceil_div(plane_blocks * c, resident_blocks) * (ceil_div(planes, c) + halo);
    if (cost < best_cost) best = c, best_cost = cost;
  }
  return best;
}

Geometry geometry(Strategy s, int rank, const std::uint64_t* counts, int threads, const DeviceShape& dev, int waves, int unroll,
                  int rows, bool march, int resident, int halo, int block_rows) {
  Geometry g;
  std::uint64_t total = 1;
  for (int d = 0; d < rank; ++d) total *= counts[d];
  std::uint64_t outer = 1;  // the dimensions merged along z
  for (int d = 0; d + 2 < rank; ++d) outer *= counts[d];
  switch (s) {
    case Strategy::ArgReduce:
      g.block.x = kReduceThreads;
      g.grid.x = clamp_to(ceil_div(total, kReduceThreads), kMaxReduceBlocks);
      return g;
    case Strategy::Reduce: {
      g.block = block_shape(rank, counts, kReduceThreads, kReduceThreads);
      std::uint64_t budget = kMaxReduceBlocks;
      g.grid.x = clamp_to(ceil_div(counts[rank - 1], g.block.x), budget);
      budget /= g.grid.x;
      if (rank >= 2) {
        g.grid.y = clamp_to(ceil_div(counts[rank - 2], g.block.y), budget);
        budget /= g.grid.y;
      }
      if (rank >= 3) g.grid.z = clamp_to(outer, budget);
      return g;
    }
    case Strategy::Cooperative: return cooperative_geometry(total, -1, dev);
    case Strategy::Staged: {
      // kStagedThreads rows a block when that fills every SM (the kernel's block loop covers what a capped grid
      // leaves); fewer rows, spread over two blocks an SM: the kernel gives a block ceil(rows / grid) of them,
      // and a block of fewer rows stages more of each per chunk, so a few long walks (a scan's groups of carries)
      // wait out fewer chunks' loads, and more SMs keep loads in flight.
      g.block.x = kStagedThreads;
      const std::uint64_t full = ceil_div(total, kStagedThreads);
      const std::uint64_t spread = std::min<std::uint64_t>(total, 2 * static_cast<std::uint64_t>(std::max(1, dev.sm_count)));
      g.grid.x = clamp_to(full >= static_cast<std::uint64_t>(dev.sm_count) ? full : std::max(full, spread), dev.max_grid_x);
      return g;
    }
    case Strategy::Tiled: {  // a row per thread, `threads` (at most kTiledThreads) a block sharing the tiles
      const unsigned t = static_cast<unsigned>(std::clamp(threads, 32, kTiledThreads));
      g.block.x = t;
      g.grid.x = clamp_to(ceil_div(total, t), dev.max_grid_x);
      return g;
    }
    case Strategy::Elementwise: {
      const unsigned t = static_cast<unsigned>(std::clamp(threads, 32, 1024)) / 32 * 32;
      g.block = block_shape(rank, counts, t, 128);
      // A marching kernel in the block form walks one tile of 32 x block_rows elements a block (emit_march_block.cpp).
      if (march && rank == 3 && block_rows > 0) g.block = {32, static_cast<unsigned>(block_rows), 1};
      std::uint64_t cap_x = dev.max_grid_x;
      if (waves > 0 && rank == 1) {
        const std::uint64_t per_sm = std::max(1, dev.max_threads_per_sm / static_cast<int>(t));
        cap_x = std::min<std::uint64_t>(cap_x, static_cast<std::uint64_t>(dev.sm_count) * per_sm * static_cast<std::uint64_t>(waves));
      }
      const std::uint64_t per_thread = static_cast<std::uint64_t>(std::max(1, unroll));
      g.grid.x = clamp_to(ceil_div(counts[rank - 1], g.block.x * per_thread), cap_x);
      if (rank >= 2) g.grid.y = clamp_to(ceil_div(counts[rank - 2], static_cast<std::uint64_t>(g.block.y) * std::max(1, rows)), kMaxGridYZ);
      if (rank >= 3) g.grid.z = clamp_to(outer, kMaxGridYZ);
      if (march && rank == 3) {
        const std::uint64_t block = static_cast<std::uint64_t>(g.block.x) * g.block.y;
        const int per_sm = resident > 0 ? std::min(resident, dev.max_threads_per_sm) : dev.max_threads_per_sm;
        const std::uint64_t resident_blocks = static_cast<std::uint64_t>(std::max(1, dev.sm_count)) * std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::max(32, per_sm)) / block);
        g.grid.z = clamp_to(march_chunks(counts[0], static_cast<std::uint64_t>(g.grid.x) * g.grid.y, resident_blocks, static_cast<std::uint64_t>(std::max(0, halo))), kMaxGridYZ);
      }
      return g;
    }
  }
  return g;
}

Geometry cooperative_geometry(std::uint64_t rows, std::int64_t row_length, const DeviceShape& dev, int row_threads) {
  Geometry g;
  std::uint64_t t = 32;
  if (row_threads >= 32) {
    t = static_cast<std::uint64_t>(std::min(row_threads, kMaxRowThreads)) / 32 * 32;
  } else if (row_length >= 0 && rows > 0) {
    const std::uint64_t slots = static_cast<std::uint64_t>(std::max(1, dev.sm_count)) * static_cast<std::uint64_t>(std::max(32, dev.max_threads_per_sm));
    std::uint64_t want = 32;
    // Two device-fulls of threads: on an H100, 4000 rows of 5000 floats took 0.082 ms with a warp per row,
    // 0.074 ms with blocks of 64 (one device-full) and 0.064 ms with blocks of 128 (docs/gpu.md).
    while (want * 2 <= 2 * slots / rows && want * 2 <= static_cast<std::uint64_t>(kMaxRowThreads)) want *= 2;
    while (want > 32 && want * static_cast<std::uint64_t>(kMinRowElements) > static_cast<std::uint64_t>(row_length)) want /= 2;
    t = want;
  }
  constexpr unsigned kWarpsPerBlock = 8;  // a warp per row: 256-thread blocks
  if (t == 32) {
    g.block = {32, kWarpsPerBlock, 1};
    g.grid.x = clamp_to(ceil_div(rows, kWarpsPerBlock), dev.max_grid_x);
  } else {
    g.block.x = static_cast<unsigned>(t);
    g.grid.x = clamp_to(rows, dev.max_grid_x);
  }
  return g;
}

}  // namespace kiln::codegen::cuda
