// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The runtime that compiled kernels call: parfor scheduling on the OpenMP team, deterministic reduction
// blocking and checked allocation. Everything here is reached from generated code, so nothing may throw.
#include "runtime/parallel.hpp"

#include <malloc.h>
#include <omp.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <mutex>

#include "kiln/ndarray.hpp"
#include "kiln/runtime.hpp"
#include "runtime/cuda/memory_totals.hpp"

namespace {

// Above this a KILN_NUM_THREADS value is certainly a typo rather than a machine.
constexpr long kMaxThreads = 4096;

/// KILN_NUM_THREADS, or 0 when it is unset or invalid (an invalid value is reported once, then ignored).
int env_threads() {
  const char* s = std::getenv("KILN_NUM_THREADS");
  if (!s || !*s) return 0;
  errno = 0;
  char* end = nullptr;
  const long v = std::strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < 1 || v > kMaxThreads) {
    std::fprintf(stderr, "kiln: ignoring KILN_NUM_THREADS=\"%s\" (expected an integer from 1 to %ld)\n", s,
                 kMaxThreads);
    return 0;
  }
  return static_cast<int>(v);
}

int default_threads() {
  static const int n = [] {
    const int e = env_threads();
    return e > 0 ? e : std::max(1, omp_get_max_threads());
  }();
  return n;
}

std::atomic<int> g_override{0};  // 0: no override

// Private copies of up to 4 MiB: a 256-bin histogram costs nothing at any thread count, while an array big
// enough that filling and combining copies would rival the loop itself is updated with atomics.
constexpr std::int64_t kDefaultPrivateCopyLimit = std::int64_t{4} << 20;
std::atomic<std::int64_t> g_private_limit{-1};  // < 0: the default

// Allocation statistics (kiln::allocation_stats). Relaxed atomics: kernels allocate a few times per call,
// so the counting costs nothing measurable, and a reader wants a consistent value only between calls.
std::atomic<std::int64_t> g_in_use{0};
std::atomic<std::int64_t> g_peak{0};
std::atomic<std::uint64_t> g_allocations{0};

