// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln::cumsum on the GPU against hand-written CUDA scans. kiln follows its defined order (ir/semantics.hpp:
// blocks of 1024 scanned in order, carries folded in order; the same bits as the CPU and the interpreter); the
// hand scans add in their own orders, so results are compared within rounding.
#include "bench/gpu/scan_rows.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "bench/measure.hpp"
#include "codegen/cuda/nvrtc.hpp"
#include "frontend/settings.hpp"
#include "ir/semantics.hpp"
#include "kiln/kiln.hpp"
#include "runtime/cuda/module.hpp"

namespace benchgpu {
namespace {

constexpr const char* kSource = R"CUDA(
#define TILE_THREADS 256
#define ITEMS 16

// The exclusive prefix of v over the block's threads (warp shuffles, then the warps' totals); *total gets the
// block's sum. Every thread of the block calls it.
__device__ double block_exclusive_scan(double v, double* total) {
  __shared__ double warp_sums[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  double x = v;
  for (int off = 1; off < 32; off <<= 1) {
    const double y = __shfl_up_sync(0xffffffffu, x, off);
    if (lane >= off) x += y;
  }
  double before_lane = __shfl_up_sync(0xffffffffu, x, 1);
  if (lane == 0) before_lane = 0.0;
  if (lane == 31) warp_sums[warp] = x;
  __syncthreads();
  if (warp == 0) {
    double w = lane < warps ? warp_sums[lane] : 0.0;
    for (int off = 1; off < 32; off <<= 1) {
      const double y = __shfl_up_sync(0xffffffffu, w, off);
      if (lane >= off) w += y;
    }
    if (lane < warps) warp_sums[lane] = w;
  }
  __syncthreads();
  const double before_warp = warp ? warp_sums[warp - 1] : 0.0;
  *total = warp_sums[warps - 1];
  __syncthreads();  // warp_sums is read above before the next call overwrites it
  return before_warp + before_lane;
}

// (1) The total of each tile of TILE_THREADS * ITEMS elements (coalesced reads).
extern "C" __global__ void ref_scan_totals(const double* __restrict__ x, long long n, double* __restrict__ totals) {
  const long long base = (long long)blockIdx.x * TILE_THREADS * ITEMS;
  double s = 0.0;
  for (int j = 0; j < ITEMS; ++j) {
    const long long i = base + (long long)j * TILE_THREADS + threadIdx.x;
    if (i < n) s += x[i];
  }
  double total;
  block_exclusive_scan(s, &total);
  if (threadIdx.x == 0) totals[blockIdx.x] = total;
}

// (2) One block: the tile totals become exclusive tile carries, in place, 1024 at a time.
extern "C" __global__ void ref_scan_carries(double* totals, long long tiles) {
  double carry = 0.0;
  for (long long lo = 0; lo < tiles; lo += blockDim.x) {
    const long long i = lo + threadIdx.x;
    const double v = i < tiles ? totals[i] : 0.0;
    double chunk;
    const double before = block_exclusive_scan(v, &chunk);
    if (i < tiles) totals[i] = carry + before;
    carry += chunk;
  }
}

// (3) Each tile: staged through shared memory, each thread scans ITEMS consecutive elements, a block scan of
// the thread totals gives each thread its start, plus the tile's carry; written back coalesced.
extern "C" __global__ void ref_scan_apply(const double* __restrict__ x, double* __restrict__ out, long long n,
                                          const double* __restrict__ carries) {
  __shared__ double tile[TILE_THREADS * ITEMS + TILE_THREADS * ITEMS / 32];  // one pad word per 32
  const long long base = (long long)blockIdx.x * TILE_THREADS * ITEMS;
  #define PAD(k) ((k) + (k) / 32)
  for (int j = 0; j < ITEMS; ++j) {
    const int k = j * TILE_THREADS + threadIdx.x;
    tile[PAD(k)] = base + k < n ? x[base + k] : 0.0;
  }
  __syncthreads();
  double s = 0.0;
  for (int j = 0; j < ITEMS; ++j) {
    const int k = threadIdx.x * ITEMS + j;
    s += tile[PAD(k)];
    tile[PAD(k)] = s;
  }
  double block_total;
  const double start = block_exclusive_scan(s, &block_total) + carries[blockIdx.x];
  for (int j = 0; j < ITEMS; ++j) tile[PAD(threadIdx.x * ITEMS + j)] += start;
  __syncthreads();
  for (int j = 0; j < ITEMS; ++j) {
    const int k = j * TILE_THREADS + threadIdx.x;
    if (base + k < n) out[base + k] = tile[PAD(k)];
  }
}

// kiln's own order (ir/semantics.hpp, docs/scans.md), by hand: blocks of DB elements each folded in order from
// its first element; the carries the totals folded in order in groups of DB, the groups' folds a chain in order;
// each block rescanned with its carry (after the first group, the previous group's chained carry plus its
// group's fold). A thread walks one block (or group); a CTA of DT threads stages DS steps of each of its DT blocks through shared memory per chunk
// (consecutive threads, consecutive elements), the next chunk's loads issued before this chunk's steps run.
// The same bits as kiln::cumsum; timed pass by pass, it says what the defined order costs on this device.
#define DB 1024
#define DT 128
#define DS 16

// The DS cells thread x stages per chunk: step x % DS of the CTA's blocks x / DS + r * (DT / DS), r < DS, at
// constant offsets from one pointer (the same shape as kiln's staged walks: codegen/cuda/emit_staged.cpp).
__device__ __forceinline__ void def_fetch(const double* x, long long b0, long long blocks, long long n,
                                          int s0, double* v) {
  const int t0 = threadIdx.x / DS, j = threadIdx.x % DS;
  const double* p = x + (b0 + t0) * DB + s0 + j;
  const long long left = n - ((b0 + t0) * DB + s0 + j);  // elements from p to the end
  #pragma unroll
  for (int r = 0; r < DS; ++r) {
    const long long off = (long long)r * (DT / DS) * DB;
    v[r] = b0 + t0 + r * (DT / DS) < blocks && s0 < DB && off < left ? p[off] : 0.0;
  }
}
__device__ __forceinline__ void def_fill(double* tile, const double* v) {
  #pragma unroll
  for (int r = 0; r < DS; ++r) tile[(threadIdx.x / DS + r * (DT / DS)) * (DS + 1) + threadIdx.x % DS] = v[r];
}

// (1) The in-order total of each of the first `carried` blocks (all full) into carry.
extern "C" __global__ void def_scan_totals(const double* __restrict__ x, long long carried, double* __restrict__ carry) {
  __shared__ double tile[DT * (DS + 1)];
  const long long b0 = (long long)blockIdx.x * DT;
  double v[DS], acc = 0.0;
  def_fetch(x, b0, carried, carried * DB, 0, v);
  #pragma unroll 1
  for (int s0 = 0; s0 < DB; s0 += DS) {
    def_fill(tile, v);
    __syncthreads();
    def_fetch(x, b0, carried, carried * DB, s0 + DS, v);
    #pragma unroll
    for (int j = 0; j < DS; ++j) {
      const double y = tile[threadIdx.x * (DS + 1) + j];
      acc = s0 + j == 0 ? y : acc + y;
    }
    __syncthreads();
  }
  if (b0 + threadIdx.x < carried) carry[b0 + threadIdx.x] = acc;
}

// (2a) A CTA per group of DB carries: staged into shared memory by all its threads, folded in order in place
// from its first by one thread (16 reads ahead of the additions), written back; the group's fold into folds[g].
extern "C" __global__ void def_scan_groups(double* carry, long long carried, double* __restrict__ folds) {
  __shared__ double tile[DB];
  const long long lo = (long long)blockIdx.x * DB;
  const int len = (int)min((long long)DB, carried - lo);
  for (int i = threadIdx.x; i < len; i += blockDim.x) tile[i] = carry[lo + i];
  __syncthreads();
  if (threadIdx.x == 0) {
    double acc = tile[0];
    int j = 1;
    for (; j + 16 <= len; j += 16) {
      double v[16];
      #pragma unroll
      for (int u = 0; u < 16; ++u) v[u] = tile[j + u];
      #pragma unroll
      for (int u = 0; u < 16; ++u) tile[j + u] = acc = acc + v[u];
    }
    for (; j < len; ++j) tile[j] = acc = acc + tile[j];
    folds[blockIdx.x] = acc;
  }
  __syncthreads();
  for (int i = threadIdx.x; i < len; i += blockDim.x) carry[lo + i] = tile[i];
}

// (2b) One CTA: carry[b] becomes carry[0] + ... + carry[b], in order, one thread walking chunks the CTA stages.
extern "C" __global__ void def_scan_chain(double* carry, long long carried) {
  constexpr int C = 256 * DS;
  __shared__ double tile[C];
  double v[DS], acc = 0.0;
  #pragma unroll
  for (int r = 0; r < DS; ++r) v[r] = threadIdx.x + r * 256 < carried ? carry[threadIdx.x + r * 256] : 0.0;
  #pragma unroll 1
  for (long long c0 = 0; c0 < carried; c0 += C) {
    #pragma unroll
    for (int r = 0; r < DS; ++r) tile[threadIdx.x + r * 256] = v[r];
    __syncthreads();
    #pragma unroll
    for (int r = 0; r < DS; ++r) {
      const long long i = c0 + C + threadIdx.x + r * 256;
      v[r] = i < carried ? carry[i] : 0.0;
    }
    if (threadIdx.x == 0) {
      const int m = (int)min((long long)C, carried - c0);
      int j = 0;
      if (c0 == 0) acc = tile[j++];
      for (; j + 16 <= m; j += 16) {
        #pragma unroll
        for (int u = 0; u < 16; ++u) tile[j + u] = acc = acc + tile[j + u];
      }
      for (; j < m; ++j) tile[j] = acc = acc + tile[j];
    }
    __syncthreads();
    #pragma unroll
    for (int r = 0; r < DS; ++r)
      if (c0 + threadIdx.x + r * 256 < carried) carry[c0 + threadIdx.x + r * 256] = tile[threadIdx.x + r * 256];
    __syncthreads();
  }
}

// (3) Every block rescanned from its first element; block b > 0 stores its carry + its running value, the carry
// being carry[b - 1], past the first group folds[(b - 1) / DB - 1] + carry[b - 1].
extern "C" __global__ void def_scan_apply(const double* __restrict__ x, double* __restrict__ out, long long n,
                                          const double* __restrict__ carry, const double* __restrict__ folds) {
  __shared__ double tile[DT * (DS + 1)];
  const long long b0 = (long long)blockIdx.x * DT, blocks = (n + DB - 1) / DB, b = b0 + threadIdx.x;
  double c = b > 0 && b < blocks ? carry[b - 1] : 0.0;
  if (b > DB && b < blocks) c = folds[(b - 1) / DB - 1] + c;
  double v[DS], acc = 0.0;
  def_fetch(x, b0, blocks, n, 0, v);
  #pragma unroll 1
  for (int s0 = 0; s0 < DB; s0 += DS) {
    def_fill(tile, v);
    __syncthreads();
    def_fetch(x, b0, blocks, n, s0 + DS, v);
    #pragma unroll
    for (int j = 0; j < DS; ++j) {
      double& y = tile[threadIdx.x * (DS + 1) + j];
      acc = s0 + j == 0 ? y : acc + y;
      y = b == 0 ? acc : c + acc;
    }
    __syncthreads();
    const int t0 = threadIdx.x / DS, j = threadIdx.x % DS;
    double* p = out + (b0 + t0) * DB + s0 + j;
    const long long left = n - ((b0 + t0) * DB + s0 + j);
    #pragma unroll
    for (int r = 0; r < DS; ++r) {
      const long long off = (long long)r * (DT / DS) * DB;
      if (b0 + t0 + r * (DT / DS) < blocks && off < left) p[off] = tile[(t0 + r * (DT / DS)) * (DS + 1) + j];
    }
    __syncthreads();
  }
}

// Along axis 0 of a rows x cols matrix: a thread per column, down the rows (adjacent threads, adjacent columns).
extern "C" __global__ void ref_scan_columns(const double* __restrict__ x, double* __restrict__ out, long long rows,
                                            long long cols) {
  const long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= cols) return;
  double s = 0.0;
  for (long long i = 0; i < rows; ++i) {
    s += x[i * cols + j];
    out[i * cols + j] = s;
  }
}
)CUDA";

const std::vector<std::string> kNames = {"ref_scan_totals", "ref_scan_carries", "ref_scan_apply", "ref_scan_columns",
                                         "def_scan_totals", "def_scan_chain", "def_scan_apply",  "def_scan_groups"};
constexpr long long kTile = 4096;  // TILE_THREADS * ITEMS
constexpr long long kDefinedBlock = kiln::ir::sem::kScanBlock;  // the def_scan_* kernels' DB
static_assert(kDefinedBlock == 1024, "def_scan_* (DB) assume kiln's scan block of 1024");

using bench::median;

/// Equal within the rounding of two summation orders of values in [-1, 1) (bounded by the running count).
std::string check(const std::vector<double>& a, const std::vector<double>& b, long long line) {
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!(std::fabs(a[i] - b[i]) <= 1e-9 * (1.0 + static_cast<double>(static_cast<long long>(i) % line))))
      return "MISMATCH at " + std::to_string(i) + ": " + std::to_string(a[i]) + " vs " + std::to_string(b[i]);
  return "ok";
}

