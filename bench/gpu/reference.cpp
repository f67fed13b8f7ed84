// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The hand-written CUDA of the benchmark's work, as a careful programmer writes it: one element per thread
// with __restrict__ pointers for streaming kernels, grid-stride loops with warp-shuffle reductions and a
// second pass over the block partials for reductions, results left on the device until the scalar is read.
// Compiled by NVRTC in the same process, with its default options and once more with --fmad=false (kiln's
// rounding rule: a*b+c is not fused), so that the cost of exact rounding shows separately.
#include "bench/gpu/reference.hpp"

#include <algorithm>
#include <array>

#include "codegen/cuda/nvrtc.hpp"
#include "frontend/settings.hpp"
#include "runtime/cuda/driver.hpp"

namespace benchgpu {
namespace {

constexpr const char* kSource = R"CUDA(
__device__ __forceinline__ float warp_sum(float v) {
  for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
  return v;
}
__device__ __forceinline__ double warp_sum(double v) {
  for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
  for (int off = 16; off > 0; off >>= 1) v = fmaxf(v, __shfl_down_sync(0xffffffffu, v, off));
  return v;
}
template <class T, class F>
__device__ T block_reduce(T v, F f, T identity) {
  __shared__ T s[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  v = f(v);
  if (lane == 0) s[warp] = v;
  __syncthreads();
  if (warp == 0) v = f(lane < (blockDim.x + 31) / 32 ? s[lane] : identity);
  return v;
}
struct Sum { template <class T> __device__ T operator()(T v) const { return warp_sum(v); } };
struct Max { __device__ float operator()(float v) const { return warp_max(v); } };

extern "C" __global__ void ref_fused(const float* __restrict__ a, const float* __restrict__ b, const float* __restrict__ c,
                                     float* __restrict__ out, long long n) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] * b[i] + c[i];
}

extern "C" __global__ void ref_dot(const float* __restrict__ x, const float* __restrict__ y, long long n, float* partial) {
  float s = 0.0f;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) s += x[i] * y[i];
  s = block_reduce(s, Sum(), 0.0f);
  if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

extern "C" __global__ void ref_sum(const float* __restrict__ partial, int n, float* out) {
  float s = 0.0f;
  for (int i = threadIdx.x; i < n; i += blockDim.x) s += partial[i];
  s = block_reduce(s, Sum(), 0.0f);
  if (threadIdx.x == 0) *out = s;
}

extern "C" __global__ void ref_pi(long long n, double step, double* partial) {
  double s = 0.0;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    const double x = ((double)i + 0.5) * step;
    s += 4.0 / (1.0 + x * x);
  }
  s = block_reduce(s, Sum(), 0.0);
  if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

extern "C" __global__ void ref_pi_sum(const double* __restrict__ partial, int n, double step, double* out) {
  double s = 0.0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) s += partial[i];
  s = block_reduce(s, Sum(), 0.0);
  if (threadIdx.x == 0) *out = s * step;
}

extern "C" __global__ void ref_max(const float* __restrict__ x, long long n, float* partial) {
  float m = -__int_as_float(0x7f800000);
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) m = fmaxf(m, x[i]);
  m = block_reduce(m, Max(), -__int_as_float(0x7f800000));
  if (threadIdx.x == 0) partial[blockIdx.x] = m;
}

extern "C" __global__ void ref_max_final(const float* __restrict__ partial, int n, float* out) {
  float m = -__int_as_float(0x7f800000);
  for (int i = threadIdx.x; i < n; i += blockDim.x) m = fmaxf(m, partial[i]);
  m = block_reduce(m, Max(), -__int_as_float(0x7f800000));
  if (threadIdx.x == 0) *out = m;
}

extern "C" __global__ void ref_sum_exp(const float* __restrict__ x, long long n, const float* __restrict__ max, float* partial) {
  const float m = *max;
  float s = 0.0f;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) s += expf(x[i] - m);
  s = block_reduce(s, Sum(), 0.0f);
  if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

extern "C" __global__ void ref_softmax_write(const float* __restrict__ x, float* __restrict__ out, long long n,
                                             const float* __restrict__ max, const float* __restrict__ sum) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = expf(x[i] - *max) * (1.0f / *sum);
}

extern "C" __global__ void ref_smooth1d(const float* __restrict__ x, float* __restrict__ out, long long n) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = (i == 0 || i == n - 1) ? x[i] : (x[i - 1] + x[i] + x[i + 1]) * (1.0f / 3.0f);
}