/// Counts `p` (null: nothing) as taken (+1) or given back (-1), by the size the allocator really reserved.
void account(void* p, int sign) noexcept {
  if (!p) return;
  const auto bytes = static_cast<std::int64_t>(malloc_usable_size(p));
  if (sign < 0) {
    g_in_use.fetch_sub(bytes, std::memory_order_relaxed);
    return;
  }
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  const std::int64_t now = g_in_use.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  std::int64_t peak = g_peak.load(std::memory_order_relaxed);
  while (now > peak && !g_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

// Arrays from 4 MiB up ask for transparent huge pages, as NumPy does for its arrays: a fresh result is
// new memory that the OS faults in on first touch, and in 4 KiB pages that costs more than computing
// many kernels' results (a 160 MB array: about 40 ms of page faults on 2 cores, about 8 ms in 2 MiB pages).
// Only advice: where THP is off or unavailable nothing changes.
constexpr std::uint64_t kHugePageAdviceBytes = std::uint64_t{4} << 20;

void advise_huge_pages(void* p, std::uint64_t bytes) noexcept {
  constexpr std::uintptr_t kPage = 4096;
  const auto start = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t first = (start + kPage - 1) & ~(kPage - 1);
  if (first - start >= bytes) return;
  (void)madvise(reinterpret_cast<void*>(first), static_cast<std::size_t>(bytes - (first - start)), MADV_HUGEPAGE);
}

// The block of private copies the last array reduction gave back, kept for the next one (kiln_rt_copies_done).
// A block the size of a few hundred KB is above glibc's mmap threshold or at the top of its heap, so freed it
// goes back to the OS and the next call faults its pages in again (bicg at 16 threads: a 742 KB block per
// call). One block, the largest seen, at most private_copy_limit() bytes; a kernel running beside another
// takes it or allocates its own.
std::mutex g_spare_mutex;
void* g_spare = nullptr;
std::size_t g_spare_size = 0;

/// The kept block if it holds `size` bytes (the caller owns it then), else null.
void* take_spare_copies(std::size_t size) noexcept {
  std::lock_guard<std::mutex> lock(g_spare_mutex);
  if (!g_spare || g_spare_size < size) return nullptr;
  void* p = g_spare;
  g_spare = nullptr;
  return p;
}

/// Keeps `block` (a block of copies the caller gives up) when it is the larger, frees the other.
void keep_spare_copies(void* block) noexcept {
  const std::size_t size = malloc_usable_size(block);
  void* drop = block;
  {
    std::lock_guard<std::mutex> lock(g_spare_mutex);
    if (size > g_spare_size || !g_spare) {
      drop = g_spare;
      g_spare = block;
      g_spare_size = size;
    }
  }
  std::free(drop);
}

std::int64_t ceil_div(std::uint64_t a, std::uint64_t b) { return static_cast<std::int64_t>(a / b + (a % b != 0)); }

/// Piece t of n equal contiguous pieces of [0, extent): the first extent % n pieces get one more element.
std::uint64_t piece_start(std::uint64_t extent, std::uint64_t n, std::uint64_t t) {
  const std::uint64_t base = extent / n, rem = extent % n;
  return t * base + std::min(t, rem);
}

/// How many pieces a parfor over `extent` iterations runs as: at most one per thread and per `grain`
/// iterations; one inside another parfor, whose team is already busy.
std::int64_t width(std::uint64_t extent, std::int64_t grain) {
  if (extent == 0) return 0;
  if (omp_in_parallel()) return 1;
  const std::uint64_t g = static_cast<std::uint64_t>(std::max<std::int64_t>(grain, 1));
  return std::max<std::int64_t>(1, std::min<std::int64_t>(kiln::runtime::num_threads(), ceil_div(extent, g)));
}

/// The first iteration (an offset from the range's start) of piece t of n over `extent` iterations whose
/// costs grow linearly from w_first to w_last: where the work done so far, a x + b x (x - 1) / 2 with
/// a = w_first and b the step per iteration, reaches t / n of the total; rounded to a multiple of `align`.
std::uint64_t weighted_start(std::uint64_t extent, std::uint64_t n, std::uint64_t t, std::uint64_t align, double w_first,
                             double w_last) {
  if (t == 0) return 0;
  if (t >= n) return extent;
  const double e = static_cast<double>(extent);
  const double a = std::max(w_first, 0.0);
  const double b = extent > 1 ? (std::max(w_last, 0.0) - a) / (e - 1.0) : 0.0;
  const double total = a * e + b * e * (e - 1.0) / 2.0;
  double x = e * static_cast<double>(t) / static_cast<double>(n);  // equal parts when the work is unknown
  if (total > 0) {
    const double target = total * static_cast<double>(t) / static_cast<double>(n);
    const double c = a - b / 2.0;  // work(x) = c x + (b / 2) x^2
    if (std::fabs(b) * e <= 1e-9 * std::max(std::fabs(c), 1e-300)) x = target / c;
    else x = (-c + std::sqrt(std::max(c * c + 2.0 * b * target, 0.0))) / b;
  }
  if (!(x > 0)) return 0;
  if (x >= e) return extent;
  const auto g = std::max<std::uint64_t>(align, 1);
  return std::min(extent, (static_cast<std::uint64_t>(x) + g / 2) / g * g);
}


/// The team every parallel region asks for: kiln's thread count, however few pieces the parfor has (the
/// threads beyond them go straight to the region's end). libgomp ends its pool's spare threads whenever a
/// region asks for fewer threads than the one before and starts them again for the next larger one, so
/// kernels whose parfors fork teams of different sizes (a few column blocks, then every row) paid thread
/// creation on every call: on the 16-core GPU machine a loop alternating regions of 16 and 2 threads took
/// 727 us per iteration against 30 us with 16 each time (14 clone3 calls per iteration under strace).
int team() { return kiln::runtime::num_threads(); }

/// Runs fn over [begin, end) as kiln_rt_parfor does, piece t of the n pieces starting at offset
/// start(extent, n, t) from begin (start(extent, n, 0) = 0, start(extent, n, n) = extent, never decreasing in t).
template <class Start>
void run_split(kiln_chunk_fn fn, void* ctx, std::int64_t begin, std::int64_t end, std::int64_t grain, const Start& start) {
  if (end <= begin) return;
  // end - begin may not fit in int64 (e.g. [-2^62, 2^62)); it always fits in uint64.
  const std::uint64_t extent = static_cast<std::uint64_t>(end) - static_cast<std::uint64_t>(begin);
  const std::int64_t pieces = width(extent, grain);
  if (pieces <= 1) {
    fn(ctx, begin, end, nullptr);
    return;
  }
#pragma omp parallel num_threads(team())
  {
    // `pieces` workers, or as many threads as OpenMP granted if fewer; the other threads have no piece.
    const auto n = std::min(static_cast<std::uint64_t>(omp_get_num_threads()), static_cast<std::uint64_t>(pieces));
    const auto t = static_cast<std::uint64_t>(omp_get_thread_num());
    if (t < n) {
      const auto lo = static_cast<std::int64_t>(static_cast<std::uint64_t>(begin) + start(extent, n, t));
      const auto hi = static_cast<std::int64_t>(static_cast<std::uint64_t>(begin) + start(extent, n, t + 1));
      if (lo < hi) fn(ctx, lo, hi, nullptr);
    }
  }
}

/// Calls run(p) for every piece p of [0, pieces): piece p on thread p % n of the team of n threads, so each
/// piece runs exactly once whatever number of threads OpenMP grants.
template <class Run>
void run_pieces(std::int64_t pieces, const Run& run) {
  if (pieces <= 1 || omp_in_parallel()) {
    for (std::int64_t p = 0; p < pieces; ++p) run(p);
    return;
  }
#pragma omp parallel num_threads(team())
  {
    const std::int64_t n = omp_get_num_threads();
    for (std::int64_t p = omp_get_thread_num(); p < pieces; p += n) run(p);
  }
}

/// Records a failure in `status` unless an earlier one is there (chunks of one call may fail concurrently).
/// Formats into the fixed message buffer: no allocation, so it cannot throw even when memory is exhausted.
template <class... Args>
void report(kiln::KernelStatus* status, std::int32_t code, const char* format, Args... args) {
  if (!status) return;
  std::atomic_ref<std::int32_t> c(status->code);
  std::int32_t expected = 0;
  if (!c.compare_exchange_strong(expected, code)) return;
  std::snprintf(status->message, sizeof status->message, format, args...);
}

/// "(3, -1)" or "(5,)", truncated to the buffer.
struct ShapeText {
  char text[128] = {};
  ShapeText(const std::int64_t* shape, std::int32_t rank) {
    int n = std::snprintf(text, sizeof text, "(");
    for (std::int32_t k = 0; k < rank && n > 0 && n < static_cast<int>(sizeof text); ++k)
      n += std::snprintf(text + n, sizeof text - static_cast<std::size_t>(n), "%s%lld", k ? ", " : "",
                         static_cast<long long>(shape[k]));
    if (n > 0 && n < static_cast<int>(sizeof text))
      std::snprintf(text + n, sizeof text - static_cast<std::size_t>(n), "%s", rank == 1 ? ",)" : ")");
  }
};

}  // namespace

namespace kiln::runtime {

int num_threads() {
  const int o = g_override.load(std::memory_order_relaxed);
  return o > 0 ? o : default_threads();
}

// n <= 0 drops the override, going back to KILN_NUM_THREADS / OpenMP's default.
void set_num_threads(int n) { g_override.store(n > 0 ? n : 0, std::memory_order_relaxed); }

std::int64_t private_copy_limit() {
  const std::int64_t v = g_private_limit.load(std::memory_order_relaxed);
  return v >= 0 ? v : kDefaultPrivateCopyLimit;
}

void set_private_copy_limit(std::int64_t bytes) { g_private_limit.store(bytes >= 0 ? bytes : -1, std::memory_order_relaxed); }

}  // namespace kiln::runtime

namespace kiln {

AllocationStats allocation_stats() {
  AllocationStats s;
  s.in_use_bytes = g_in_use.load(std::memory_order_relaxed);
  s.peak_bytes = g_peak.load(std::memory_order_relaxed);
  s.allocations = g_allocations.load(std::memory_order_relaxed);
  const gpu::MemoryTotals device = gpu::memory_totals();
  s.device_in_use_bytes = device.in_use_bytes;
  s.device_peak_bytes = device.peak_bytes;
  return s;
}

void reset_allocation_peak() {
  g_peak.store(g_in_use.load(std::memory_order_relaxed), std::memory_order_relaxed);
  gpu::reset_memory_peaks();
}

namespace detail {
// Kernel results (kiln_rt_alloc, which also counts them in allocation_stats()) and NDArrays.
void* allocate_array_memory(std::size_t bytes) noexcept {
  if (bytes > static_cast<std::size_t>(PTRDIFF_MAX) - 64) return nullptr;
  // aligned_alloc needs a size that is a multiple of the alignment; a zero-size array still gets a block.
  const std::size_t rounded = std::max<std::size_t>(64, (bytes + 63) / 64 * 64);
  void* p = std::aligned_alloc(64, rounded);
  if (p && rounded >= kHugePageAdviceBytes) advise_huge_pages(p, rounded);
  return p;
}
}  // namespace detail

}  // namespace kiln

extern "C" {

void kiln_rt_parfor(kiln_chunk_fn fn, void* ctx, std::int64_t begin, std::int64_t end, std::int64_t grain) noexcept {
  run_split(fn, ctx, begin, end, grain, piece_start);
}

void kiln_rt_parfor_split(kiln_chunk_fn fn, void* ctx, std::int64_t begin, std::int64_t end, std::int64_t grain,
                          std::int64_t align, double w_first, double w_last) noexcept {
  const auto g = static_cast<std::uint64_t>(std::max<std::int64_t>(align, 1));
  run_split(fn, ctx, begin, end, grain, [&](std::uint64_t extent, std::uint64_t n, std::uint64_t t) {
    return weighted_start(extent, n, t, g, w_first, w_last);
  });
}

// Blocks of about 2048 iterations: large enough that a block's loop vectorizes and amortizes its call,
// small enough that 1024 blocks spread well over any thread count.
std::int64_t kiln_rt_reduce_blocks(std::int64_t extent) noexcept {
  constexpr std::int64_t kBlockIterations = 2048;
  if (extent <= 0) return 0;
  return std::min<std::int64_t>(kiln_rt_max_reduce_blocks, ceil_div(static_cast<std::uint64_t>(extent), kBlockIterations));
}

void kiln_rt_parfor_reduce(kiln_chunk_fn fn, void* ctx, std::int64_t begin, std::int64_t end, std::int64_t blocks,
                           void* partials, std::int64_t partial_size, std::int64_t grain) noexcept {
  if (blocks <= 0) return;
  const std::uint64_t extent = end > begin ? static_cast<std::uint64_t>(end) - static_cast<std::uint64_t>(begin) : 0;
  const std::uint64_t len = extent == 0 ? 0 : static_cast<std::uint64_t>(ceil_div(extent, static_cast<std::uint64_t>(blocks)));
  // Every block runs, even an empty one, so that every partial is written (an empty block writes identities).
  auto run_blocks = [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t b = first; b < last; ++b) {
      const std::uint64_t off_lo = std::min(extent, static_cast<std::uint64_t>(b) * len);
      const std::uint64_t off_hi = std::min(extent, off_lo + len);
      fn(ctx, static_cast<std::int64_t>(static_cast<std::uint64_t>(begin) + off_lo),
         static_cast<std::int64_t>(static_cast<std::uint64_t>(begin) + off_hi),
         static_cast<char*>(partials) + b * partial_size);
    }
  };
  const std::uint64_t g = static_cast<std::uint64_t>(std::max<std::int64_t>(grain, 1));
  const std::int64_t threads = std::min({static_cast<std::int64_t>(kiln::runtime::num_threads()), blocks,
                                         std::max<std::int64_t>(1, ceil_div(extent, g))});
  if (threads <= 1 || omp_in_parallel()) {
    run_blocks(0, blocks);
    return;
  }
#pragma omp parallel num_threads(team())
  {
    const auto n = std::min(static_cast<std::uint64_t>(omp_get_num_threads()), static_cast<std::uint64_t>(threads));
    const auto t = static_cast<std::uint64_t>(omp_get_thread_num());
    const auto nb = static_cast<std::uint64_t>(blocks);
    if (t < n) run_blocks(static_cast<std::int64_t>(piece_start(nb, n, t)), static_cast<std::int64_t>(piece_start(nb, n, t + 1)));
  }
}

std::int64_t kiln_rt_parfor_width(std::int64_t begin, std::int64_t end, std::int64_t grain) noexcept {
  if (end <= begin) return 0;
  return width(static_cast<std::uint64_t>(end) - static_cast<std::uint64_t>(begin), grain);
}

void kiln_rt_parfor_pieces(kiln_piece_fn fn, void* ctx, std::int64_t begin, std::int64_t end, std::int64_t pieces) noexcept {
  if (end <= begin || pieces <= 0) return;
  const std::uint64_t extent = static_cast<std::uint64_t>(end) - static_cast<std::uint64_t>(begin);
  const auto n = static_cast<std::uint64_t>(pieces);
  run_pieces(pieces, [&](std::int64_t p) {
    const auto t = static_cast<std::uint64_t>(p);
    fn(ctx, static_cast<std::int64_t>(static_cast<std::uint64_t>(begin) + piece_start(extent, n, t)),
       static_cast<std::int64_t>(static_cast<std::uint64_t>(begin) + piece_start(extent, n, t + 1)), nullptr, p);
  });
}

void kiln_rt_parfor_reduce_pieces(kiln_piece_fn fn, void* ctx, std::int64_t begin, std::int64_t end, std::int64_t blocks,
                                  void* partials, std::int64_t partial_size, std::int64_t pieces) noexcept {
  if (blocks <= 0 || pieces <= 0) return;
  const std::uint64_t extent = end > begin ? static_cast<std::uint64_t>(end) - static_cast<std::uint64_t>(begin) : 0;
  const std::uint64_t len = extent == 0 ? 0 : static_cast<std::uint64_t>(ceil_div(extent, static_cast<std::uint64_t>(blocks)));
  const auto nb = static_cast<std::uint64_t>(blocks), np = static_cast<std::uint64_t>(pieces);
  run_pieces(pieces, [&](std::int64_t p) {
    const auto t = static_cast<std::uint64_t>(p);
    for (std::uint64_t b = piece_start(nb, np, t); b < piece_start(nb, np, t + 1); ++b) {
      const std::uint64_t off_lo = std::min(extent, b * len);
      const std::uint64_t off_hi = std::min(extent, off_lo + len);
      fn(ctx, static_cast<std::int64_t>(static_cast<std::uint64_t>(begin) + off_lo),
         static_cast<std::int64_t>(static_cast<std::uint64_t>(begin) + off_hi),
         static_cast<char*>(partials) + static_cast<std::int64_t>(b) * partial_size, p);
    }
  });
}

void* kiln_rt_private_copies(std::int64_t pieces, std::int64_t elements, std::int64_t elem_size, const void* identity) noexcept {
  if (pieces <= 1 || elements < 0 || elem_size <= 0) return nullptr;
  std::uint64_t bytes = 0, total = 0;
  if (__builtin_mul_overflow(static_cast<std::uint64_t>(elements), static_cast<std::uint64_t>(elem_size), &bytes))
    return nullptr;
  const std::uint64_t stride = (bytes + 63) / 64 * 64;
  if (stride < bytes || __builtin_mul_overflow(stride, static_cast<std::uint64_t>(pieces), &total)) return nullptr;
  if (total > static_cast<std::uint64_t>(kiln::runtime::private_copy_limit())) return nullptr;
  const auto size = static_cast<std::size_t>(std::max<std::uint64_t>(total, 64));
  void* block = take_spare_copies(size);
  if (!block) block = std::aligned_alloc(64, size);
  if (!block) return nullptr;
  account(block, +1);
  // Each piece's copy is filled by the thread that runs the piece (run_pieces deals pieces to threads as
  // kiln_rt_parfor_pieces does): its pages and lines are then that thread's. Filled by the calling thread
  // (as below 1 MiB before),
  // the copies cost more than the combine and the region together: bicg's 16 copies of 5800 doubles (742 KB)
  // took 0.50 ms of a 3.36 ms call on the 16-core Xeon, 0.045 ms filled by their pieces' threads
  // (bench/suite/experiments_16.cpp). Copies smaller than 64 KiB in all (a histogram of a few hundred bins)
  // are filled here: a parallel region costs about what writing 64 KiB does (4 us for 16 threads there).
  // The padding after a copy is filled too, which is harmless.
  auto fill = [&](std::int64_t p) {
    char* copy = static_cast<char*>(block) + static_cast<std::uint64_t>(p) * stride;
    for (std::uint64_t off = 0; off + static_cast<std::uint64_t>(elem_size) <= stride; off += static_cast<std::uint64_t>(elem_size))
      std::memcpy(copy + off, identity, static_cast<std::size_t>(elem_size));
  };
  constexpr std::uint64_t kParallelFillBytes = std::uint64_t{64} << 10;
  if (total >= kParallelFillBytes) run_pieces(pieces, fill);
  else
    for (std::int64_t p = 0; p < pieces; ++p) fill(p);
  return block;
}

void kiln_rt_copies_done(void* copies) noexcept {
  if (!copies) return;
  account(copies, -1);
  keep_spare_copies(copies);
}

void kiln_rt_fail(kiln::KernelStatus* status, std::int32_t code, const char* message, const std::int64_t* values,
                  std::int32_t n) noexcept {
  if (!status) return;
  std::atomic_ref<std::int32_t> c(status->code);
  std::int32_t expected = 0;
  if (!c.compare_exchange_strong(expected, code)) return;
  // ir::format_message's rule: each `{}` takes the next value while values remain; the rest is literal.
  char* out = status->message;
  const std::size_t cap = sizeof status->message - 1;
  std::size_t len = 0;
  std::int32_t next = 0;
  for (const char* m = message; *m && len < cap; ++m) {
    if (m[0] == '{' && m[1] == '}' && next < n) {
      char number[24];
      const int w = std::snprintf(number, sizeof number, "%lld", static_cast<long long>(values[next++]));
      for (int k = 0; k < w && len < cap; ++k) out[len++] = number[k];
      ++m;
    } else {
      out[len++] = *m;
    }
  }
  out[len] = '\0';
}

void* kiln_rt_alloc(kiln::KernelStatus* status, const std::int64_t* shape, std::int32_t rank, std::int64_t elem_size,
                    const char* name) noexcept {
  if (!name) name = "array";
  if (rank < 0 || rank > kiln::kMaxRank || elem_size <= 0) {
    report(status, kiln::kShapeMismatch, "cannot allocate array '%s' of rank %d with %lld-byte elements", name, rank,
           static_cast<long long>(elem_size));
    return nullptr;
  }
  const kiln::ArraySize size = kiln::array_size(shape, rank, elem_size);
  if (size.negative_axis >= 0) {
    report(status, kiln::kShapeMismatch, "cannot allocate array '%s' of shape %s: negative extent on axis %d", name,
           ShapeText(shape, rank).text, size.negative_axis);
    return nullptr;
  }
  if (size.too_large) {
    report(status, kiln::kShapeMismatch,
           "cannot allocate array '%s' of shape %s with %lld-byte elements: its size in bytes exceeds %lld", name,
           ShapeText(shape, rank).text, static_cast<long long>(elem_size), static_cast<long long>(kiln::kMaxArrayBytes));
    return nullptr;
  }
  void* p = kiln::detail::allocate_array_memory(static_cast<std::size_t>(size.bytes));
  if (!p)
    report(status, kiln::kOutOfMemory, "out of memory allocating array '%s' of shape %s (%lld bytes)", name,
           ShapeText(shape, rank).text, static_cast<long long>(size.bytes));
  account(p, +1);
  return p;
}

void kiln_rt_free(void* p) noexcept {
  account(p, -1);
  std::free(p);
}

void kiln_rt_release(void* p) noexcept { account(p, -1); }

}  // extern "C"
