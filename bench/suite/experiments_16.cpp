// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A self-contained experiment for the 16-core misses of kiln-suite (bicg, gemver, syrk, atax): it needs no
// libkiln. It links kiln's own generated code for the four kernels (bench/suite/experiments_16/*.s: kiln's
// optimized LLVM IR of main 8f6c23d, KILN_DUMP_LLVM=1, put through llc-19 -mcpu=sapphirerapids
// -mattr=-prefer-256-bit; the IR's vectorization was chosen for the 2-core znver4 VM's AVX-512, also 512-bit;
// syrk_lanes, syrk_split and bicg_fused are branch cpu16's code for them) against a copy of kiln's runtime
// (runtime/parallel.cpp) whose choices can be switched, and times, at the suite's sizes and in one process,
// interleaved:
//   - the hand reference (bench/suite/reference_polybench.cpp) and the reference again (the A/A band);
//   - kiln's code with the runtime as it is, and with one choice changed at a time: private copies filled
//     by their own piece's thread (today: by the calling thread below 1 MiB of copies), kept from call to
//     call (today: allocated and freed per call), combined by every thread (today: grain 2048 elements, so
//     3 threads for 5800 columns) or by the calling thread alone; syrk's rows split statically (today), in
//     equal-work parts for a triangle, or dynamically;
//   - hand-written mimics that isolate the loop structure: bicg with kiln's two passes over each row (the
//     row dot product, then the column-sum update from cache) against the reference's one fused pass, with
//     OpenMP's own array reduction; gemver in kiln's order (A's update fused with the column sums);
//   - a phase breakdown of kiln's call (allocation, copies, the main parfor, the combine, the rest), taken
//     inside the runtime copy, since the machine has no profiler;
//   - the cost of one empty parallel region (kiln's runtime and a bare omp parallel).
//   g++ -O3 -march=native -fopenmp bench/suite/experiments_16.cpp bench/suite/reference_polybench.cpp
//       bench/suite/experiments_16/*.s -o exp16 && ./exp16 --threads 16 --reps 15
#include <malloc.h>
#include <omp.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "reference.hpp"

namespace {

int g_threads = 16;

// ---------------------------------------------------------------------------------------------------------
// The runtime's switchable choices.
struct Mode {
  int fill = 0;      ///< 0: kiln's rule (the caller fills copies below 1 MiB in all); 1: each piece's thread
  bool keep = false; ///< keep the copies' block from call to call (filled again each call)
  int combine = 0;   ///< 0: the grain the code passes; 1: every thread; 2: the calling thread alone
  int split = 0;     ///< plain parfors: 0 static equal parts; 1 dynamic (atomic counter); 2 equal work for a
                     ///< lower triangle (iteration i costs i + 1)
};
Mode g_mode;

// Phase timers of the calling thread (seconds), summed over one kernel call.
struct Phases {
  double alloc = 0, copies = 0, pieces = 0, combine = 0, other = 0, free = 0;
  /// Over the call's parfors (the combine aside): the sum of the slowest piece's time and of the mean
  /// piece's time inside the chunk functions (the rest of a parfor's time is forking, joining, waiting).
  double slowest = 0, mean = 0;
};
Phases g_ph;
double g_piece_t[4096];

/// Adds the slowest and mean chunk times of the parfor that just ran over `n` pieces.
void note_pieces(std::int64_t n) {
  double mx = 0, sum = 0;
  for (std::int64_t p = 0; p < n; ++p) {
    mx = std::max(mx, g_piece_t[p]);
    sum += g_piece_t[p];
  }
  g_ph.slowest += mx;
  g_ph.mean += n ? sum / static_cast<double>(n) : 0;
}
bool g_after_pieces = false;  // the next plain parfor is the combine of the copies

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

struct Timer {
  double& into;
  double t0 = now();
  explicit Timer(double& x) : into(x) {}
  ~Timer() { into += now() - t0; }
};

struct KernelStatus {
  std::int32_t code = 0;
  char message[512] = {};
};

std::uint64_t piece_start(std::uint64_t extent, std::uint64_t n, std::uint64_t t) {
  const std::uint64_t base = extent / n, rem = extent % n;
  return t * base + std::min(t, rem);
}
std::int64_t ceil_div(std::uint64_t a, std::uint64_t b) { return static_cast<std::int64_t>(a / b + (a % b != 0)); }
std::int64_t width(std::uint64_t extent, std::int64_t grain) {
  if (extent == 0) return 0;
  if (omp_in_parallel()) return 1;
  const std::uint64_t g = static_cast<std::uint64_t>(std::max<std::int64_t>(grain, 1));
  return std::max<std::int64_t>(1, std::min<std::int64_t>(g_threads, ceil_div(extent, g)));
}
template <class Run>
void run_pieces(std::int64_t pieces, const Run& run) {
  if (pieces <= 1 || omp_in_parallel()) {
    for (std::int64_t p = 0; p < pieces; ++p) run(p);
    return;
  }
#pragma omp parallel num_threads(g_threads)
  {
    const std::int64_t n = omp_get_num_threads();
    for (std::int64_t p = omp_get_thread_num(); p < pieces; p += n) run(p);
  }
}

void* g_kept = nullptr;
std::uint64_t g_kept_bytes = 0;

}  // namespace