extern "C" __global__ void ref_jacobi2d(const float* __restrict__ a, float* __restrict__ out, int rows, int cols) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x + 1, i = blockIdx.y * blockDim.y + threadIdx.y + 1;
  if (i >= rows - 1 || j >= cols - 1) return;
  const long long c = (long long)i * cols + j;
  out[c] = 0.25f * (a[c - cols] + a[c + cols] + a[c - 1] + a[c + 1]);
}

extern "C" __global__ void ref_wave2d(const float* __restrict__ prev, const float* __restrict__ cur, float* __restrict__ next, int rows,
                                      int cols) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x + 1, i = blockIdx.y * blockDim.y + threadIdx.y + 1;
  if (i >= rows - 1 || j >= cols - 1) return;
  const long long c = (long long)i * cols + j;
  next[c] = 2.0f * cur[c] - prev[c] + 0.2f * (cur[c - cols] + cur[c + cols] + cur[c - 1] + cur[c + 1] - 4.0f * cur[c]);
}

extern "C" __global__ void ref_black_scholes(const float* __restrict__ s, const float* __restrict__ k, const float* __restrict__ t,
                                             float* __restrict__ call, float* __restrict__ put, long long n, float r, float v) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float sq = sqrtf(t[i]);
  const float d1 = (logf(s[i] / k[i]) + (r + 0.5f * v * v) * t[i]) / (v * sq);
  const float d2 = d1 - v * sq;
  const float n1 = 0.5f + 0.5f * erff(d1 * 0.70710678f), n2 = 0.5f + 0.5f * erff(d2 * 0.70710678f);
  const float disc = k[i] * expf(-r * t[i]);
  call[i] = s[i] * n1 - disc * n2;
  put[i] = disc * (1.0f - n2) - s[i] * (1.0f - n1);
}

// A warp per row (8 rows per block): the lanes stride over the row, a butterfly of shuffles sums, two passes
// (the mean, then the squared deviations from it), as NumPy computes var.
extern "C" __global__ void ref_row_stats(const float* __restrict__ x, float* __restrict__ mean, float* __restrict__ var,
                                         float* __restrict__ sd, int rows, int cols) {
  const int row = blockIdx.x * blockDim.y + threadIdx.y, lane = threadIdx.x;
  if (row >= rows) return;
  const float* r = x + (long long)row * cols;
  float s = 0.0f;
  for (int j = lane; j < cols; j += 32) s += r[j];
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  const float m = s / (float)cols;
  float q = 0.0f;
  for (int j = lane; j < cols; j += 32) {
    const float d = r[j] - m;
    q += d * d;
  }
  for (int o = 16; o > 0; o >>= 1) q += __shfl_xor_sync(0xffffffffu, q, o);
  if (lane == 0) {
    mean[row] = m;
    var[row] = q / (float)cols;
    sd[row] = sqrtf(q / (float)cols);
  }
}

// A histogram by global atomics, one element per thread: the hand form of kiln::atomic_add(hist[bin], 1).
extern "C" __global__ void ref_hist_atomic(const float* __restrict__ x, long long n, int* hist, int bins) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&hist[(int)(x[i] * (float)bins)], 1);
}

// All-pairs accelerations, tiled as the CUDA samples' n-body is: each block stages 256 bodies at a time in
// shared memory, every thread of the block reads them from there; the sums run over j in order.
extern "C" __global__ void ref_nbody(const float* __restrict__ x, const float* __restrict__ y, const float* __restrict__ z,
                                     const float* __restrict__ m, float* __restrict__ ax, float* __restrict__ ay,
                                     float* __restrict__ az, int n) {
  __shared__ float4 tile[256];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float xi = i < n ? x[i] : 0.0f, yi = i < n ? y[i] : 0.0f, zi = i < n ? z[i] : 0.0f;
  float fx = 0.0f, fy = 0.0f, fz = 0.0f;
  for (int base = 0; base < n; base += 256) {
    const int j = base + threadIdx.x;
    tile[threadIdx.x] = j < n ? make_float4(x[j], y[j], z[j], m[j]) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    __syncthreads();
    const int count = min(256, n - base);
    for (int k = 0; k < count; ++k) {
      const float4 b = tile[k];
      const float dx = b.x - xi, dy = b.y - yi, dz = b.z - zi;
      const float r2 = dx * dx + dy * dy + dz * dz + 1e-3f;
      const float w = b.w / (r2 * sqrtf(r2));
      fx += w * dx;
      fy += w * dy;
      fz += w * dz;
    }
    __syncthreads();
  }
  if (i < n) ax[i] = fx, ay[i] = fy, az[i] = fz;
}