kiln::DeviceArray<double> random_device(long long n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> h(static_cast<std::size_t>(n));
  for (auto& v : h) v = u(rng);
  kiln::DeviceArray<double> d({n});
  d.copy_from(h);
  return d;
}

/// kiln alone on the other forms the issue targets (types, operators, exclusive, the last axis): CuPy's figures
/// for the same names come from bench/gpu/cupy_cumsum.py. Each result is checked against a sequential scan on
/// the host in kiln's order (bitwise: integers, min and max are exact; sums follow the defined blocks).
template <class T, class K>
void kiln_only_row(const std::string& name, K& k, long long rows, long long cols, bool flat, double bytes, int reps,
                   const std::function<double(const std::function<void()>&)>& time_ms, kiln::ReduceOp op, bool exclusive) {
  std::mt19937_64 rng(23);
  std::vector<T> h(static_cast<std::size_t>(rows * cols));
  for (auto& v : h) {
    if constexpr (std::is_floating_point_v<T>) v = static_cast<T>(std::uniform_real_distribution<double>(op == kiln::ReduceOp::Mul ? 0.999 : -1.0, op == kiln::ReduceOp::Mul ? 1.001 : 1.0)(rng));
    else v = static_cast<T>(std::uniform_int_distribution<int>(-1000, 1000)(rng));
  }
  kiln::DeviceArray<T> x = flat ? kiln::DeviceArray<T>({rows * cols}) : kiln::DeviceArray<T>({rows, cols});
  kiln::DeviceArray<T> out = flat ? kiln::DeviceArray<T>({rows * cols}) : kiln::DeviceArray<T>({rows, cols});
  x.copy_from(h);
  for (int w = 0; w < 2; ++w) k(x, out);
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) t.push_back(time_ms([&] { k(x, out); }));
  // kiln's order on the host: each line (a row, or the whole array) in blocks of kScanBlock.
  const std::vector<T> got = out.to_vector();
  const long long lines = flat ? 1 : rows, len = flat ? rows * cols : cols;
  auto combine = [&](T a, T b) -> T {
    if constexpr (std::is_integral_v<T>) {  // integers wrap (kiln's rule), done in unsigned arithmetic here
      using U = std::make_unsigned_t<T>;
      if (op == kiln::ReduceOp::Add) return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
      if (op == kiln::ReduceOp::Mul) return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
    }
    switch (op) {
      case kiln::ReduceOp::Add: return static_cast<T>(a + b);
      case kiln::ReduceOp::Mul: return static_cast<T>(a * b);
      case kiln::ReduceOp::Min: return std::isnan(static_cast<double>(a)) || a < b ? a : b;
      default: return std::isnan(static_cast<double>(a)) || a > b ? a : b;
    }
  };
  bool same = true;
  for (long long l = 0; l < lines && same; ++l) {
    const T* in = h.data() + l * len;
    const T* o = got.data() + l * len;
    T carry{}, acc{}, group_fold{}, chain{};
    for (long long i = 0; i < len && same; ++i) {
      const long long b = i / kDefinedBlock, j = i % kDefinedBlock;
      // An exclusive scan's element 0 is the identity (+0 for sums; the others' are checked by the tests).
      if (exclusive && (i > 0 || op == kiln::ReduceOp::Add)) {
        const T want = j == 0 ? (b == 0 ? T{} : carry) : (b == 0 ? acc : combine(carry, acc));
        same = std::memcmp(&want, &o[i], sizeof(T)) == 0;
      }
      acc = j == 0 ? in[i] : combine(acc, in[i]);
      if (!exclusive) {
        const T want = b == 0 ? acc : combine(carry, acc);
        same = std::memcmp(&want, &o[i], sizeof(T)) == 0;
      }
      if (j == kDefinedBlock - 1) {  // the next carry: this total folded into its group's, after the first group
        group_fold = b % kDefinedBlock == 0 ? acc : combine(group_fold, acc);  // combined with the chain before
        carry = b < kDefinedBlock ? group_fold : combine(chain, group_fold);
        if (b % kDefinedBlock == kDefinedBlock - 1) chain = carry;
      }
    }
  }
  const double ms = median(t);
  std::printf("%-32s kiln %9.3f ms (%6.0f GB/s)  %s\n", name.c_str(), ms, bytes / (ms * 1e6),
              same ? "bitwise kiln's order" : "MISMATCH");
}

