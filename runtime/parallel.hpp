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

/// Allocates a row-major array of `rank` extents of `elem_size` bytes each, 64-byte aligned (free it with
/// kiln_rt_free or std::free). On a negative extent, overflow or exhausted memory it fills `status` and
/// returns null; it never throws.
void* kiln_rt_alloc(kiln::KernelStatus* status, const std::int64_t* shape, std::int32_t rank, std::int64_t elem_size) noexcept;
void kiln_rt_free(void* p) noexcept;
}

namespace kiln::runtime {

/// The number of threads parfors use: KILN_NUM_THREADS if set, else OpenMP's default; set_num_threads(n >= 1)
/// overrides it and set_num_threads(n <= 0) drops the override.
int num_threads();
void set_num_threads(int n);

}  // namespace kiln::runtime
