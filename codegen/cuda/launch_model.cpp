// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "codegen/cuda/launch_model.hpp"

#include <algorithm>

namespace kiln::codegen::cuda {

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
    case LaunchReason::Coarsened:
      return "coarsened: one iteration per thread would take more than a wave of the device's resident threads, each wave's "
             "loads waiting for the blocks before it";
    case LaunchReason::NotCoarsened: return "one iteration per thread: the grid is at most one wave, every load in flight at once";
    case LaunchReason::OnePerThread: return "one iteration per thread: emitted without coarsening";
  }
  return "?";
}

LaunchChoice choose_launch(const GpuKernel& k, const std::uint64_t* counts, const KernelOccupancy& occ, const DeviceShape& dev,
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
  if (k.stencil_columns) {
    // The stencil forms stream their strips: uncapped unless the switch says otherwise.
    c.geometry = geometry(k.strategy, rank, counts, occ.block_size, dev, std::max(0, o.waves), k.stencil_columns, k.stencil_rows,
                          k.stencil_march);
    c.per_thread = k.stencil_columns;
    c.reason = LaunchReason::Stencil;
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

}  // namespace kiln::codegen::cuda
