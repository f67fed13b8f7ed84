// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CUDA target's scan statement (ir::ScanStmt): a single pass over the memory, each element read once and
// written once, in the order ir/semantics.hpp defines (kScanBlock), so the bits are the interpreter's.
//
// A tile is `rows` consecutive 1024-element blocks of one line (a power of two dividing 1024, so that groups of
// carries start at tile boundaries). A block of threads takes the next tile from a counter (not blockIdx: every
// tile it waits for has started, whatever order the hardware schedules blocks in, so nothing deadlocks), copies
// it into shared memory (a whole tile in 8 bands of every block, each band's walks starting as it lands), and
// scans each of its blocks in order, a thread a block, in place. Each tile then publishes its blocks' totals. The
// carries need, for the tile's first block, the fold of the group's totals before it: a float fold is not
// associative, so it is not made of other tiles' partial results in whatever order they come: one warp of the
// group's first tile folds the group's totals in order as they are published and publishes each tile's fold, and
// the chain through the group for the next group. Every path gives the one left fold the definition names, so the
// bits do not depend on timing. Then every element is written: its running value combined with its block's carry
// (coalesced stores). Values exact in any association (integers, min, max) take a tree form with CUB's look-back.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/dtype.hpp"
#include "kiln/ops.hpp"

namespace kiln::codegen::cuda {

class CallState;

/// Threads of a tile's block of threads in kiln's order, and in the any-order form (kScanTreeValues values each,
/// whatever their size).
inline constexpr int kScanThreads = 128;
inline constexpr int kScanAnyThreads = 256;
inline constexpr int kScanTreeValues = 16;
/// The bytes of a tile's values in kiln's order unless CudaOptions::scan_tile_kib says otherwise: 4 blocks of doubles.
inline constexpr int kScanTileKib = 32;

/// 1024-element blocks per tile in kiln's order for combining type `t` and tiles of `tile_kib` KiB (at least 1,
/// at most 32: a lane of warp 0 walks each block).
int scan_tile_rows(DType t, int tile_kib);

/// Whether a scan in `t` with `op` gives kiln's bits in any association (integers wrap; min and max pick an
/// element), with values of 4 or 8 bytes: then the kernel scans a tile as a tree (shuffles), as CUB does.
bool scan_any_order(DType t, ReduceOp op);

/// The kernel's form: the tree over tiles of 256 threads' 16 values (any_order), or blocks of 1024 walked in
/// kiln's order, `rows` of them a tile.
struct ScanForm {
  bool any_order = false;
  int rows = 0;
};
ScanForm scan_form(DType t, ReduceOp op, int tile_kib);
/// Why scan_form chose its form, for diagnostics.
std::string scan_form_reason(DType t, ReduceOp op, int tile_kib);

/// The CUDA C of the scan kernel: `source` elements read, combined in `type` with `op` (Add, Mul, Min, Max),
/// stored as `out`, in `form` (ir::scan_stmt_types says which types go together, scan_any_order which may take
/// the tree; a ValueError otherwise).
std::string scan_source(DType source, DType type, DType out, ReduceOp op, ScanForm form);
/// Its __global__ function.
inline const char* scan_entry() { return "kiln_scan"; }

/// Scans the `lines` rows of `n` elements at device address `source` into those at `out` (both compact), in
/// kiln's order. Scratch comes from the call's stream-ordered memory. `label` ("kiln's scan of x", outliving
/// the call) names the launch among those a failure lists.
void scan_on_device(CallState& call, DType source_type, DType type, DType out_type, ReduceOp op, bool exclusive,
                    std::uint64_t source, std::uint64_t out, std::int64_t lines, std::int64_t n, int tile_kib,
                    const std::string& label);

}  // namespace kiln::codegen::cuda
