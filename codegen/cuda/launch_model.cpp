// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "codegen/cuda/launch_model.hpp"

#include <algorithm>
#include <cstdint>

namespace kiln::codegen::cuda {
namespace {

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return a / b + (a % b != 0); }

/// Bytes a copy of `elements` takes, 8-byte aligned (copies are laid out one after another).
std::uint64_t copy_bytes(std::uint64_t elements, int elem_bytes) { return (elements * static_cast<std::uint64_t>(elem_bytes) + 7) / 8 * 8; }

/// Blocks of `threads` one SM holds when each takes `shared` bytes of shared memory (static + dynamic).
std::uint64_t resident_blocks(unsigned threads, std::uint64_t shared, const KernelOccupancy& occ, const DeviceShape& dev) {
  const std::uint64_t by_threads = static_cast<std::uint64_t>(std::max(32, std::min(occ.resident_threads, dev.max_threads_per_sm))) / threads;
  const std::uint64_t by_shared = static_cast<std::uint64_t>(std::max(0, dev.shared_per_sm)) / (shared + static_cast<std::uint64_t>(std::max(0, dev.shared_reserved)));
  return std::min({by_threads, by_shared, static_cast<std::uint64_t>(std::max(1, dev.max_blocks_per_sm))});
}

/// The most iterations one block of `g` runs (its threads' grid-stride loops: dimension rank - 1 along x,
/// rank - 2 along y, the rest merged along z).
std::uint64_t most_block_iterations(const Geometry& g, int rank, const std::uint64_t* counts) {
  std::uint64_t outer = 1;
  for (int d = 0; d + 2 < rank; ++d) outer *= counts[d];
  const std::uint64_t along[3] = {counts[rank - 1], rank >= 2 ? counts[rank - 2] : 1, outer};
  const std::uint64_t grid[3] = {g.grid.x, g.grid.y, g.grid.z}, block[3] = {g.block.x, g.block.y, g.block.z};
  std::uint64_t n = 1;
  for (int a = 0; a < 3; ++a) n *= ceil_div(along[a], grid[a] * block[a]) * block[a];
  return n;
}

/// Caps the grid at `blocks` in all, taking from z, then y, then x (the grid-stride loops cover the rest).
void cap_grid(Geometry& g, std::uint64_t blocks) {
  blocks = std::max<std::uint64_t>(1, blocks);
  g.grid.z = static_cast<unsigned>(std::min<std::uint64_t>(g.grid.z, blocks));
  g.grid.y = static_cast<unsigned>(std::min<std::uint64_t>(g.grid.y, std::max<std::uint64_t>(1, blocks / g.grid.z)));
  g.grid.x = static_cast<unsigned>(std::min<std::uint64_t>(g.grid.x, std::max<std::uint64_t>(1, blocks / (static_cast<std::uint64_t>(g.grid.z) * g.grid.y))));
}

/// The private-copy clause of the model (launch_model.hpp): amends `c`, the launch without copies.
void choose_private(const GpuKernel& k, const std::uint64_t* counts, const KernelOccupancy& occ, const DeviceShape& dev,
                    const PrivateInput* privates, LaunchChoice& c) {
  const int n = static_cast<int>(k.privates.size());
  const int rank = k.rank;
  std::uint64_t total = 1;
  for (int d = 0; d < rank; ++d) total *= counts[d];
  const std::uint64_t budget = static_cast<std::uint64_t>(std::max(0, dev.shared_per_block - occ.static_shared));
  bool wide[kMaxPrivateArrays] = {};  // counted in 8 bytes after all: some block could overflow 32 bits
  for (int attempt = 0; attempt <= n; ++attempt) {
    unsigned mask = 0;
    std::uint64_t bytes = 0, elements = 0;
    for (int a = 0; a < n; ++a) {
      const PrivateInput& in = privates[a];
      if (in.elements == 0) continue;  // nothing to update (an update of it is out of range: the plain path)
      const bool narrow = in.narrow_bound > 0 && !wide[a];
      const std::uint64_t b = copy_bytes(in.elements, narrow ? 4 : in.elem_bytes);
      if (bytes + b > budget) continue;
      bytes += b;
      elements += in.elements;
      mask |= (1u << (2 * a)) | (narrow ? 1u << (2 * a + 1) : 0u);
    }
    if (!mask) {
      c.private_reason = PrivateReason::NoRoom;
      return;
    }
    LaunchChoice p = c;
    const std::uint64_t shared = bytes + static_cast<std::uint64_t>(std::max(0, occ.static_shared));
    if (k.strategy == Strategy::Elementwise) {
      unsigned best = 0;
      std::uint64_t best_resident = 0;
      // Powers of two from 128 up to the occupancy API's block (which the kernel can be launched with); that
      // block itself when it is smaller.
      const unsigned most = static_cast<unsigned>(std::max(32, occ.block_size / 32 * 32));
      for (unsigned t = 1024; t >= 32; t /= 2) {
        if (t > most || (t < 128 && t != most && most >= 128)) continue;
        const std::uint64_t resident = t * resident_blocks(t, shared, occ, dev);
        if (resident >= best_resident) best = t, best_resident = resident;  // descending: ties keep the smaller
      }
      if (best_resident == 0) {
        c.private_reason = PrivateReason::NoRoom;
        return;
      }
      p.geometry = geometry(k.strategy, rank, counts, static_cast<int>(best), dev, 0, p.per_thread);
      cap_grid(p.geometry, static_cast<std::uint64_t>(std::max(1, dev.sm_count)) * (best_resident / best));
    }
    const std::uint64_t per_block = total / std::max<std::uint64_t>(1, p.geometry.grid.count());
    c.block_iterations = per_block;
    if (per_block < kPrivateUpdatesPerElement * elements) {
      c.private_reason = PrivateReason::FewUpdates;
      return;
    }
    // 32-bit counts: no block may run more iterations than keep its sum within a signed 32-bit number.
    const std::uint64_t most = most_block_iterations(p.geometry, rank, counts);
    bool retry = false;
    for (int a = 0; a < n; ++a)
      if ((mask >> (2 * a + 1)) & 1u)
        if (most > static_cast<std::uint64_t>(INT32_MAX) / static_cast<std::uint64_t>(privates[a].narrow_bound)) wide[a] = retry = true;
    if (retry) continue;
    p.private_mask = mask;
    p.shared_bytes = static_cast<unsigned>(bytes);
    p.private_reason = PrivateReason::Copied;
    p.block_iterations = per_block;
    c = p;
    return;
  }
}

}  // namespace