extern "C" {
typedef void (*kiln_chunk_fn)(void* ctx, std::int64_t lo, std::int64_t hi, void* partial);
typedef void (*kiln_piece_fn)(void* ctx, std::int64_t lo, std::int64_t hi, void* partial, std::int64_t piece);

void kiln_rt_parfor(kiln_chunk_fn fn, void* ctx, std::int64_t begin, std::int64_t end, std::int64_t grain) noexcept {
  const bool combine = g_after_pieces;
  g_after_pieces = false;
  Timer t(combine ? g_ph.combine : g_ph.other);
  if (end <= begin) return;
  const std::uint64_t extent = static_cast<std::uint64_t>(end - begin);
  if (combine && g_mode.combine == 1) grain = 1;
  if (combine && g_mode.combine == 2) grain = end - begin;
  const std::int64_t pieces = width(extent, grain);
  if (pieces <= 1) {
    fn(ctx, begin, end, nullptr);
    return;
  }
  if (!combine && g_mode.split == 1) {
    std::atomic<std::int64_t> next{begin};
    const std::int64_t chunk = std::max<std::int64_t>(1, static_cast<std::int64_t>(extent) / (pieces * 16));
    int used = 1;
#pragma omp parallel num_threads(g_threads)
    {
      const double t0 = now();
      for (;;) {
        const std::int64_t lo = next.fetch_add(chunk);
        if (lo >= end) break;
        fn(ctx, lo, std::min(end, lo + chunk), nullptr);
      }
      g_piece_t[omp_get_thread_num()] = now() - t0;
      if (omp_get_thread_num() == 0) used = omp_get_num_threads();
    }
    note_pieces(used);
    return;
  }
  if (!combine && g_mode.split == 2) {
    // Equal work for costs i + 1 (i from 0): boundary b_t with b_t (b_t + 1) / 2 = t/n of the total.
    const double total = static_cast<double>(end) * static_cast<double>(end + 1) / 2.0;
    int used = 1;
#pragma omp parallel num_threads(g_threads)
    {
      const int n = std::min<int>(omp_get_num_threads(), static_cast<int>(pieces));
      const int t = omp_get_thread_num();
      auto bound = [&](int k) {
        if (k >= n) return end;
        const double w = total * k / n;
        return std::clamp<std::int64_t>(static_cast<std::int64_t>(std::llround((-1.0 + std::sqrt(1.0 + 8.0 * w)) / 2.0)), begin, end);
      };
      if (t < n) {
        const double t0 = now();
        const std::int64_t lo = bound(t), hi = bound(t + 1);
        if (lo < hi) fn(ctx, lo, hi, nullptr);
        g_piece_t[t] = now() - t0;
      }
      if (t == 0) used = n;
    }
    note_pieces(used);
    return;
  }
  std::int64_t used = pieces;
#pragma omp parallel num_threads(g_threads)
  {
    const auto n = std::min(static_cast<std::uint64_t>(omp_get_num_threads()), static_cast<std::uint64_t>(pieces));
    const auto t = static_cast<std::uint64_t>(omp_get_thread_num());
    if (t == 0) used = static_cast<std::int64_t>(n);
    if (t < n) {
      const double t0 = now();
      const auto lo = static_cast<std::int64_t>(begin + piece_start(extent, n, t));
      const auto hi = static_cast<std::int64_t>(begin + piece_start(extent, n, t + 1));
      if (lo < hi) fn(ctx, lo, hi, nullptr);
      g_piece_t[t] = now() - t0;
    }
  }
  if (!combine) note_pieces(used);
}

// kiln_rt_parfor_split as on branch cpu16 (runtime/parallel.cpp): pieces of equal work for a cost linear in
// the index, starting at multiples of `align`.
void kiln_rt_parfor_split(kiln_chunk_fn fn, void* ctx, std::int64_t begin, std::int64_t end, std::int64_t grain,
                          std::int64_t align, double w_first, double w_last) noexcept {
  Timer tm(g_ph.other);
  if (end <= begin) return;
  const std::uint64_t extent = static_cast<std::uint64_t>(end - begin);
  const std::int64_t pieces = width(extent, grain);
  if (pieces <= 1) {
    fn(ctx, begin, end, nullptr);
    return;
  }
  auto start = [&](std::uint64_t n, std::uint64_t t) -> std::uint64_t {
    if (t == 0) return 0;
    if (t >= n) return extent;
    const double e = static_cast<double>(extent);
    const double a = std::max(w_first, 0.0);
    const double b = extent > 1 ? (std::max(w_last, 0.0) - a) / (e - 1.0) : 0.0;
    const double total = a * e + b * e * (e - 1.0) / 2.0;
    double x = e * static_cast<double>(t) / static_cast<double>(n);
    if (total > 0) {
      const double target = total * static_cast<double>(t) / static_cast<double>(n);
      const double c = a - b / 2.0;
      if (std::fabs(b) * e <= 1e-9 * std::max(std::fabs(c), 1e-300)) x = target / c;
      else x = (-c + std::sqrt(std::max(c * c + 2.0 * b * target, 0.0))) / b;
    }
    if (!(x > 0)) return 0;
    if (x >= e) return extent;
    const auto g = static_cast<std::uint64_t>(std::max<std::int64_t>(align, 1));
    return std::min(extent, (static_cast<std::uint64_t>(x) + g / 2) / g * g);
  };
  std::int64_t used = pieces;
#pragma omp parallel num_threads(g_threads)
  {
    const auto n = std::min(static_cast<std::uint64_t>(omp_get_num_threads()), static_cast<std::uint64_t>(pieces));
    const auto t = static_cast<std::uint64_t>(omp_get_thread_num());
    if (t == 0) used = static_cast<std::int64_t>(n);
    if (t < n) {
      const double t0 = now();
      const std::uint64_t lo = start(n, t), hi = start(n, t + 1);
      if (lo < hi) fn(ctx, begin + static_cast<std::int64_t>(lo), begin + static_cast<std::int64_t>(hi), nullptr);
      g_piece_t[t] = now() - t0;
    }
  }
  note_pieces(used);
}

std::int64_t kiln_rt_reduce_blocks(std::int64_t extent) noexcept {
  if (extent <= 0) return 0;
  return std::min<std::int64_t>(1024, ceil_div(static_cast<std::uint64_t>(extent), 2048));
}

void kiln_rt_parfor_reduce(kiln_chunk_fn fn, void* ctx, std::int64_t begin, std::int64_t end, std::int64_t blocks,
                           void* partials, std::int64_t partial_size, std::int64_t grain) noexcept {
  Timer tm(g_ph.other);
  if (blocks <= 0) return;
  const std::uint64_t extent = end > begin ? static_cast<std::uint64_t>(end - begin) : 0;
  const std::uint64_t len = extent == 0 ? 0 : static_cast<std::uint64_t>(ceil_div(extent, static_cast<std::uint64_t>(blocks)));
  auto run_blocks = [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t b = first; b < last; ++b) {
      const std::uint64_t lo = std::min(extent, static_cast<std::uint64_t>(b) * len), hi = std::min(extent, lo + len);
      fn(ctx, begin + static_cast<std::int64_t>(lo), begin + static_cast<std::int64_t>(hi), static_cast<char*>(partials) + b * partial_size);
    }
  };
  const std::uint64_t g = static_cast<std::uint64_t>(std::max<std::int64_t>(grain, 1));
  const std::int64_t threads = std::min({static_cast<std::int64_t>(g_threads), blocks, std::max<std::int64_t>(1, ceil_div(extent, g))});
  if (threads <= 1 || omp_in_parallel()) {
    run_blocks(0, blocks);
    return;
  }
#pragma omp parallel num_threads(g_threads)
  {
    const auto n = std::min(static_cast<std::uint64_t>(omp_get_num_threads()), static_cast<std::uint64_t>(threads));
    const auto t = static_cast<std::uint64_t>(omp_get_thread_num());
    const auto nb = static_cast<std::uint64_t>(blocks);
    if (t < n) run_blocks(static_cast<std::int64_t>(piece_start(nb, n, t)), static_cast<std::int64_t>(piece_start(nb, n, t + 1)));
  }
}

