// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What the CUDA emitter makes of an offloaded kernel: CUDA C with one __global__ function per launch (plus a
// fold kernel per reducing one), and for each of them how the host binds the parameters at launch. The host
// function around the launches runs on the host executor with the device machine (device_machine.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "codegen/cuda/cuda_options.hpp"
#include "codegen/cuda/private_copies.hpp"
#include "ir/stmt.hpp"

namespace kiln::codegen::cuda {

/// Reducing kernels use blocks of this many threads and at most kMaxReduceBlocks blocks, both pure
/// functions of the extents: the partial results, and so the rounding, do not depend on the device.
inline constexpr int kReduceThreads = 256;
/// Also the block size of the fold kernel, which combines one partial per thread.
inline constexpr int kMaxReduceBlocks = 1024;
/// Threads per row of a cooperative kernel at most (a block per row).
inline constexpr int kMaxRowThreads = 1024;
/// Staged walks (Strategy::Staged): threads per block (a row each), and steps per row that a chunk stages
/// when every thread has a row (a block with fewer rows stages proportionally more of each).
inline constexpr int kStagedThreads = 128;
inline constexpr int kStagedSteps = 16;
static_assert(kStagedThreads % 32 == 0, "a full block's cells are laid out by constants (emit_staged.cpp): the steps per chunk "
                                        "(EmitOptions::staged_steps, at most 32) divide the threads");
/// Blocks of a staged walk an SM must hold (__launch_bounds__'s second argument: at most 102 registers a thread).
/// A walk's memory parallelism is its blocks' chunks in flight: a 1-d scan's rescan compiled by NVRTC to 128
/// registers (4 blocks an SM) ran at 44% of the H100's DRAM bandwidth, where a hand-written kernel of the same
/// shape at 92 (5 blocks) ran at 78%; capped, it takes 96 with a spill of two words outside its loop.
inline constexpr int kStagedBlocksPerSm = 5;
/// A staged walk's steps are unrolled by this many (a group's tile reads go ahead of its arithmetic: a single
/// row's chain of dependent steps waits on the arithmetic only).
inline constexpr int kStagedGroup = 16;
/// Tiled loops (Strategy::Tiled): threads per block at most, which is also the steps of the inner loop a block
/// stages per round (each thread loads one step of every tiled access). 256 as in the CUDA samples' n-body:
/// enough steps per barrier pair to amortize it. Fewer rows than fill the SMs at 256 a block take smaller
/// blocks (launch_model.hpp).
inline constexpr int kTiledThreads = 256;
/// Contractions (emit_contraction.cpp): a block's tile of elements is kContractionTile square, each of its
/// kContractionThreads threads computing kContractionPerThread^2 of them (rows ty + 16 m, columns tx + 16 n: a
/// warp's 16 columns are one line of a tile; f32 and f64 sides in runs of 4 and 2 read as one vector,
/// emit_contraction.cpp), the loop's steps staged kContractionSteps at a time.
inline constexpr int kContractionPerThread = 4;
inline constexpr int kContractionTile = 64;
inline constexpr int kContractionSteps = 16;
inline constexpr int kContractionThreads = (kContractionTile / kContractionPerThread) * (kContractionTile / kContractionPerThread);
/// Bytes per reduction partial in the scratch buffer (every type is padded to 8).
inline constexpr int kSlotBytes = 8;

/// Every setting that changes the emitted CUDA ("unroll=4;stencil=shuffle;rows=4;rounds=4"): a cached binary
/// is only valid for the emission that produced it, so the disk cache keys on this.
std::string emission_settings(const EmitOptions& opts);

/// Throws the CompileError of a kernel the backend cannot compile: "kiln CUDA backend: kernel '<kernel>': <what>".
[[noreturn]] void backend_error(const std::string& kernel, const std::string& what);

/// The arrays `s` may write: those it stores to, and every array a binding it stores through may name
/// (followed through every bind in `s`, wherever it is: a time loop's buffers are written through
/// bindings swapped between them). Written parameters are copied back to host arrays and are not `const`
/// in kernels.
std::unordered_set<const ir::VarNode*> arrays_written(const ir::Stmt& s);

/// What a kernel parameter is bound to when the host launches it.
enum class ParamKind : std::uint8_t {
  Begin,    ///< axis: the parfor's lower bound in dimension `axis` (i64)
  Count,    ///< axis: the number of iterations in dimension `axis` (u64)
  Scalar,   ///< var: a scalar captured by value
  Data,     ///< var: an array's element pointer
  Extent,   ///< var, axis: an array's extent (i64)
  Stride,   ///< var, axis: an array's stride in elements (i64)
  Scratch,  ///< the reduction scratch buffer (device pointer)
  Status,   ///< the device's KernelStatus (device pointer)
  Private,  ///< which array reductions update per-block copies (LaunchChoice::private_mask, unsigned)
};

struct Param {
  ParamKind kind;
  const ir::VarNode* var = nullptr;
  int axis = 0;
};

/// How a parfor's iterations are spread over threads.
enum class Strategy : std::uint8_t {
  Elementwise,  ///< no scalar reductions: grid-stride loops on a 1-3 d grid, block size from the occupancy API
  Reduce,       ///< scalar reductions: grid-stride loops, then a fixed-order block tree and the fold kernel
  ArgReduce,    ///< with argmin/argmax: each thread takes a contiguous run of the row-major space, combined in order
  /// Rows that reduce over a contiguous range (ir/cooperative.hpp): a group of threads per row — a warp, or a
  /// block when few long rows would leave SMs idle — striding over the row, combined in a fixed tree.
  Cooperative,
  /// Rows that each walk a run of consecutive elements in a sequential loop (emit_staged.cpp): a block of
  /// kStagedThreads rows walks in step, staging each chunk of steps through shared memory.
  Staged,
  /// Rows that all run one sequential loop over the same range, reading arrays at indices of the loop's
  /// index alone (n-body: every body reads body j at step j; emit_tiled.cpp): a block of kTiledThreads rows
  /// loads a round of steps into shared memory together, then each row runs them in order from there.
  Tiled,
};

std::string_view name_of(Strategy s);

/// Which terms the update condition of an argmin/argmax reduction has (ir::match_arg_update): the partials
/// are combined with the same condition.
struct ArgClauses {
  bool nan_wins = false;         ///< `|| (isnan(x) && !isnan(var))`
  bool empty_loses = false;      ///< `|| index < 0`
};

struct GpuKernel {
  std::string name;        ///< the __global__ function (array pointers __restrict__ when unrolled)
  std::string alias_name;  ///< the same without __restrict__, for calls whose arrays overlap, or ""
  std::string fold_name;   ///< its fold kernel, or "" (only Reduce and ArgReduce have one)
  /// A contraction's register-tiled variant (emit_contraction.cpp), or "": the host launches it instead of
  /// `name` unless KILN_CUDA_CONTRACTION=0 (choose_launch).
  std::string tiles_name;
  int entry = -1, alias_entry = -1, fold_entry = -1, tiles_entry = -1;  ///< indices in Program::entries()
  const ir::ParforStmt* parfor = nullptr;
  Strategy strategy = Strategy::Elementwise;
  int rank = 1;
  /// Iterations per round of the innermost loop (Elementwise and Reduce) at most: the launch model
  /// (launch_model.hpp) runs fewer per thread where the grid would not fill the device.
  int unroll = 1;
  std::string plan;  ///< why the emitter spread the parfor as it did and its coarsening ceiling (diagnostics)
  /// Stencil kernels (emit_stencil.cpp): elements of the innermost dimension per thread (0: not a stencil
  /// kernel, `unroll` applies), and rows of the next dimension per thread.
  int stencil_columns = 0, stencil_rows = 1;
  /// A stencil kernel that marches along z: each block's threads walk one contiguous chunk of the first
  /// dimension (of gridDim.z chunks), so the grid's z is a choice of the launch (geometry.hpp).
  bool stencil_march = false;
  int march_halo = 0;  ///< the planes a marching chunk loads besides its own (the stencil's reach along z)
  /// A marching kernel in the block form (emit_march_block.cpp): blocks of 32 x this many threads, one tile of
  /// (y, x) a block; 0: the warp form's blocks.
  int march_block_rows = 0;
  StencilMode stencil_mode = StencilMode::Off;
  std::vector<Param> params;
  /// The kernel's array parameters that may overlap another (kernel arguments, which may be one array
  /// passed twice, and array bindings, which may name any array; arrays allocated by the kernel are
  /// distinct unless a binding captured alongside names them), with whether the parfor writes them. The host
  /// launches the alias variant when a written one overlaps another.
  std::vector<std::pair<const ir::VarNode*, bool>> argument_arrays;
  std::vector<ir::Reduction> reductions;
  std::vector<ArgClauses> clauses;  ///< per reduction (meaningful for ArgMin/ArgMax)
  /// Scratch slot of each reduction's value; arg reductions use the next slot for their index.
  std::vector<int> slot;
  int slots = 0;
  bool may_fail = false;  ///< contains checks or allocations: the host reads the status after it
  /// Array reductions that may update per-block copies in shared memory (private_copies.hpp); the launch
  /// decides which do (choose_launch) and passes the mask as the kernel's kiln_private argument.
  std::vector<PrivateCandidate> privates;
  /// Cooperative kernels: the length of the rows' first reduced range (end - begin of that nested parfor)
  /// when the host can evaluate it at launch (it reads nothing the row computes), which sizes the group.
  ir::Expr row_length;