// The 3-d stencils with a nearest border, as a plain kernel is written: one element per thread on a grid of
// 32 x 8 blocks per plane, every read's indices clamped (bench/gpu/kiln_kernels.hpp has the weights and the
// order of the sums).
template <int Points>
__device__ __forceinline__ void stencil3d(const float* __restrict__ a, float* __restrict__ out, int nz, int ny, int nx) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y, z = blockIdx.z;
  if (x >= nx || y >= ny) return;
  const float w[4] = {0.5f, 0.05f, 0.02f, 0.01f};
  auto at = [&](int dz, int dy, int dx) {
    const int zz = min(max(z + dz, 0), nz - 1), yy = min(max(y + dy, 0), ny - 1), xx = min(max(x + dx, 0), nx - 1);
    return a[((long long)zz * ny + yy) * nx + xx];
  };
  float s;
  if (Points == 7) {
    s = w[0] * at(0, 0, 0) + w[1] * (at(-1, 0, 0) + at(1, 0, 0) + at(0, -1, 0) + at(0, 1, 0) + at(0, 0, -1) + at(0, 0, 1));
  } else {
    s = 0.0f;
#pragma unroll
    for (int dz = -1; dz <= 1; ++dz)
#pragma unroll
      for (int dy = -1; dy <= 1; ++dy)
#pragma unroll
        for (int dx = -1; dx <= 1; ++dx) s = s + w[abs(dz) + abs(dy) + abs(dx)] * at(dz, dy, dx);
  }
  out[((long long)z * ny + y) * nx + x] = s;
}
extern "C" __global__ void ref_stencil7(const float* __restrict__ a, float* __restrict__ out, int nz, int ny, int nx) {
  stencil3d<7>(a, out, nz, ny, nx);
}
extern "C" __global__ void ref_stencil27(const float* __restrict__ a, float* __restrict__ out, int nz, int ny, int nx) {
  stencil3d<27>(a, out, nz, ny, nx);
}

extern "C" __global__ void ref_empty() {}
)CUDA";

/// The module's kernels, in the order of kNames: a launch names one by its position, resolved when the code is
/// written, so that a hand launch costs what a hand-written launch costs (no name search, no allocation).
enum Kernel : std::size_t {
  kFused,
  kDot,
  kSum,
  kPi,
  kPiSum,
  kMax,
  kMaxFinal,
  kSumExp,
  kSoftmaxWrite,
  kSmooth1d,
  kJacobi2d,
  kWave2d,
  kBlackScholes,
  kRowStats,
  kHistAtomic,
  kNbody,
  kStencil7,
  kStencil27,
  kEmpty,
  kKernels
};
const std::array<const char*, kKernels> kNames = {
    "ref_fused",         "ref_dot",       "ref_sum",           "ref_pi",       "ref_pi_sum",   "ref_max",
    "ref_max_final",     "ref_sum_exp",   "ref_softmax_write", "ref_smooth1d", "ref_jacobi2d", "ref_wave2d",
    "ref_black_scholes", "ref_row_stats", "ref_hist_atomic",   "ref_nbody",    "ref_stencil7", "ref_stencil27",
    "ref_empty"};

}  // namespace

Reference::Reference(kiln::gpu::Device& dev, bool contract) : dev_(dev) {
  const auto bin = kiln::codegen::cuda::compile_source(kSource, "reference", dev.info().arch(), {}, !contract,
                                                       kiln::detail::cuda_options().lineinfo);
  compile_ms_ = bin.compile_ms;
  module_ = std::make_unique<kiln::gpu::Module>(dev, bin.arch, bin.cubin, bin.ptx, std::vector<std::string>(kNames.begin(), kNames.end()));
  partial_ = kiln::DeviceArray<double>({kBlocks + 2});
}

void Reference::launch(std::size_t kernel, unsigned grid_x, unsigned block_x, std::initializer_list<void*> params, unsigned grid_y,
                       unsigned block_y, unsigned grid_z) const {
  if (params.size() > kMaxParams) throw kiln::Error("a reference launch takes at most 16 parameters");
  std::array<void*, kMaxParams> p{};
  std::copy(params.begin(), params.end(), p.begin());
  kiln::gpu::launch(dev_.stream(), module_->function(kernel), {grid_x, grid_y, grid_z}, {block_x, block_y, 1}, p.data());
}