std::int64_t kiln_rt_parfor_width(std::int64_t begin, std::int64_t end, std::int64_t grain) noexcept {
  if (end <= begin) return 0;
  return width(static_cast<std::uint64_t>(end - begin), grain);
}

void kiln_rt_parfor_pieces(kiln_piece_fn fn, void* ctx, std::int64_t begin, std::int64_t end, std::int64_t pieces) noexcept {
  {
    Timer tm(g_ph.pieces);
    if (end <= begin || pieces <= 0) return;
    const std::uint64_t extent = static_cast<std::uint64_t>(end - begin);
    const auto n = static_cast<std::uint64_t>(pieces);
    run_pieces(pieces, [&](std::int64_t p) {
      const double t0 = now();
      const auto t = static_cast<std::uint64_t>(p);
      fn(ctx, begin + static_cast<std::int64_t>(piece_start(extent, n, t)), begin + static_cast<std::int64_t>(piece_start(extent, n, t + 1)),
         nullptr, p);
      g_piece_t[p] = now() - t0;
    });
    note_pieces(pieces);
  }
  g_after_pieces = pieces > 1;
}

void kiln_rt_parfor_reduce_pieces(kiln_piece_fn fn, void* ctx, std::int64_t begin, std::int64_t end, std::int64_t blocks,
                                  void* partials, std::int64_t partial_size, std::int64_t pieces) noexcept {
  {
    Timer tm(g_ph.pieces);
    if (blocks <= 0 || pieces <= 0) return;
    const std::uint64_t extent = end > begin ? static_cast<std::uint64_t>(end - begin) : 0;
    const std::uint64_t len = extent == 0 ? 0 : static_cast<std::uint64_t>(ceil_div(extent, static_cast<std::uint64_t>(blocks)));
    const auto nb = static_cast<std::uint64_t>(blocks), np = static_cast<std::uint64_t>(pieces);
    run_pieces(pieces, [&](std::int64_t p) {
      for (std::uint64_t b = piece_start(nb, np, static_cast<std::uint64_t>(p)); b < piece_start(nb, np, static_cast<std::uint64_t>(p) + 1); ++b) {
        const std::uint64_t lo = std::min(extent, b * len), hi = std::min(extent, lo + len);
        fn(ctx, begin + static_cast<std::int64_t>(lo), begin + static_cast<std::int64_t>(hi),
           static_cast<char*>(partials) + static_cast<std::int64_t>(b) * partial_size, p);
      }
    });
  }
  g_after_pieces = pieces > 1;
}