  /// Byte offsets in the scratch buffer: partials of slot s, and the final value of slot s.
  static std::size_t partials_offset(int s) { return static_cast<std::size_t>(s) * kMaxReduceBlocks * kSlotBytes; }
  std::size_t result_offset(int s) const { return partials_offset(slots) + static_cast<std::size_t>(s) * kSlotBytes; }
  std::size_t scratch_bytes() const { return slots ? result_offset(slots) : 0; }
};

struct Program {
  std::shared_ptr<const ir::Function> function;  ///< the lowered kernel (the nodes below point into it)
  std::string prelude;                           ///< kiln's device helpers (ir/semantics.hpp in CUDA C)
  std::string kernels;                           ///< the generated __global__ functions
  std::vector<GpuKernel> gpu_kernels;
  /// Each __global__ function's text in `kernels` (begin, end; its comment lines with it), in the order
  /// emitted. Functions use nothing of one another, only the prelude, so they may be compiled in separate NVRTC
  /// programs (compile_parts.hpp). A launch's text that does not split into one function per entry is one
  /// range.
  std::vector<std::pair<std::size_t, std::size_t>> functions;

  std::string source() const { return prelude + kernels; }
  /// Every __global__ function, in the order of GpuKernel::entry, alias_entry and fold_entry.
  std::vector<std::string> entries() const;
};

}  // namespace kiln::codegen::cuda