std::string_view reason_text(LaunchReason r) {
  switch (r) {
    case LaunchReason::FixedReduction: return "reductions: the geometry follows the extents alone, so the rounding is the same on every device";
    case LaunchReason::Cooperative: return "cooperative rows: a group of threads per row, sized from the rows, the row length and the SMs";
    case LaunchReason::Staged: return "staged walks: a block of rows walks in step through shared tiles";
    case LaunchReason::Tiled: return "tiled loop: a block of rows shares each round of steps through shared tiles";
    case LaunchReason::TiledSmallBlocks:
      return "tiled loop with few rows: blocks of fewer rows (and rounds of as many steps) spread them over the SMs; each row's loop "
             "stays on one thread, in order";
    case LaunchReason::Stencil: return "stencil form: each warp's strip of the innermost dimension and its rows were fixed at emission";
    case LaunchReason::MarchChunks:
      return "marching stencil: grid z cuts dimension 0 into chunks of about 32 planes, at least 4 waves of the blocks that reside at the "
             "kernel's occupancy, then the count with the fewest waves x (chunk + the planes loaded below it) (geometry.hpp, march_chunks)";
    case LaunchReason::MarchChunksForced: return "marching stencil: grid z from KILN_CUDA_MARCH_CHUNKS";
    case LaunchReason::Coarsened:
      return "coarsened: one iteration per thread would take more than a wave of the device's resident threads, each wave's "
             "loads waiting for the blocks before it";
    case LaunchReason::NotCoarsened: return "one iteration per thread: the grid is at most one wave, every load in flight at once";
    case LaunchReason::OnePerThread: return "one iteration per thread: emitted without coarsening";
    case LaunchReason::ContractionTiles:
      return "contraction: the tiles variant, a block per 64 x 64 tile of elements with the loop's operands staged through shared "
             "memory (faster than a thread per element at every shape measured)";
    case LaunchReason::ContractionForced: return "contraction form set by KILN_CUDA_CONTRACTION (an experiment override)";
  }
  return "?";
}

