// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln::cumsum on the GPU against hand-written CUDA scans. kiln follows its defined order (ir/semantics.hpp:
// blocks of 1024 scanned in order, carries folded in order; the same bits as the CPU and the interpreter); the
// hand scans add in their own orders, so results are compared within rounding.
#include "bench/gpu/scan_rows.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "codegen/cuda/nvrtc.hpp"
#include "frontend/settings.hpp"
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

const std::vector<std::string> kNames = {"ref_scan_totals", "ref_scan_carries", "ref_scan_apply", "ref_scan_columns"};
constexpr long long kTile = 4096;  // TILE_THREADS * ITEMS

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : (v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]));
}

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

}  // namespace

const char* scan_reference_source() { return kSource; }

void scan_rows(kiln::gpu::Device& dev, const std::function<double(const std::function<void()>&)>& time_ms, int reps,
               long long n, long long side) {
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

  {  // 1-d
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
  }
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