void* kiln_rt_private_copies(std::int64_t pieces, std::int64_t elements, std::int64_t elem_size, const void* identity) noexcept {
  Timer tm(g_ph.copies);
  if (pieces <= 1) return nullptr;
  const std::uint64_t bytes = static_cast<std::uint64_t>(elements) * static_cast<std::uint64_t>(elem_size);
  const std::uint64_t stride = (bytes + 63) / 64 * 64, total = stride * static_cast<std::uint64_t>(pieces);
  if (total > (std::uint64_t{4} << 20)) return nullptr;
  void* block = nullptr;
  if (g_mode.keep && g_kept && g_kept_bytes == total) {
    block = g_kept;
  } else {
    block = std::aligned_alloc(64, std::max<std::uint64_t>(total, 64));
    if (g_mode.keep) {
      std::free(g_kept);
      g_kept = block;
      g_kept_bytes = total;
    }
  }
  auto fill = [&](std::int64_t p) {
    char* copy = static_cast<char*>(block) + static_cast<std::uint64_t>(p) * stride;
    for (std::uint64_t off = 0; off + static_cast<std::uint64_t>(elem_size) <= stride; off += static_cast<std::uint64_t>(elem_size))
      std::memcpy(copy + off, identity, static_cast<std::size_t>(elem_size));
  };
  if (total >= (std::uint64_t{1} << 20) || g_mode.fill == 1) run_pieces(pieces, fill);
  else
    for (std::int64_t p = 0; p < pieces; ++p) fill(p);
  return block;
}

void kiln_rt_fail(KernelStatus* status, std::int32_t code, const char* message, const std::int64_t*, std::int32_t) noexcept {
  if (status && status->code == 0) {
    status->code = code;
    std::snprintf(status->message, sizeof status->message, "%s", message);
  }
}

void* kiln_rt_alloc(KernelStatus* status, const std::int64_t* shape, std::int32_t rank, std::int64_t elem_size, const char*) noexcept {
  Timer tm(g_ph.alloc);
  std::uint64_t bytes = static_cast<std::uint64_t>(elem_size);
  for (int k = 0; k < rank; ++k) bytes *= static_cast<std::uint64_t>(shape[k]);
  const std::size_t rounded = std::max<std::size_t>(64, (bytes + 63) / 64 * 64);
  void* p = std::aligned_alloc(64, rounded);
  if (!p && status) status->code = 1;
  return p;
}
void kiln_rt_free(void* p) noexcept {
  Timer tm(g_ph.free);
  if (p && p == g_kept) return;  // kept copies stay for the next call
  std::free(p);
}
void kiln_rt_release(void*) noexcept {}

// kiln's generated kernels (experiments_16/*.s).
int kiln_entry_atax(void** args, void* result, KernelStatus* status);
int kiln_entry_bicg(void** args, void* result, KernelStatus* status);
int kiln_entry_gemver(void** args, void* result, KernelStatus* status);
int kiln_entry_syrk(void** args, void* result, KernelStatus* status);
/// syrk as kiln generates it with lanes allowed for an array each lane only touches in a row of its own
/// (ir/lanes.cpp owns_slices, branch cpu16).
int kiln_entry_syrk_lanes(void** args, void* result, KernelStatus* status);
/// Branch cpu16's code: syrk in lanes with pieces of equal work (kiln_rt_parfor_split); bicg with the column
/// sums' row loop fused with the row dot product (one pass over each row of A).
int kiln_entry_syrk_split(void** args, void* result, KernelStatus* status);
int kiln_entry_bicg_fused(void** args, void* result, KernelStatus* status);
}

