// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The runtime services compiled kernels call: the OpenMP thread team that runs parfor chunks, and
// allocation. Declared extern "C" with plain types so generated code can call them by address.
#pragma once

#include <cstdint>

#include "kiln/abi.hpp"

extern "C" {

/// One chunk of a parfor: iterations [lo, hi) of the outermost dimension (inner dimensions in full).
/// `partial` points to this block's reduction accumulators, or is null when the parfor has none.
typedef void (*kiln_chunk_fn)(void* ctx, std::int64_t lo, std::int64_t hi, void* partial);

/// Runs fn over [begin, end): the range is split statically into one contiguous piece per thread, using
/// at most ceil((end - begin) / grain) threads (grain: the fewest iterations worth a thread). Called from
/// inside another parfor it runs the whole range on the calling thread.
void kiln_rt_parfor(kiln_chunk_fn fn, void* ctx, std::int64_t begin, std::int64_t end, std::int64_t grain) noexcept;

/// kiln_rt_parfor for ranges whose iterations are not alike: iteration begin + k costs about
/// w_first + (w_last - w_first) k / (extent - 1) (a cost linear in the index, as a triangular loop nest's
/// rows are), and pieces start at multiples of `align` iterations from begin (a body run in vector lanes of
/// `align` iterations finishes a piece's last group with scalar code). Each of the
/// kiln_rt_parfor_width(begin, end, grain) pieces gets an equal share of the work, up to that rounding.
void kiln_rt_parfor_split(kiln_chunk_fn fn, void* ctx, std::int64_t begin, std::int64_t end, std::int64_t grain,
                          std::int64_t align, double w_first, double w_last) noexcept;

/// The number of reduction blocks for an iteration space of `extent` iterations: a pure function of the
/// extent (never of the thread count), at most kiln_rt_max_reduce_blocks. Blocks have length
/// ceil(extent / blocks), the last one shorter.
std::int64_t kiln_rt_reduce_blocks(std::int64_t extent) noexcept;
constexpr std::int64_t kiln_rt_max_reduce_blocks = 1024;

/// Runs fn once per block b over [begin + b*len, min(end, begin + (b+1)*len)) with partial =
/// partials + b * partial_size. Threads take contiguous runs of blocks. The caller combines the partials in
/// block order, so the result does not depend on the number of threads.
void kiln_rt_parfor_reduce(kiln_chunk_fn fn, void* ctx, std::int64_t begin, std::int64_t end, std::int64_t blocks,
                           void* partials, std::int64_t partial_size, std::int64_t grain) noexcept;

/// A chunk that also learns which piece of the range it belongs to (0 <= piece < pieces): array reductions
/// use it to find the piece's private copy of the array. `partial` is as for kiln_chunk_fn.
typedef void (*kiln_piece_fn)(void* ctx, std::int64_t lo, std::int64_t hi, void* partial, std::int64_t piece);

/// The number of pieces kiln_rt_parfor would split [begin, end) into: 0 for an empty range, 1 inside
/// another parfor (nested parfors run on the calling thread), else min(num_threads, ceil(extent / grain)).
std::int64_t kiln_rt_parfor_width(std::int64_t begin, std::int64_t end, std::int64_t grain) noexcept;

/// Runs fn over [begin, end) split into exactly `pieces` contiguous pieces (piece p is the p-th of `pieces`
/// near-equal parts, in order), calling fn once per piece with its number, whatever number of threads
/// OpenMP grants (a thread may then run several pieces one after another). With pieces <= 1, or inside
/// another parfor, everything runs on the calling thread. `partial` is null.
void kiln_rt_parfor_pieces(kiln_piece_fn fn, void* ctx, std::int64_t begin, std::int64_t end, std::int64_t pieces) noexcept;

/// kiln_rt_parfor_reduce with pieces: the `blocks` reduction blocks are dealt to `pieces` pieces as contiguous
/// runs (piece p gets the p-th of `pieces` near-equal runs), and fn is called once per block with that
/// block's partial and the number of the piece that owns it. Every block runs; a piece without blocks
/// (pieces > blocks) is never called.
void kiln_rt_parfor_reduce_pieces(kiln_piece_fn fn, void* ctx, std::int64_t begin, std::int64_t end, std::int64_t blocks,
                                  void* partials, std::int64_t partial_size, std::int64_t pieces) noexcept;

/// Per-piece private copies for an array reduction: one block holding `pieces` copies of `elements`
/// elements of `elem_size` bytes, copy p at byte offset p * round_up(elements * elem_size, 64), every
/// element set to the `elem_size` bytes at `identity`, copy p by the thread that kiln_rt_parfor_pieces runs
/// piece p on. Returns null, so that the caller updates the array in place with atomics instead, when
/// pieces <= 1 (one piece needs no copy), when the copies would take more than
/// kiln::runtime::private_copy_limit() bytes, or when memory is short. Give the block back with
/// kiln_rt_copies_done (kiln_rt_free also frees it).
void* kiln_rt_private_copies(std::int64_t pieces, std::int64_t elements, std::int64_t elem_size, const void* identity) noexcept;

/// Gives back a block from kiln_rt_private_copies (null: nothing). The runtime keeps one such block for the
/// next parfor's copies (at most private_copy_limit() bytes), so that a kernel called again and again does
/// not fault in fresh pages for its copies at every call.
void kiln_rt_copies_done(void* copies) noexcept;

/// The element types kiln_rt_combine_sums adds (a two's-complement sum is the same for signed and unsigned).
enum kiln_sum_type : std::int32_t { kiln_sum_f64 = 0, kiln_sum_f32 = 1, kiln_sum_i64 = 2, kiln_sum_i32 = 3 };

/// Folds the private copies of an array sum (kiln_rt_private_copies) into the array, as the generated combine
/// of other array reductions does: `data[e] = ((data[e] + copy_0[e]) + copy_1[e]) + ...` for every element
/// e, in piece order (exact IEEE additions, no reassociation), copy p at byte offset p * copy_bytes of
/// `copies`, each a dense row-major array of `shape`; `data` has element strides `stride`. Runs as a
/// parallel loop over the first axis, each thread a page's worth of rows. Precompiled so that a kernel with
/// array sums (the products' whole-space schedules) does not generate and compile a combine function of its
/// own for each of them.
void kiln_rt_combine_sums(void* data, const void* copies, std::int64_t copy_bytes, std::int64_t pieces,
                          const std::int64_t* shape, const std::int64_t* stride, std::int32_t rank,
                          std::int32_t type) noexcept;

/// Reports a failed run-time check: fills `status` with `code` and `message`, each `{}` replaced by the
/// next of the `n` values (as ir::format_message does; truncated to the message buffer). The first
/// failure of a call wins, as with kiln_rt_alloc. Never allocates.
void kiln_rt_fail(kiln::KernelStatus* status, std::int32_t code, const char* message, const std::int64_t* values,
                  std::int32_t n) noexcept;

/// Allocates a row-major array of `rank` extents of `elem_size` bytes each, 64-byte aligned (free it with
/// kiln_rt_free or std::free). When kiln::array_size's rule refuses the shape (a negative extent, a size beyond
/// kMaxArrayBytes: kShapeMismatch) or memory is exhausted (kOutOfMemory) it fills `status`, naming the array
/// `name` (the kernel's variable), and returns null; it never throws.
void* kiln_rt_alloc(kiln::KernelStatus* status, const std::int64_t* shape, std::int32_t rank, std::int64_t elem_size,
                    const char* name) noexcept;
void kiln_rt_free(void* p) noexcept;
/// Hands an array from kiln_rt_alloc to the kernel's caller, who frees it: it leaves the runtime's
/// allocation statistics (kiln::allocation_stats) without being freed.
void kiln_rt_release(void* p) noexcept;
}

namespace kiln::runtime {

/// The number of threads parfors use: KILN_NUM_THREADS if set, else OpenMP's default; set_num_threads(n >= 1)
/// overrides it and set_num_threads(n <= 0) drops the override.
int num_threads();
void set_num_threads(int n);

/// The most bytes an array reduction may spend on per-piece private copies (all pieces together) before
/// it updates the array with atomics instead: 4 MiB unless set_private_copy_limit(bytes >= 0) overrides
/// it; set_private_copy_limit(bytes < 0) drops the override. Read when a parfor starts.
std::int64_t private_copy_limit();
void set_private_copy_limit(std::int64_t bytes);

}  // namespace kiln::runtime