void Reference::stencil3d(int points, const float* a, float* out, int nz, int ny, int nx) const {
  launch(points == 7 ? kStencil7 : kStencil27, blocks(nx, 32), 32, {&a, &out, &nz, &ny, &nx}, blocks(ny, 8), 8,
         static_cast<unsigned>(nz));
}

unsigned Reference::blocks(long long n, unsigned threads) { return static_cast<unsigned>((n + threads - 1) / threads); }

void Reference::fused(const float* a, const float* b, const float* c, float* out, long long n) const {
  launch(kFused, blocks(n, 256), 256, {&a, &b, &c, &out, &n});
}

float Reference::dot(const float* x, const float* y, long long n) const {
  float* partial = reinterpret_cast<float*>(partial_.data());
  float* result = partial + kBlocks;
  launch(kDot, kBlocks, 256, {&x, &y, &n, &partial});
  int nb = kBlocks;
  launch(kSum, 1, 1024, {&partial, &nb, &result});
  return read<float>(result);
}

double Reference::pi(long long n) const {
  double* partial = partial_.data();
  double* result = partial + kBlocks;
  double step = 1.0 / static_cast<double>(n);
  launch(kPi, kBlocks, 256, {&n, &step, &partial});
  int nb = kBlocks;
  launch(kPiSum, 1, 1024, {&partial, &nb, &step, &result});
  return read<double>(result);
}

void Reference::softmax(const float* x, float* out, long long n) const {
  float* partial = reinterpret_cast<float*>(partial_.data());
  float* max = partial + kBlocks;
  float* sum = partial + kBlocks + 1;
  int nb = kBlocks;
  launch(kMax, kBlocks, 256, {&x, &n, &partial});
  launch(kMaxFinal, 1, 1024, {&partial, &nb, &max});
  launch(kSumExp, kBlocks, 256, {&x, &n, &max, &partial});
  launch(kSum, 1, 1024, {&partial, &nb, &sum});
  launch(kSoftmaxWrite, blocks(n, 256), 256, {&x, &out, &n, &max, &sum});
}

void Reference::smooth1d(const float* x, float* out, long long n) const {
  launch(kSmooth1d, blocks(n, 256), 256, {&x, &out, &n});
}

void Reference::jacobi2d(const float* a, float* out, int rows, int cols) const {
  launch(kJacobi2d, blocks(cols - 2, 32), 32, {&a, &out, &rows, &cols}, blocks(rows - 2, 8), 8);
}

void Reference::wave2d(float* prev, float* cur, float* next, int rows, int cols, int steps) const {
  for (int s = 0; s < steps; ++s) {
    launch(kWave2d, blocks(cols - 2, 32), 32, {&prev, &cur, &next, &rows, &cols}, blocks(rows - 2, 8), 8);
    float* oldest = prev;
    prev = cur, cur = next, next = oldest;
  }
}

void Reference::black_scholes(const float* s, const float* k, const float* t, float* call, float* put, long long n, float r, float v) const {
  launch(kBlackScholes, blocks(n, 256), 256, {&s, &k, &t, &call, &put, &n, &r, &v});
}

void Reference::nbody(const float* x, const float* y, const float* z, const float* m, float* ax, float* ay, float* az, int n) const {
  launch(kNbody, blocks(n, 256), 256, {&x, &y, &z, &m, &ax, &ay, &az, &n});
}

void Reference::row_stats(const float* x, float* mean, float* var, float* sd, int rows, int cols) const {
  launch(kRowStats, blocks(rows, 8), 32, {&x, &mean, &var, &sd, &rows, &cols}, 1, 8);
}

void Reference::histogram_atomic(const float* x, long long n, int* hist, int bins) const {
  launch(kHistAtomic, blocks(n, 256), 256, {&x, &n, &hist, &bins});
}

void Reference::empty() const { launch(kEmpty, 1, 32, {}); }

void Reference::synchronize() const {
  kiln::gpu::check(kiln::gpu::driver().cuStreamSynchronize(dev_.stream()), "synchronizing the reference");
}

template <class T>
T Reference::read(const T* device) const {
  T v{};
  kiln::gpu::check(kiln::gpu::driver().cuMemcpyDtoHAsync(&v, reinterpret_cast<CUdeviceptr>(device), sizeof v, dev_.stream()), "reading a result");
  synchronize();
  return v;
}

}  // namespace benchgpu