namespace {
/// Elementwise kernels in their own form: stencils, coarsening (the model in launch_model.hpp).
LaunchChoice choose_launch_plain(const GpuKernel& k, const std::uint64_t* counts, const KernelOccupancy& occ, const DeviceShape& dev,
                                 const LaunchOverrides& o);
}  // namespace
std::string_view reason_text(PrivateReason r) {
  switch (r) {
    case PrivateReason::None: return "no array reduction may be copied";
    case PrivateReason::Copied:
      return "private copies in shared memory: each block updates its own and adds it to the array once at its end (elementwise "
             "kernels: a grid of at most the resident blocks)";
    case PrivateReason::NoRoom: return "no private copy: none fits the shared memory a block may have";
    case PrivateReason::FewUpdates:
      return "no private copy: a block would run fewer iterations per copied element than filling and merging its copies costs";
  }
  return "?";
}

LaunchChoice choose_launch(const GpuKernel& k, const std::uint64_t* counts, const KernelOccupancy& occ, const DeviceShape& dev,
                           const LaunchOverrides& o, std::int64_t row_length, const PrivateInput* privates) {
  LaunchChoice c = choose_plain(k, counts, occ, dev, o, row_length);
  if (privates && o.private_copies && !k.privates.empty() && (k.strategy == Strategy::Elementwise || k.strategy == Strategy::Reduce) && !k.stencil_columns)
    choose_private(k, counts, occ, dev, privates, c);
  return c;
}

LaunchChoice choose_plain(const GpuKernel& k, const std::uint64_t* counts, const KernelOccupancy& occ, const DeviceShape& dev,
                          const LaunchOverrides& o, std::int64_t row_length) {
  LaunchChoice c;
  const int rank = k.rank;
  std::uint64_t total = 1;
  for (int d = 0; d < rank; ++d) total *= counts[d];
  switch (k.strategy) {
    case Strategy::Reduce:
    case Strategy::ArgReduce:
      c.geometry = geometry(k.strategy, rank, counts, occ.block_size, dev, 0);
      c.reason = LaunchReason::FixedReduction;
      return c;
    case Strategy::Cooperative:
      c.geometry = cooperative_geometry(total, row_length, dev, o.row_threads);
      c.reason = LaunchReason::Cooperative;
      return c;
    case Strategy::Staged:
      c.geometry = geometry(k.strategy, rank, counts, occ.block_size, dev, 0);
      c.reason = LaunchReason::Staged;
      return c;
    case Strategy::Tiled: {
      // A row's loop cannot be split (its sums keep their order), but few rows can be spread: halve the block
      // while that leaves SMs without one.
      const std::uint64_t sms = static_cast<std::uint64_t>(std::max(1, dev.sm_count));
      unsigned t = kTiledThreads;
      while (t > 32 && (total + t - 1) / t < sms) t /= 2;
      c.geometry = geometry(k.strategy, rank, counts, static_cast<int>(t), dev, 0);
      c.reason = t < static_cast<unsigned>(kTiledThreads) ? LaunchReason::TiledSmallBlocks : LaunchReason::Tiled;
      return c;
    }
    case Strategy::Elementwise: break;
  }
  if (k.tiles_entry >= 0 && rank == 2) {
    // Measured on an H100 (kiln-bench-gpu --filter contraction, f64): 65536 x 8 x 1024 0.78 ms against 1.98 ms
    // as a thread per element, 2048 x 2048 x 8 0.032 against 0.043, 256 x 256 x 4096 (16 tiles) 0.48 against 0.53.
    if (o.contraction == 0) {
      c = choose_launch_plain(k, counts, occ, dev, o);
      c.reason = LaunchReason::ContractionForced;
      return c;
    }
    const std::uint64_t t = static_cast<std::uint64_t>(kContractionTile);
    c.geometry.block.x = static_cast<unsigned>(kContractionThreads);
    c.geometry.grid.x = static_cast<unsigned>(std::max<std::uint64_t>(1, std::min<std::uint64_t>((counts[1] + t - 1) / t, dev.max_grid_x)));
    c.geometry.grid.y = static_cast<unsigned>(std::max<std::uint64_t>(1, std::min<std::uint64_t>((counts[0] + t - 1) / t, 65535)));
    c.tiles = true;
    c.reason = o.contraction == 1 ? LaunchReason::ContractionForced : LaunchReason::ContractionTiles;
    return c;
  }
  return choose_launch_plain(k, counts, occ, dev, o);
}