/// The 1-d float sums alone (kiln's order: the single pass's ordered form), for before/after runs that have
/// little device time: `--filter cumsum_floats`.
void float_rows(long long n, int reps, const std::function<double(const std::function<void()>&)>& time_ms) {
  const kiln::Options cuda = kiln::Options().on(kiln::Target::cuda);
  const std::string ns = " n=" + std::to_string(n);
  {
    auto k = kiln::jit("cumsum_f64", [](kiln::Array<double, 1> a, kiln::Array<double, 1> o) { o(kiln::all) = kiln::cumsum(a); }, cuda);
    kiln_only_row<double>("cumsum f64" + ns, k, n, 1, true, 16.0 * n, reps, time_ms, kiln::ReduceOp::Add, false);
  }
  {
    auto k = kiln::jit("cumsum_f32", [](kiln::Array<float, 1> a, kiln::Array<float, 1> o) { o(kiln::all) = kiln::cumsum(a); }, cuda);
    kiln_only_row<float>("cumsum f32" + ns, k, n, 1, true, 8.0 * n, reps, time_ms, kiln::ReduceOp::Add, false);
  }
}

void kiln_only_rows(long long n, long long side, int reps, const std::function<double(const std::function<void()>&)>& time_ms) {
  const kiln::Options cuda = kiln::Options().on(kiln::Target::cuda);
  const std::string ns = " n=" + std::to_string(n), sq = " " + std::to_string(side) + "^2";
  {
    auto k = kiln::jit("cumsum_f32", [](kiln::Array<float, 1> a, kiln::Array<float, 1> o) { o(kiln::all) = kiln::cumsum(a); }, cuda);
    kiln_only_row<float>("cumsum f32" + ns, k, n, 1, true, 8.0 * n, reps, time_ms, kiln::ReduceOp::Add, false);
  }
  {
    auto k = kiln::jit("cumsum_i64", [](kiln::Array<std::int64_t, 1> a, kiln::Array<std::int64_t, 1> o) { o(kiln::all) = kiln::cumsum(a); }, cuda);
    kiln_only_row<std::int64_t>("cumsum i64" + ns, k, n, 1, true, 16.0 * n, reps, time_ms, kiln::ReduceOp::Add, false);
  }
  {
    auto k = kiln::jit("scan_i32", [](kiln::Array<std::int32_t, 1> a, kiln::Array<std::int32_t, 1> o) {
      o(kiln::all) = kiln::scan(a, kiln::ReduceOp::Add, kiln::inclusive);
    }, cuda);
    kiln_only_row<std::int32_t>("cumsum i32" + ns, k, n, 1, true, 8.0 * n, reps, time_ms, kiln::ReduceOp::Add, false);
  }
  {
    auto k = kiln::jit("cummax_f64", [](kiln::Array<double, 1> a, kiln::Array<double, 1> o) { o(kiln::all) = kiln::cummax(a); }, cuda);
    kiln_only_row<double>("cummax f64" + ns, k, n, 1, true, 16.0 * n, reps, time_ms, kiln::ReduceOp::Max, false);
  }
  {
    auto k = kiln::jit("cumprod_f64", [](kiln::Array<double, 1> a, kiln::Array<double, 1> o) { o(kiln::all) = kiln::cumprod(a); }, cuda);
    kiln_only_row<double>("cumprod f64" + ns, k, n, 1, true, 16.0 * n, reps, time_ms, kiln::ReduceOp::Mul, false);
  }
  {
    auto k = kiln::jit("cumsum_excl", [](kiln::Array<double, 1> a, kiln::Array<double, 1> o) { o(kiln::all) = kiln::cumsum(a, kiln::exclusive); }, cuda);
    kiln_only_row<double>("cumsum exclusive f64" + ns, k, n, 1, true, 16.0 * n, reps, time_ms, kiln::ReduceOp::Add, true);
  }
  {
    auto k = kiln::jit("cumsum_axis1", [](kiln::Array<double, 2> a, kiln::Array<double, 2> o) { o(kiln::all, kiln::all) = kiln::cumsum(a, 1); }, cuda);
    kiln_only_row<double>("cumsum f64 axis 1" + sq, k, side, side, false, 16.0 * side * side, reps, time_ms, kiln::ReduceOp::Add, false);
  }
  {
    auto k = kiln::jit("cumsum_rows", [](kiln::Array<float, 2> a, kiln::Array<float, 2> o) { o(kiln::all, kiln::all) = kiln::cumsum(a, 1); }, cuda);
    const long long short_rows = n / 256;
    kiln_only_row<float>("cumsum f32 axis 1 " + std::to_string(short_rows) + "x256", k, short_rows, 256, false, 8.0 * n, reps, time_ms,
                         kiln::ReduceOp::Add, false);
  }
}

}  // namespace

