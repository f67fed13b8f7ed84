// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The launch model: how a parfor's iterations are spread over a device, decided per kernel in two halves.
//
// At emission (emit_kernel.cpp and the planners it calls; GpuKernel::plan says which rule chose what):
// - the strategy, from the body's form: reductions take fixed geometries (their rounding must not depend on the
//   device); rows that reduce over a contiguous range are spread over a group of threads (cooperative rows);
//   rows that walk runs far apart stage them (staged walks); rows that all run one loop over a shared range
//   share its reads through shared tiles (tiled loops); reads at the index plus small offsets share their
//   neighbours (stencil forms); anything else runs one iteration per thread in grid-stride loops;
// - the coarsening ceiling U: iterations of the innermost dimension that one thread may run per round with
//   their loads in flight together (KILN_CUDA_UNROLL, 4). A body that runs a sequential loop gets U = 1: the
//   loop is a thread's work already, and every iteration given to a thread is a thread the device lacks.
//
// At each launch (choose_launch, from the extents, the kernel's occupancy and the device):
// - block: the occupancy API's size (1-d elementwise kernels its smallest block with the same resident
//   threads: blocks retire sooner); the fixed sizes of reductions and stages; tiled loops kTiledThreads rows a
//   block unless that leaves SMs without a block: then the largest power of two (at least a warp) that gives
//   every SM one (a row's loop stays on one thread, in order: rows cannot be split, but they can be spread);
// - coarsening: an elementwise kernel runs U iterations per thread when one per thread would take more than
//   kCoarsenWaves waves of the device's resident threads (iterations > kCoarsenWaves * SMs * resident threads
//   per SM); else one per thread. A wave beyond the first waits for blocks of the one before to retire, so its
//   loads start a memory latency later, while U per thread puts as many loads in flight at once in a quarter of
//   the blocks (H100, 2^20 floats: one per thread, 8192 blocks in 4 waves, 7.8 us a kernel against 5.9 us for
//   a hand kernel's 2 waves; docs/gpu.md). Up to one wave, one per thread already has every load in flight and
//   spreads them over the most SMs and warps;
// - grid: enough blocks for the iterations at that rate, capped for 1-d kernels without coarsening at
//   kMaxWaves resident waves (long-lived blocks stride over the rest; KILN_CUDA_WAVES overrides);
// - cooperative rows: the group per row from the rows, the row length and the SMs (cooperative_geometry);
// - contractions (a kernel with a tiles variant, emit_contraction.cpp): the variant. On an H100 it was faster than
//   the kernel itself (a thread per element) at every shape measured, the skinny, short and small ones included
//   (kiln-bench-gpu --filter contraction; docs/gpu.md); the thread per element stays as the override's form.
// - private copies (private_copies.hpp): a kernel whose array reductions may be copied per block gets copies
//   of those that fit the shared memory a block may have (greedily, in order; 8-byte integer counts in 32 bits
//   when no block can overflow them) if each block then runs at least kPrivateUpdatesPerElement iterations per
//   copied element: a block fills and merges its copies once, so the copies pay when the updates they absorb
//   outnumber their elements. Elementwise kernels then take the block size with the most resident threads
//   given the copies' shared memory (ties: the smallest, more copies sharing the updates) and a grid of at
//   most the resident blocks (one wave of long-lived blocks: every further block would fill and merge its
//   copies again); reductions keep their fixed geometry. LaunchChoice::private_reason says which clause held.
// The rule is a pure function of those inputs; LaunchChoice::reason names the clause that decided.
#pragma once

#include <cstdint>
#include <string_view>

#include "codegen/cuda/geometry.hpp"
#include "codegen/cuda/private_copies.hpp"
#include "codegen/cuda/program.hpp"