namespace {

struct Desc {
  void* data = nullptr;
  std::int64_t shape[4] = {};
  std::int64_t strides[4] = {};
};
Desc desc(double* p, std::int64_t n0, std::int64_t n1 = -1) {
  Desc d;
  d.data = p;
  d.shape[0] = n0;
  if (n1 < 0) {
    d.strides[0] = 1;
  } else {
    d.shape[1] = n1;
    d.strides[0] = n1;
    d.strides[1] = 1;
  }
  return d;
}

/// An array as kiln::NDArray allocates it: 64-byte aligned, huge pages advised from 4 MiB, filled by the
/// calling thread (random_array's first touch).
struct Arr {
  double* p = nullptr;
  std::size_t n = 0;
  Arr() = default;
  explicit Arr(std::size_t count, unsigned seed = 0) : n(count) {
    const std::size_t bytes = std::max<std::size_t>(64, (count * 8 + 63) / 64 * 64);
    p = static_cast<double*>(std::aligned_alloc(64, bytes));
    if (bytes >= (std::size_t{4} << 20)) (void)madvise(p, bytes & ~std::size_t{4095}, MADV_HUGEPAGE);
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> d(-1.0, 1.0);
    for (std::size_t i = 0; i < count; ++i) p[i] = seed ? d(rng) : 0.0;
  }
  Arr(const Arr&) = delete;
  Arr& operator=(const Arr&) = delete;
  ~Arr() { std::free(p); }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct Variant {
  std::string name;
  std::function<void()> run;
  std::function<void()> reset;  // before each timed call (restores in-place inputs), not timed
  std::vector<double> t;
  Phases ph_sum;
  std::vector<Phases> ph;
};

/// Times the variants interleaved (the order rotates every repetition) and prints medians and ratios to the
/// first variant (the reference).
void bench(const char* row, std::vector<Variant>& vs, int reps) {
  for (auto& v : vs)
    for (int w = 0; w < 2; ++w) {
      if (v.reset) v.reset();
      v.run();
    }
  const std::size_t n = vs.size();
  for (int r = 0; r < reps; ++r)
    for (std::size_t k = 0; k < n; ++k) {
      Variant& v = vs[(k + static_cast<std::size_t>(r)) % n];
      if (v.reset) v.reset();
      g_ph = Phases{};
      const double t0 = now();
      v.run();
      v.t.push_back(now() - t0);
      v.ph.push_back(g_ph);
    }
  const double ref = median(vs[0].t);
  std::printf("== %s (threads %d, reps %d): median ms, ratio to %s; kiln phases (ms): alloc, copies, pieces, combine, "
              "other parfors, free; chunks: slowest, mean\n", row,
              g_threads, reps, vs[0].name.c_str());
  for (auto& v : vs) {
    auto ph = [&](double Phases::*m) {
      std::vector<double> x;
      for (const auto& p : v.ph) x.push_back(p.*m);
      return median(x) * 1e3;
    };
    std::printf("  %-34s %8.3f  %6.3f", v.name.c_str(), median(v.t) * 1e3, median(v.t) / ref);
    if (ph(&Phases::pieces) + ph(&Phases::other) > 0)
      std::printf("   | %.3f %.3f %.3f %.3f %.3f %.3f | %.3f %.3f", ph(&Phases::alloc), ph(&Phases::copies), ph(&Phases::pieces),
                  ph(&Phases::combine), ph(&Phases::other), ph(&Phases::free), ph(&Phases::slowest), ph(&Phases::mean));
    std::printf("\n");
  }
  std::fflush(stdout);
}

/// max |a - b| / max(1, |b|)
double rel_err(const double* a, const double* b, std::size_t n) {
  double e = 0;
  for (std::size_t i = 0; i < n; ++i) e = std::max(e, std::fabs(a[i] - b[i]) / std::max(1.0, std::fabs(b[i])));
  return e;
}

/// A variant running kiln's code under a runtime mode.
std::function<void()> under(Mode m, std::function<void()> f) {
  return [m, f] {
    const Mode saved = g_mode;
    g_mode = m;
    f();
    g_mode = saved;
  };
}

std::vector<std::pair<std::string, Mode>> copy_modes() {
  std::vector<std::pair<std::string, Mode>> v;
  v.push_back({"kiln", Mode{}});
  Mode m;
  m.fill = 1;
  v.push_back({"kiln fill-by-owner", m});
  m.keep = true;
  v.push_back({"kiln fill-by-owner+kept", m});
  m = Mode{};
  m.combine = 1;
  v.push_back({"kiln combine-all-threads", m});
  m.combine = 2;
  v.push_back({"kiln combine-serial", m});
  m = Mode{};
  m.fill = 1;
  m.keep = true;
  m.combine = 1;
  v.push_back({"kiln owner+kept+combine-all", m});
  return v;
}

// ---- bicg: s = r^T A, q = A p; A n x m --------------------------------------------------------------------
/// kiln's loop structure with OpenMP's array reduction: per row the dot product first, then the update.
void bicg_two_pass(double* s, double* q, const double* A, const double* r, const double* p, long n, long m) {
  for (long j = 0; j < m; ++j) s[j] = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : s[:m]) num_threads(g_threads)
  for (long i = 0; i < n; ++i) {
    const double* a = A + i * m;
    double qi = 0.0;
#pragma omp simd reduction(+ : qi)
    for (long j = 0; j < m; ++j) qi += a[j] * p[j];
    q[i] = qi;
    const double ri = r[i];
#pragma omp simd
    for (long j = 0; j < m; ++j) s[j] += ri * a[j];
  }
}

/// The reference's one fused pass with kiln's copies: allocated per call, filled by each thread, combined in
/// piece order by every thread (slices of the columns).
void bicg_fused_kiln_copies(double* s, double* q, const double* A, const double* r, const double* p, long n, long m) {
  const long T = g_threads, stride = (m * 8 + 63) / 64 * 8;
  double* copies = static_cast<double*>(std::aligned_alloc(64, static_cast<std::size_t>(T * stride * 8)));
#pragma omp parallel num_threads(g_threads)
  {
    const long t = omp_get_thread_num(), nt = omp_get_num_threads();
    double* c = copies + t * stride;
    for (long j = 0; j < m; ++j) c[j] = -0.0;
    const long lo = static_cast<long>(piece_start(n, nt, t)), hi = static_cast<long>(piece_start(n, nt, t + 1));
    for (long i = lo; i < hi; ++i) {
      const double* a = A + i * m;
      const double ri = r[i];
      double qi = 0.0;
#pragma omp simd reduction(+ : qi)
      for (long j = 0; j < m; ++j) {
        c[j] += ri * a[j];
        qi += a[j] * p[j];
      }
      q[i] = qi;
    }
#pragma omp barrier
    const long jlo = static_cast<long>(piece_start(m, nt, t)), jhi = static_cast<long>(piece_start(m, nt, t + 1));
    for (long j = jlo; j < jhi; ++j) s[j] = -0.0;
    for (long k = 0; k < nt; ++k)
      for (long j = jlo; j < jhi; ++j) s[j] += copies[k * stride + j];
  }
  std::free(copies);
}

void bicg_row(int reps) {
  const long n = 6000, m = 5800;
  Arr A(static_cast<std::size_t>(n * m), 20), r(n, 21), p(m, 22), s_ref(m), q_ref(n), s2(m), q2(n);
  Desc dA = desc(A.p, n, m), dr = desc(r.p, n), dp = desc(p.p, m);
  void* args[] = {&dA, &dr, &dp};
  Desc out_s, out_q;
  void* outs[] = {&out_s, &out_q};
  auto kiln = [&] {
    KernelStatus st;
    std::free(out_s.data);
    std::free(out_q.data);
    if (kiln_entry_bicg(args, outs, &st) != 0) std::printf("bicg failed: %s\n", st.message);
  };
  std::vector<Variant> vs;
  vs.push_back({"reference", [&] { suite::ref::bicg(s_ref.p, q_ref.p, A.p, r.p, p.p, n, m, g_threads); }, {}});
  vs.push_back({"reference (A/A)", [&] { suite::ref::bicg(s_ref.p, q_ref.p, A.p, r.p, p.p, n, m, g_threads); }, {}});
  for (auto& [name, mode] : copy_modes()) vs.push_back({name, under(mode, kiln), {}});
  auto fused = [&] {
    KernelStatus st;
    std::free(out_s.data);
    std::free(out_q.data);
    if (kiln_entry_bicg_fused(args, outs, &st) != 0) std::printf("bicg failed: %s\n", st.message);
  };
  for (auto& [name, mode] : copy_modes()) vs.push_back({"cpu16 one pass: " + name, under(mode, fused), {}});
  vs.push_back({"hand two passes per row (omp copies)", [&] { bicg_two_pass(s2.p, q2.p, A.p, r.p, p.p, n, m); }, {}});
  vs.push_back({"hand fused pass, kiln-style copies", [&] { bicg_fused_kiln_copies(s2.p, q2.p, A.p, r.p, p.p, n, m); }, {}});
  bench("bicg n=6000 m=5800", vs, reps);
  kiln();
  fused();
  std::printf("  check: cpu16 one pass s %.2e q %.2e\n", rel_err(static_cast<double*>(out_s.data), s_ref.p, m),
              rel_err(static_cast<double*>(out_q.data), q_ref.p, n));
  kiln();
  std::printf("  check: kiln s %.2e q %.2e; two-pass s %.2e\n", rel_err(static_cast<double*>(out_s.data), s_ref.p, m),
              rel_err(static_cast<double*>(out_q.data), q_ref.p, n), (bicg_two_pass(s2.p, q2.p, A.p, r.p, p.p, n, m), rel_err(s2.p, s_ref.p, m)));
  std::free(out_s.data);
  std::free(out_q.data);
}

// ---- atax: y = A^T (A x); A m x n ---------------------------------------------------------------------------
void atax_row(int reps) {
  const long m = 6000, n = 5800;
  Arr A(static_cast<std::size_t>(m * n), 18), x(n, 19), y_ref(n), tmp(m);
  Desc dA = desc(A.p, m, n), dx = desc(x.p, n);
  void* args[] = {&dA, &dx};
  Desc out;
  auto kiln = [&] {
    KernelStatus st;
    std::free(out.data);
    if (kiln_entry_atax(args, &out, &st) != 0) std::printf("atax failed: %s\n", st.message);
  };
  std::vector<Variant> vs;
  vs.push_back({"reference", [&] { suite::ref::atax(y_ref.p, A.p, x.p, tmp.p, m, n, g_threads); }, {}});
  vs.push_back({"reference (A/A)", [&] { suite::ref::atax(y_ref.p, A.p, x.p, tmp.p, m, n, g_threads); }, {}});
  for (auto& [name, mode] : copy_modes()) vs.push_back({name, under(mode, kiln), {}});
  bench("atax m=6000 n=5800", vs, reps);
  kiln();
  std::printf("  check: kiln y %.2e\n", rel_err(static_cast<double*>(out.data), y_ref.p, n));
  std::free(out.data);
}

// ---- gemver --------------------------------------------------------------------------------------------------
/// kiln's order by hand: A's update fused with the column sums (OpenMP's array reduction), x, then w.
void gemver_kiln_order(double* A, double* x, double* w, const double* u1, const double* v1, const double* u2, const double* v2,
                       const double* y, const double* z, double alpha, double beta, long n) {
  std::vector<double> d(static_cast<std::size_t>(n), 0.0);
  double* dp = d.data();
#pragma omp parallel for schedule(static) reduction(+ : dp[:n]) num_threads(g_threads)
  for (long i = 0; i < n; ++i) {
    double* a = A + i * n;
#pragma omp simd
    for (long j = 0; j < n; ++j) {
      a[j] = a[j] + u1[i] * v1[j] + u2[i] * v2[j];
      dp[j] += y[i] * a[j];
    }
  }
  for (long j = 0; j < n; ++j) x[j] = x[j] + (beta * dp[j] + z[j]);
#pragma omp parallel for schedule(static) num_threads(g_threads)
  for (long i = 0; i < n; ++i) {
    const double* a = A + i * n;
    double s = 0.0;
#pragma omp simd reduction(+ : s)
    for (long j = 0; j < n; ++j) s += a[j] * x[j];
    w[i] = w[i] + alpha * s;
  }
}

void gemver_row(int reps) {
  const long n = 4000;
  const double alpha = 1.5, beta = 1.2;
  Arr A0(static_cast<std::size_t>(n * n), 28), x0(n, 29), w0(n, 30), u1(n, 31), v1(n, 32), u2(n, 33), v2(n, 34), y(n, 35), z(n, 36);
  Arr A(static_cast<std::size_t>(n * n), 28), x(n, 29), w(n, 30);
  Arr Ar(static_cast<std::size_t>(n * n), 28), xr(n, 29), wr(n, 30);
  auto reset = [&](Arr& a, Arr& b, Arr& c) {
    return [pa = &a, pb = &b, pc = &c, &A0, &x0, &w0] {
      std::memcpy(pa->p, A0.p, pa->n * 8);
      std::memcpy(pb->p, x0.p, pb->n * 8);
      std::memcpy(pc->p, w0.p, pc->n * 8);
    };
  };
  Desc dA = desc(A.p, n, n), dx = desc(x.p, n), dw = desc(w.p, n), du1 = desc(u1.p, n), dv1 = desc(v1.p, n), du2 = desc(u2.p, n),
       dv2 = desc(v2.p, n), dy = desc(y.p, n), dz = desc(z.p, n);
  double a9 = alpha, a10 = beta;
  void* args[] = {&dA, &dx, &dw, &du1, &dv1, &du2, &dv2, &dy, &dz, &a9, &a10};
  auto kiln = [&] {
    KernelStatus st;
    if (kiln_entry_gemver(args, nullptr, &st) != 0) std::printf("gemver failed: %s\n", st.message);
  };
  std::vector<Variant> vs;
  auto ref = [&] { suite::ref::gemver(Ar.p, xr.p, wr.p, u1.p, v1.p, u2.p, v2.p, y.p, z.p, alpha, beta, n, g_threads); };
  vs.push_back({"reference", ref, reset(Ar, xr, wr)});
  vs.push_back({"reference (A/A)", ref, reset(Ar, xr, wr)});
  for (auto& [name, mode] : copy_modes()) vs.push_back({name, under(mode, kiln), reset(A, x, w)});
  vs.push_back({"hand kiln order (omp copies)", [&] { gemver_kiln_order(Ar.p, xr.p, wr.p, u1.p, v1.p, u2.p, v2.p, y.p, z.p, alpha, beta, n); },
                reset(Ar, xr, wr)});
  bench("gemver n=4000", vs, reps);
  reset(A, x, w)();
  reset(Ar, xr, wr)();
  kiln();
  ref();
  std::printf("  check: kiln x %.2e w %.2e\n", rel_err(x.p, xr.p, n), rel_err(w.p, wr.p, n));
}

// ---- syrk: the lower triangle of C = alpha A A^T + beta C; A n x m ------------------------------------------
double row_dot_in_order(const double* a, const double* v, long n) {
  double s = 0.0;
  for (long j = 0; j < n; ++j) s += a[j] * v[j];
  return s;
}
void syrk_dynamic(double* C, const double* A, double alpha, double beta, long n, long m) {
#pragma omp parallel for schedule(dynamic, 4) num_threads(g_threads)
  for (long i = 0; i < n; ++i)
    for (long j = 0; j <= i; ++j) C[i * n + j] = beta * C[i * n + j] + alpha * row_dot_in_order(A + i * m, A + j * m, m);
}
/// In vector lanes as kiln's lanes would run it: 8 rows at a time, each lane its own in-order sum, the j loop
/// over the union of the lanes' ranges (masked). split: 0 static groups, 1 dynamic groups.
void syrk_lanes(double* C, const double* A, double alpha, double beta, long n, long m, int split) {
  const long groups = (n + 7) / 8;
  auto group = [&](long g) {
    const long i0 = g * 8;
    const long rows = std::min<long>(8, n - i0);
    for (long j = 0; j < i0 + rows; ++j) {
      double s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      const double* b = A + j * m;
      for (long k = 0; k < m; ++k) {
#pragma omp simd
        for (int l = 0; l < 8; ++l) s[l] += A[(i0 + (l < rows ? l : 0)) * m + k] * b[k];
      }
      for (long l = 0; l < rows; ++l)
        if (j <= i0 + l) C[(i0 + l) * n + j] = beta * C[(i0 + l) * n + j] + alpha * s[l];
    }
  };
  if (split == 0) {
#pragma omp parallel for schedule(static) num_threads(g_threads)
    for (long g = 0; g < groups; ++g) group(g);
  } else {
#pragma omp parallel for schedule(dynamic, 1) num_threads(g_threads)
    for (long g = 0; g < groups; ++g) group(g);
  }
}

void syrk_row(int reps) {
  const long n = 520, m = 480;
  const double alpha = 1.5, beta = 1.2;
  Arr C0(static_cast<std::size_t>(n * n), 40), A(static_cast<std::size_t>(n * m), 41), C(static_cast<std::size_t>(n * n), 40),
      Cr(static_cast<std::size_t>(n * n), 40);
  auto reset = [&](Arr& c) { return [pc = &c, &C0] { std::memcpy(pc->p, C0.p, pc->n * 8); }; };
  Desc dC = desc(C.p, n, n), dA = desc(A.p, n, m);
  double a2 = alpha, a3 = beta;
  void* args[] = {&dC, &dA, &a2, &a3};
  auto kiln = [&] {
    KernelStatus st;
    if (kiln_entry_syrk(args, nullptr, &st) != 0) std::printf("syrk failed: %s\n", st.message);
  };
  auto ref = [&] { suite::ref::syrk(Cr.p, A.p, alpha, beta, n, m, g_threads); };
  std::vector<Variant> vs;
  vs.push_back({"reference (static)", ref, reset(Cr)});
  vs.push_back({"reference (A/A)", ref, reset(Cr)});
  vs.push_back({"reference schedule(dynamic,4)", [&] { syrk_dynamic(Cr.p, A.p, alpha, beta, n, m); }, reset(Cr)});
  Mode m0;
  vs.push_back({"kiln (static split)", under(m0, kiln), reset(C)});
  m0.split = 1;
  vs.push_back({"kiln dynamic split", under(m0, kiln), reset(C)});
  m0.split = 2;
  vs.push_back({"kiln triangle-balanced split", under(m0, kiln), reset(C)});
  auto lanes = [&] {
    KernelStatus st;
    if (kiln_entry_syrk_lanes(args, nullptr, &st) != 0) std::printf("syrk failed: %s\n", st.message);
  };
  m0.split = 0;
  vs.push_back({"kiln lanes (static split)", under(m0, lanes), reset(C)});
  m0.split = 1;
  vs.push_back({"kiln lanes dynamic split", under(m0, lanes), reset(C)});
  m0.split = 2;
  vs.push_back({"kiln lanes triangle-balanced split", under(m0, lanes), reset(C)});
  auto split = [&] {
    KernelStatus st;
    if (kiln_entry_syrk_split(args, nullptr, &st) != 0) std::printf("syrk failed: %s\n", st.message);
  };
  m0.split = 0;
  vs.push_back({"cpu16 lanes, equal-work pieces", under(m0, split), reset(C)});
  vs.push_back({"hand lanes of 8 rows, static", [&] { syrk_lanes(Cr.p, A.p, alpha, beta, n, m, 0); }, reset(Cr)});
  vs.push_back({"hand lanes of 8 rows, dynamic", [&] { syrk_lanes(Cr.p, A.p, alpha, beta, n, m, 1); }, reset(Cr)});
  bench("syrk n=520 m=480", vs, reps);
  reset(C)();
  reset(Cr)();
  kiln();
  ref();
  std::printf("  check: kiln C %.2e", rel_err(C.p, Cr.p, static_cast<std::size_t>(n * n)));
  reset(C)();
  lanes();
  std::printf(", kiln lanes C %.2e", rel_err(C.p, Cr.p, static_cast<std::size_t>(n * n)));
  reset(C)();
  split();
  std::printf(", cpu16 C %.2e\n", rel_err(C.p, Cr.p, static_cast<std::size_t>(n * n)));
}

// ---- the cost of a parallel region -----------------------------------------------------------------------------
void noop_chunk(void*, std::int64_t, std::int64_t, void*) {}
void regions(int reps) {
  std::vector<double> k, o, ks;
  for (int r = 0; r < reps * 20; ++r) {
    double t0 = now();
    kiln_rt_parfor(noop_chunk, nullptr, 0, 1 << 20, 1);
    k.push_back(now() - t0);
    t0 = now();
#pragma omp parallel num_threads(g_threads)
    {
      asm volatile("" ::: "memory");
    }
    o.push_back(now() - t0);
  }
  for (int r = 0; r < reps; ++r) {  // after the team has gone to sleep
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, nullptr);
    const double t0 = now();
    kiln_rt_parfor(noop_chunk, nullptr, 0, 1 << 20, 1);
    ks.push_back(now() - t0);
  }
  std::printf("== empty parallel region (threads %d): kiln_rt_parfor %.1f us, omp parallel %.1f us, after 50 ms idle %.1f us\n", g_threads,
              median(k) * 1e6, median(o) * 1e6, median(ks) * 1e6);
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 15;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc) g_threads = std::atoi(argv[++i]);
    else if (a == "--reps" && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (a == "--filter" && i + 1 < argc) only = argv[++i];
  }
  std::printf("exp16: threads %d, reps %d, omp_get_max_threads %d, procs %d\n", g_threads, reps, omp_get_max_threads(), omp_get_num_procs());
  auto want = [&](const char* name) { return only.empty() || only.find(name) != std::string::npos; };
  if (want("regions")) regions(reps);
  if (want("syrk")) syrk_row(reps);
  if (want("bicg")) bicg_row(reps);
  if (want("atax")) atax_row(reps);
  if (want("gemver")) gemver_row(reps);
  if (want("regions")) regions(reps);
  return 0;
}