namespace {
LaunchChoice choose_launch_plain(const GpuKernel& k, const std::uint64_t* counts, const KernelOccupancy& occ, const DeviceShape& dev,
                                 const LaunchOverrides& o) {
  LaunchChoice c;
  const int rank = k.rank;
  std::uint64_t total = 1;
  for (int d = 0; d < rank; ++d) total *= counts[d];
  if (k.stencil_columns) {
    // The stencil forms stream their strips: uncapped unless the switch says otherwise.
    c.geometry = geometry(k.strategy, rank, counts, occ.block_size, dev, std::max(0, o.waves), k.stencil_columns, k.stencil_rows,
                          k.stencil_march, occ.resident_threads, k.march_halo, k.march_block_rows);
    c.per_thread = k.stencil_columns;
    c.reason = k.stencil_march && rank == 3 ? LaunchReason::MarchChunks : LaunchReason::Stencil;
    if (k.stencil_march && rank == 3 && o.march_chunks > 0) {
      c.geometry.grid.z = static_cast<unsigned>(std::min<std::uint64_t>({static_cast<std::uint64_t>(o.march_chunks), counts[0], 65535}));
      c.reason = LaunchReason::MarchChunksForced;
    }
    return c;
  }
  // Plain 1-d kernels take the compact block: blocks of few warps retire and free their SM slots sooner.
  const int threads = rank == 1 ? occ.compact_block_size : occ.block_size;
  c.per_thread = std::max(1, k.unroll);
  if (c.per_thread > 1) {
    const std::uint64_t slots = static_cast<std::uint64_t>(std::max(1, dev.sm_count)) *
                                static_cast<std::uint64_t>(std::max(32, std::min(occ.resident_threads, dev.max_threads_per_sm)));
    const std::uint64_t coarsen_waves = o.coarsen_waves > 0 ? static_cast<std::uint64_t>(o.coarsen_waves) : kCoarsenWaves;
    if (total > coarsen_waves * slots) {
      c.reason = LaunchReason::Coarsened;
    } else {
      c.per_thread = 1;
      c.reason = LaunchReason::NotCoarsened;
    }
  }
  const int waves = o.waves >= 0 ? o.waves : c.per_thread > 1 ? 0 : kMaxWaves;
  c.geometry = geometry(k.strategy, rank, counts, threads, dev, waves, c.per_thread);
  return c;
}

}  // namespace

}  // namespace kiln::codegen::cuda
