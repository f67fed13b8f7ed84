// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Settings of the CUDA backend that only it understands (docs/gpu.md lists the KILN_CUDA_* variables that
// frontend/settings.cpp reads into them). No CUDA header: the driver builds them in every build.
#pragma once

#include <cstdint>
#include <string>

namespace kiln::codegen::cuda {

/// How elementwise parfors that read arrays at the index plus small constant offsets (stencils) are emitted
/// (emit_stencil.cpp). Each warp takes `rounds` runs of 32 consecutive elements of the contiguous axis
/// (lane l computes element 32 u + l of its warp's strip) and, in 2-d and higher parfors, `rows` consecutive
/// rows; every window element is loaded once into a register and neighbours come from other lanes.
enum class StencilMode : std::uint8_t {
  Off,      ///< plain grid-stride loops (every neighbour is a load of its own)
  Shuffle,  ///< neighbours through warp shuffles (slower than plain loads on an H200: kept to compare)
  Shared,   ///< neighbours through a per-warp shared-memory tile (the default)
};
/// How a marching 3-d stencil shares its planes' neighbours (StencilSettings::march_form).
enum class MarchForm : std::uint8_t { Auto, Block, Warp };
struct StencilSettings {
  /// Shared: measured on an H200 (docs/gpu.md), jacobi2d 16384^2 0.563 ms against 0.868 ms with plain loads
  /// and 1.401 ms with shuffles; smooth1d 0.296 / 0.316 / 0.338 ms.
  StencilMode mode = StencilMode::Shared;
  int rows = 4;    ///< KILN_CUDA_STENCIL_ROWS (1-16): rows per thread when the stencil reaches across rows
  int rounds = 4;  ///< KILN_CUDA_STENCIL_ROUNDS (1-16, default the unroll factor): 32-element runs per warp
  /// Marching 3-d stencils (emit_march.cpp) hold every live plane's window values in registers and load the
  /// next steps' planes while a step computes. Their rows, rounds and planes loaded ahead are cut until the
  /// registers they need (march_registers: values, the planes in flight, the walk's own) fit the cap of
  /// __launch_bounds__(256, march_min_blocks) (emit_stencil.cpp, plan_march). Overrides for experiments:
  /// KILN_CUDA_MARCH_REGISTERS (8-255; 0, the default: the cap): the budget instead of the cap (above it, a form
  /// that ptxas must spill or run at fewer blocks per SM: to measure forms the cap would cut); KILN_CUDA_MARCH_PREFETCH
  /// (0-2): the planes ahead of the step the loads may run (0: each plane in its own step; 2: two buffers and
  /// two steps per loop trip); KILN_CUDA_MARCH_MIN_BLOCKS (1-8): the blocks per SM the kernels are compiled
  /// for, which sets the cap (2: 128 registers).
  /// KILN_CUDA_MARCH_ROWS (1-16): the rows per thread a marching plan starts from before its registers cut
  /// them: each row past the first saves loads of every plane (a window of V + 2 rows for V outputs). A
  /// hand-written 7-point float walk reached 79 % of the copy ceiling with 8 rows against 63 % with 4, but kiln's
  /// kernels ran faster at 4 on all four marching rows of the H100 (star7 0.760 ms against 0.912; plan_march).
  /// A running-sums plan (march_sums: one plane in registers) doubles them while its estimate fits the cap. In the
  /// block form (march_form) they are the rows a thread computes of the block's tile, halved until its estimate fits
  /// the 64 registers of four blocks an SM (march_block_registers), and the prefetch loads 1 + march_prefetch planes
  /// ahead.
  int march_rows = 4;
  int march_registers = 0;
  int march_prefetch = 1;
  int march_min_blocks = 2;
  /// KILN_CUDA_MARCH_FORM=block|warp (an experiment override; default: block where the kernel allows it): how a
  /// marching kernel shares a plane's neighbours. `block`: a block of 32 x 8 threads walks one tile of (y, x),
  /// each plane's tile and halo staged once in shared memory, one element a thread a step (emit_march_block.cpp).
  /// `warp`: each warp walks its own strips of rows in registers (emit_march.cpp).
  MarchForm march_form = MarchForm::Auto;
  /// KILN_CUDA_STRIP_REGISTERS (8-255; 0, the default: 128, two blocks of 256 threads an SM): the budget a 2-d
  /// strip's rows and rounds are cut to fit (emit_stencil.cpp, plan_strip); 255 keeps the form's rows and rounds.
  /// An experiment override.
  int strip_registers = 0;
};

/// What changes the emitted CUDA C (emit_program): a cached binary is only valid for the emission that
/// produced it, so all of it is in the disk cache's key (emission_settings()).
struct EmitOptions {
  /// Iterations of the innermost grid-stride loop a thread runs per round (KILN_CUDA_UNROLL: 1, 2, 4 or 8):
  /// with __restrict__ pointers their loads are in flight together, which a memory-bound kernel needs to
  /// reach the bandwidth of the device. 1 turns unrolling, __restrict__ and the stencil forms off.
  int unroll = 4;
  /// KILN_CUDA_STENCIL=shuffle|shared|off, KILN_CUDA_STENCIL_ROWS, KILN_CUDA_STENCIL_ROUNDS. Rows and rounds
  /// outside [1, 16] are a ValueError of emit_program.
  StencilSettings stencil;
  /// KILN_CUDA_COOPERATIVE=0 (an experiment override): rows whose body reduces over a contiguous range run
  /// one thread per row instead of a group of threads per row (ir/cooperative.hpp, emit_cooperative.cpp).
  bool cooperative = true;
  /// kiln::Options::halo_reads (kiln::dist): the arrays are views inside ghost layers that the reads reach.
  /// The stencil forms guard their loads by the arrays' extents (a window may reach past what the body reads),
  /// which would read the ghosts as zeros, so these kernels take the plain loops: each load where the body
  /// makes it.
  bool halo_reads = false;
  /// KILN_CUDA_STAGED_STEPS=4|8|16|32 (an experiment override): steps per row that a staged walk's chunk stages
  /// when every thread of the block has a row (emit_staged.cpp; the default kStagedSteps in program.hpp).
  int staged_steps = 16;
  /// KILN_CUDA_TILED_MIN_BLOCKS=n (an experiment override): the blocks per SM that tiled loops ask of ptxas
  /// (__launch_bounds__(256, n)); 0: none (emit_tiled.cpp says why).
  int tiled_min_blocks = 0;
  /// KILN_CUDA_CONTRACTION_ASYNC=0 (an experiment override): a contraction's tiles variant stages each chunk
  /// through registers into one set of tiles (two barriers a chunk) instead of copying it asynchronously
  /// (cp.async, sm_80 and later) into the second of two sets while the first is read (emit_contraction.cpp).
  bool contraction_async = true;
  /// KILN_CUDA_CONTRACTION_MIN_BLOCKS=n (2 to 4, an experiment override): the blocks per SM that a contraction's
  /// tiles variant asks of ptxas (__launch_bounds__(256, n): at most 128, 80 or 64 registers a thread; 3 spilled
  /// and was slower on an H100, emit_kernel.cpp).
  int contraction_min_blocks = 2;
};

struct CudaOptions {
  EmitOptions emit;
  /// KILN_CUDA_ARCH ("sm_80"): the architecture to compile for; empty: the current device's (sm_90 without
  /// one, for compile-only use as in CI).
  std::string arch;
  bool lineinfo = false;     ///< KILN_CUDA_LINEINFO: compile with -lineinfo (part of the cache key)
  bool dump_source = false;  ///< KILN_DUMP_CUDA: print each compiled kernel's CUDA C to stderr
  std::string keep_dir;      ///< KILN_CUDA_KEEP: keep <kernel>.cu, .ptx and .cubin in this directory
  bool sync_each_launch = false;  ///< KILN_CUDA_SYNC: synchronize after every launch (errors name the kernel)
  /// KILN_CUDA_PLANS=0 (an experiment override, to measure what they save): repeated asynchronous calls run the
  /// host function on the executor every time instead of by their launch plans (launch_plan.hpp).
  bool launch_plans = true;
  /// KILN_CUDA_WAVES: cap 1-d elementwise grids at this many device-filling waves (0: no cap); negative: the
  /// default (no cap when unrolled, else 8).
  int waves = -1;
  /// KILN_CUDA_BLOCK_SIZE: threads per block of elementwise kernels, a multiple of 32 in [32, 1024]; 0: the
  /// occupancy API's choice.
  int block_size = 0;
  /// KILN_CUDA_ROW_THREADS (an experiment override): threads per row of cooperative kernels, 32 (a warp) or a
  /// multiple of 32 up to 1024 (a block); 0: chosen at launch from the rows, the row length and the device's
  /// SM count (geometry.hpp, cooperative_geometry).
  int row_threads = 0;
  /// KILN_CUDA_COARSEN_WAVES (an experiment override): coarsen elementwise kernels when one iteration per thread
  /// would take more than this many waves of resident threads; 0: the launch model's (launch_model.hpp).
  int coarsen_waves = 0;
  /// KILN_CUDA_CONTRACTION=0|1 (an experiment override): contractions as a thread per element (0) or through their
  /// tiles variant (1, what the launch model chooses); unset (-1): the launch model's choice (launch_model.hpp).
  int contraction = -1;
  /// KILN_COMPILE_THREADS (as for the CPU target): threads one kernel's NVRTC compilation may use, its __global__
  /// functions dealt into programs compiled at the same time (compile_parts.hpp); 0: the hardware threads idle
  /// when it starts. Not part of the cache key: each function is the same code in whichever part it is compiled.
  int compile_threads = 0;
  /// KILN_CUDA_FAST_COMPILE=min|mid|max (1-3; 0, the default: off): NVRTC's `-Ofast-compile` level, which leaves out
  /// optimizations (unrolling, inlining, scheduling) to compile sooner. The same CUDA C and rounding flags, so
  /// the same results; other machine code, so part of the cache key. For programs that run briefly after a
  /// cold start (docs/gpu.md, "Cold compiles").
  int fast_compile = 0;
  /// KILN_CUDA_PRIVATE=0 (an experiment override): array reductions never update per-block copies in shared
  /// memory (launch_model.hpp's private clause is skipped; the kernels run their plain global atomics).
  bool private_copies = true;
  /// KILN_CUDA_MARCH_CHUNKS (an experiment override): the number of chunks the walked dimension of a marching 3-d
  /// stencil is cut into (grid z, at most one per plane); 0: the launch model's (geometry.hpp).
  int march_chunks = 0;
  /// KILN_CUDA_SORT_ITEMS (an experiment override, 4-32): keys per thread of the radix sort's 256-thread blocks,
  /// so its tiles are 256 times as many keys; 0: the rule per key type (sort_kernels.hpp, sort_items).
  int sort_items = 0;
  /// KILN_CUDA_SORT_MATCH (an experiment override): how the sort's digit passes find a warp's lanes of equal
  /// digits: 0 votes (a ballot per digit bit, on the integer pipe), 1 __match_any_sync (on the pipe of shared
  /// memory and cross-lane operations), 2 half the items each way; -1: the rule per key type (sort_kernels.hpp,
  /// sort_match).
  int sort_match = -1;
  /// KILN_CUDA_SCAN_TILE_KIB (an experiment override, 8-96): the bytes of a single-pass scan tile's values in
  /// shared memory, in KiB (scan_kernels.hpp; the tile's blocks a power of two).
  int scan_tile_kib = 32;
};

}  // namespace kiln::codegen::cuda