namespace kiln::codegen::cuda {

/// Coarsen an elementwise kernel when one iteration per thread would take more than this many waves of the
/// device's resident threads (LaunchOverrides::coarsen_waves overrides it).
inline constexpr std::uint64_t kCoarsenWaves = 1;
/// Uncoarsened 1-d elementwise grids are capped at this many resident waves (measured on an H200,
/// docs/gpu.md: 8 waves of long-lived blocks stream fastest without unrolling).
inline constexpr int kMaxWaves = 8;

/// Private copies pay when each block runs at least this many iterations per element it copies. A block
/// writes every element of its copies once (the identity) and reads each once at its end (the merge, at most
/// one global atomic per element), so at 4 updates per element the copies' own traffic is at most half of
/// the shared-memory work, and the global atomics at most a quarter of the updates' (hist2d of the suite,
/// 2^26 points into 64^2 bins: about 2^17 iterations per block, 32 per element).
inline constexpr std::uint64_t kPrivateUpdatesPerElement = 4;

/// What occupancy the loaded kernel has (runtime/cuda/module.hpp's LoadedFunction).
struct KernelOccupancy {
  int block_size = 256;          ///< the occupancy API's block size
  int compact_block_size = 256;  ///< the smallest block with as many resident threads per SM
  int resident_threads = 2048;   ///< threads per SM resident at block_size
  int static_shared = 0;         ///< bytes of static shared memory a block of it holds
};

/// A private-copy candidate at a launch (GpuKernel::privates[i]): its array's elements now.
struct PrivateInput {
  std::uint64_t elements = 0;
  int elem_bytes = 8;
  std::int64_t narrow_bound = 0;  ///< PrivateCandidate::narrow_bound
};

/// The KILN_CUDA_* launch switches (CudaOptions): experiment overrides of the model.
struct LaunchOverrides {
  int waves = -1;       ///< KILN_CUDA_WAVES: the 1-d wave cap (0: none; negative: the model's)
  int row_threads = 0;  ///< KILN_CUDA_ROW_THREADS: threads per cooperative row (0: the model's)
  int coarsen_waves = 0;  ///< KILN_CUDA_COARSEN_WAVES: kCoarsenWaves instead (0: the model's)
  int contraction = -1;   ///< KILN_CUDA_CONTRACTION: 0 a thread per element, 1 the tiles variant (-1: the model's)
  bool private_copies = true;  ///< KILN_CUDA_PRIVATE=0: no private copies
  int march_chunks = 0;        ///< KILN_CUDA_MARCH_CHUNKS: grid z of marching stencils (0: the model's)
};

/// Which clause of the model decided a launch (for diagnostics: reason_text).
enum class LaunchReason : std::uint8_t {
  FixedReduction,   ///< reductions: geometry from the extents only (the rounding is the device's no matter)
  Cooperative,      ///< a group of threads per row
  Staged,           ///< staged walks: kStagedThreads rows per block
  Tiled,            ///< tiled loop: kTiledThreads rows per block, rounds of as many steps
  TiledSmallBlocks, ///< tiled loop with few rows: smaller blocks spread them over the SMs
  Stencil,          ///< stencil form: the warp's strip and rows per thread fixed at emission
  MarchChunks,      ///< marching stencil: grid z from the waves of resident blocks (geometry.hpp, march_chunks)
  MarchChunksForced,  ///< marching stencil: grid z from KILN_CUDA_MARCH_CHUNKS
  Coarsened,        ///< U iterations per thread: one per thread would take more than kCoarsenWaves waves
  NotCoarsened,     ///< one per thread: it takes at most kCoarsenWaves waves
  OnePerThread,     ///< emitted without coarsening (U = 1)
  ContractionTiles,   ///< a contraction's tiles variant
  ContractionForced,  ///< KILN_CUDA_CONTRACTION chose the form
};
std::string_view reason_text(LaunchReason r);

/// Which clause of the private-copy rule decided (kernels with candidates).
enum class PrivateReason : std::uint8_t {
  None,       ///< the kernel has no candidates
  Copied,     ///< some arrays have copies (LaunchChoice::private_mask)
  NoRoom,     ///< no candidate's copy fits the shared memory a block may have
  FewUpdates, ///< the copies that fit: fewer than kPrivateUpdatesPerElement iterations per element a block
};
std::string_view reason_text(PrivateReason r);

struct LaunchChoice {
  Geometry geometry;
  int per_thread = 1;  ///< innermost iterations a thread runs per round (elementwise kernels)
  LaunchReason reason = LaunchReason::OnePerThread;
  bool tiles = false;  ///< launch the kernel's contraction variant (GpuKernel::tiles_entry)
  /// Private copies: bit 2a set when candidate a has one, bit 2a + 1 when it counts in 32 bits (the kernel's
  /// kiln_private argument), the dynamic shared memory they take, and the iterations per block that decided.
  unsigned private_mask = 0;
  unsigned shared_bytes = 0;
  PrivateReason private_reason = PrivateReason::None;
  std::uint64_t block_iterations = 0;  ///< iterations per block (the average) when the rule was asked
};



/// The launch of kernel `k` over `counts` (its parfor's iteration counts per dimension, all > 0), on `dev`.
/// `row_length`: a cooperative kernel's row length when the host knows it (else negative). `privates`: one per
/// GpuKernel::privates (none: no copies).
/// The launch without private copies.
LaunchChoice choose_plain(const GpuKernel& k, const std::uint64_t* counts, const KernelOccupancy& occ, const DeviceShape& dev,
                          const LaunchOverrides& o, std::int64_t row_length = -1);
LaunchChoice choose_launch(const GpuKernel& k, const std::uint64_t* counts, const KernelOccupancy& occ, const DeviceShape& dev,
                           const LaunchOverrides& o, std::int64_t row_length = -1, const PrivateInput* privates = nullptr);

}  // namespace kiln::codegen::cuda