const char* scan_reference_source() { return kSource; }

void scan_float_rows(const std::function<double(const std::function<void()>&)>& time_ms, int reps, long long n) {
  float_rows(n, reps, time_ms);
}

void scan_rows(kiln::gpu::Device& dev, const std::function<double(const std::function<void()>&)>& time_ms, int reps,
               long long n, long long side, bool axis0_only) {
  const auto bin = kiln::codegen::cuda::compile_source(kSource, "reference_scan", dev.info().arch(), {}, false,
                                                       kiln::detail::cuda_options().lineinfo);
  const kiln::gpu::Module module(dev, bin.arch, bin.cubin, bin.ptx, kNames);
  auto launch = [&](std::size_t k, long long grid, unsigned block, std::vector<void*> params) {
    kiln::gpu::launch(dev.stream(), module.function(k), {static_cast<unsigned>(grid), 1, 1}, {block, 1, 1}, params.data());
  };
  const kiln::Options cuda = kiln::Options().on(kiln::Target::cuda);
  auto row = [&](const char* name, double bytes, const std::function<void()>& kiln_run, const std::function<void()>& hand_run,
                 const std::function<std::string()>& verdict) {
    for (int w = 0; w < 2; ++w) kiln_run(), hand_run();
    std::vector<double> tk, th;
    for (int r = 0; r < reps; ++r) {
      if (r % 2) th.push_back(time_ms(hand_run)), tk.push_back(time_ms(kiln_run));
      else tk.push_back(time_ms(kiln_run)), th.push_back(time_ms(hand_run));
    }
    const double k = median(tk), h = median(th);
    std::printf("%-32s kiln %9.3f ms (%6.0f GB/s)  hand %9.3f ms (%6.0f GB/s)  kiln/hand %.2f  %s\n", name, k, bytes / (k * 1e6), h,
                bytes / (h * 1e6), k / h, verdict().c_str());
  };

  if (!axis0_only) {  // 1-d
    kiln::DeviceArray<double> x = random_device(n, 21), out({n}), out_ref({n});
    long long tiles = (n + kTile - 1) / kTile;
    kiln::DeviceArray<double> totals({std::max(tiles, 1LL)});
    auto k = kiln::jit("cumsum", [](kiln::Array<double, 1> a, kiln::Array<double, 1> o) { o(kiln::all) = kiln::cumsum(a); }, cuda);
    const double* xp = x.data();
    double* op = out_ref.data();
    double* tp = totals.data();
    long long nn = n;
    const std::string name = "cumsum f64 n=" + std::to_string(n);
    row(name.c_str(), 16.0 * static_cast<double>(n), [&] { k(x, out); },
        [&] {
          launch(0, tiles, 256, {&xp, &nn, &tp});
          launch(1, 1, 1024, {&tp, &tiles});
          launch(2, tiles, 256, {&xp, &op, &nn, &tp});
        },
        [&] { return check(out.to_vector(), out_ref.to_vector(), n); });

    // The same scan in kiln's order by hand: the bits must be kiln's, and each pass timed on its own says
    // where the defined order's time goes (the carries: groups of 1024 folded side by side, then a chain of
    // n / 2^20 dependent additions).
    const long long blocks = (n + kDefinedBlock - 1) / kDefinedBlock, carried = std::max(blocks - 1, 0LL);
    const long long groups = (carried + kDefinedBlock - 1) / kDefinedBlock;
    kiln::DeviceArray<double> carry({std::max(carried, 1LL)}), folds({std::max(groups, 1LL)}), out_def({n});
    double* cp = carry.data();
    double* fp = folds.data();
    double* dp = out_def.data();
    long long cc = carried, gg = groups;
    const long long ctas = (blocks + 127) / 128;
    auto pass1 = [&] { if (carried) launch(4, (carried + 127) / 128, 128, {&xp, &cc, &cp}); };
    auto pass2 = [&] {
      if (carried) launch(7, groups, 256, {&cp, &cc, &fp});
      if (groups > 1) launch(5, 1, 256, {&fp, &gg});
    };
    auto pass3 = [&] { launch(6, ctas, 128, {&xp, &dp, &nn, &cp, &fp}); };
    const std::string dname = "cumsum f64 n=" + std::to_string(n) + " kiln's order";
    row(dname.c_str(), 16.0 * static_cast<double>(n), [&] { k(x, out); }, [&] { pass1(), pass2(), pass3(); },
        [&] { return out.to_vector() == out_def.to_vector() ? std::string("bitwise equal") : std::string("MISMATCH (bits differ)"); });
    std::vector<double> t1, t2, t3;
    for (int r = 0; r < reps; ++r) t1.push_back(time_ms(pass1)), t2.push_back(time_ms(pass2)), t3.push_back(time_ms(pass3));
    std::printf("  kiln's order by hand, pass by pass: totals %.3f ms (%.0f GB/s), %lld carries in %lld groups and their "
                "chain %.3f ms, blocks with carries %.3f ms (%.0f GB/s)\n",
                median(t1), 8.0 * static_cast<double>(carried * kDefinedBlock) / (median(t1) * 1e6), carried, groups, median(t2),
                median(t3),
                16.0 * static_cast<double>(n) / (median(t3) * 1e6));
  }
  if (!axis0_only) kiln_only_rows(n, side, reps, time_ms);
  {  // along axis 0 of a matrix
    kiln::DeviceArray<double> flat = random_device(side * side, 22);
    kiln::DeviceArray<double> x({side, side}), out({side, side}), out_ref({side, side});
    x.copy_from(flat);
    auto k = kiln::jit("cumsum_axis0", [](kiln::Array<double, 2> a, kiln::Array<double, 2> o) {
      o(kiln::all, kiln::all) = kiln::cumsum(a, 0);
    }, cuda);
    const double* xp = x.data();
    double* op = out_ref.data();
    long long rows = side, cols = side;
    const std::string name = "cumsum f64 axis 0 " + std::to_string(side) + "^2";
    row(name.c_str(), 16.0 * static_cast<double>(side * side), [&] { k(x, out); },
        [&] { launch(3, (cols + 255) / 256, 256, {&xp, &op, &rows, &cols}); },
        [&] { return check(out.to_vector(), out_ref.to_vector(), side * side); });
  }
}

}  // namespace benchgpu
