// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The hand-written CUDA of the public kernel suite, as a careful CUDA programmer first writes it: a thread per
// output with the contiguous axis along x (coalesced), a warp per row for row products and row statistics,
// 32 columns per block with row groups combined in shared memory for the transposed products and column
// statistics, 16 x 16 shared-memory tiles for the matrix products, bodies staged in shared memory for the
// n-body, grid reductions with warp shuffles and a second pass over the block partials, a histogram privatized
// per block in shared memory. Each does the arithmetic of its kiln twin (bench/suite/kernels.hpp) in the same
// order where the kiln kernel sums in sequence; it is compiled with --fmad=false, kiln's rounding rule.
#include "bench/gpu/suite_reference.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "codegen/cuda/nvrtc.hpp"
#include "frontend/settings.hpp"
#include "kiln/device.hpp"
#include "kiln/error.hpp"
#include "runtime/cuda/driver.hpp"

namespace benchgpu {
namespace {

constexpr const char* kSource = R"CUDA(
typedef long long i64;

__device__ __forceinline__ double warp_sum(double v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
/// The sum of a block's values (blockDim.x a multiple of 32, at most 1024), valid in thread 0.
__device__ double block_sum(double v) {
  __shared__ double warps[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  v = warp_sum(v);
  __syncthreads();  // warps[] may still be read by a previous call
  if (lane == 0) warps[warp] = v;
  __syncthreads();
  if (warp == 0) v = warp_sum(lane < (int)(blockDim.x >> 5) ? warps[lane] : 0.0);
  return v;
}

// ---- stencils: a thread per interior element, the contiguous axis along x ----

extern "C" __global__ void s_jacobi1d(const double* __restrict__ in, double* __restrict__ out, i64 n) {
  const i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x + 1;
  if (i < n - 1) out[i] = 0.33333 * (in[i - 1] + in[i] + in[i + 1]);
}

extern "C" __global__ void s_jacobi2d(const double* __restrict__ in, double* __restrict__ out, i64 n) {
  const i64 j = (i64)blockIdx.x * blockDim.x + threadIdx.x + 1, i = (i64)blockIdx.y * blockDim.y + threadIdx.y + 1;
  if (i >= n - 1 || j >= n - 1) return;
  const i64 c = i * n + j;
  out[c] = 0.2 * (in[c] + in[c - 1] + in[c + 1] + in[c + n] + in[c - n]);
}

extern "C" __global__ void s_heat3d(const double* __restrict__ a, double* __restrict__ b, i64 n) {
  const i64 k = (i64)blockIdx.x * blockDim.x + threadIdx.x + 1, j = (i64)blockIdx.y * blockDim.y + threadIdx.y + 1;
  const i64 i = (i64)blockIdx.z + 1;
  if (j >= n - 1 || k >= n - 1) return;
  const i64 p = n * n, c = i * p + j * n + k;
  b[c] = 0.125 * (a[c + p] - 2.0 * a[c] + a[c - p]) + 0.125 * (a[c + n] - 2.0 * a[c] + a[c - n]) +
         0.125 * (a[c + 1] - 2.0 * a[c] + a[c - 1]) + a[c];
}

// One FDTD step in two kernels: ey and ex read only hz (ey's first row is the source), then hz reads both.
extern "C" __global__ void s_fdtd_e(double* __restrict__ ex, double* __restrict__ ey, const double* __restrict__ hz,
                                    const double* __restrict__ fict, i64 t, i64 nx, i64 ny) {
  const i64 j = (i64)blockIdx.x * blockDim.x + threadIdx.x, i = (i64)blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= nx || j >= ny) return;
  const i64 c = i * ny + j;
  ey[c] = i == 0 ? fict[t] : ey[c] - 0.5 * (hz[c] - hz[c - ny]);
  if (j >= 1) ex[c] = ex[c] - 0.5 * (hz[c] - hz[c - 1]);
}

extern "C" __global__ void s_fdtd_h(const double* __restrict__ ex, const double* __restrict__ ey, double* __restrict__ hz,
                                    i64 nx, i64 ny) {
  const i64 j = (i64)blockIdx.x * blockDim.x + threadIdx.x, i = (i64)blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= nx - 1 || j >= ny - 1) return;
  const i64 c = i * ny + j;
  hz[c] = hz[c] - 0.7 * (ex[c + 1] - ex[c] + ey[c + ny] - ey[c]);
}

extern "C" __global__ void s_stencil27(const double* __restrict__ in, double* __restrict__ out, i64 n) {
  const i64 k = (i64)blockIdx.x * blockDim.x + threadIdx.x, j = (i64)blockIdx.y * blockDim.y + threadIdx.y, i = blockIdx.z;
  if (j >= n || k >= n) return;
  double s = 0.0;
#pragma unroll
  for (int di = -1; di <= 1; ++di) {
    const i64 ii = min(max(i + di, (i64)0), n - 1);
#pragma unroll
    for (int dj = -1; dj <= 1; ++dj) {
      const i64 jj = min(max(j + dj, (i64)0), n - 1);
#pragma unroll
      for (int dk = -1; dk <= 1; ++dk) s += in[(ii * n + jj) * n + min(max(k + dk, (i64)0), n - 1)];
    }
  }
  out[(i * n + j) * n + k] = s * (1.0 / 27.0);
}

// ---- products: 16 x 16 shared-memory tiles, each thread one output, k in order ----

#define TILE 16
/// out = alpha * (A B) [+ beta * Cin]; A ni x nk, B nk x nj.
extern "C" __global__ void s_matmul(double* out, const double* __restrict__ A, const double* __restrict__ B,
                                    const double* Cin, double alpha, double beta, i64 ni, i64 nj, i64 nk) {
  __shared__ double As[TILE][TILE + 1], Bs[TILE][TILE + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const i64 i = (i64)blockIdx.y * TILE + ty, j = (i64)blockIdx.x * TILE + tx;
  double s = 0.0;
  for (i64 k0 = 0; k0 < nk; k0 += TILE) {
    As[ty][tx] = i < ni && k0 + tx < nk ? A[i * nk + k0 + tx] : 0.0;
    Bs[ty][tx] = k0 + ty < nk && j < nj ? B[(k0 + ty) * nj + j] : 0.0;
    __syncthreads();
    if (k0 + TILE <= nk) {
#pragma unroll
      for (int k = 0; k < TILE; ++k) s += As[ty][k] * Bs[k][tx];
    } else {
      for (int k = 0; k < nk - k0; ++k) s += As[ty][k] * Bs[k][tx];
    }
    __syncthreads();
  }
  if (i < ni && j < nj) out[i * nj + j] = Cin ? alpha * s + beta * Cin[i * nj + j] : alpha * s;
}

/// out (m x m) = d^T d / divisor for d (n x m): out[i][j] = sum_k d[k][i] d[k][j], k in order.
extern "C" __global__ void s_gram(double* __restrict__ out, const double* __restrict__ d, i64 n, i64 m, double divisor) {
  __shared__ double Di[TILE][TILE + 1], Dj[TILE][TILE + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const i64 i0 = (i64)blockIdx.y * TILE, j0 = (i64)blockIdx.x * TILE;
  double s = 0.0;
  for (i64 k0 = 0; k0 < n; k0 += TILE) {
    const bool row = k0 + ty < n;
    Di[ty][tx] = row && i0 + tx < m ? d[(k0 + ty) * m + i0 + tx] : 0.0;
    Dj[ty][tx] = row && j0 + tx < m ? d[(k0 + ty) * m + j0 + tx] : 0.0;
    __syncthreads();
    if (k0 + TILE <= n) {
#pragma unroll
      for (int k = 0; k < TILE; ++k) s += Di[k][ty] * Dj[k][tx];
    } else {
      for (int k = 0; k < n - k0; ++k) s += Di[k][ty] * Dj[k][tx];
    }
    __syncthreads();
  }
  if (i0 + ty < m && j0 + tx < m) out[(i0 + ty) * m + j0 + tx] = s / divisor;
}

/// C[i][j] = beta C[i][j] + alpha sum_k A[i][k] A[j][k] for j <= i (A n x m); blocks above the diagonal exit.
extern "C" __global__ void s_syrk(double* __restrict__ C, const double* __restrict__ A, double alpha, double beta, i64 n, i64 m) {
  if (blockIdx.x > blockIdx.y) return;
  __shared__ double Ai[TILE][TILE + 1], Aj[TILE][TILE + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const i64 i0 = (i64)blockIdx.y * TILE, j0 = (i64)blockIdx.x * TILE;
  double s = 0.0;
  for (i64 k0 = 0; k0 < m; k0 += TILE) {
    const bool col = k0 + tx < m;
    Ai[ty][tx] = col && i0 + ty < n ? A[(i0 + ty) * m + k0 + tx] : 0.0;
    Aj[ty][tx] = col && j0 + ty < n ? A[(j0 + ty) * m + k0 + tx] : 0.0;
    __syncthreads();
    if (k0 + TILE <= m) {
#pragma unroll
      for (int k = 0; k < TILE; ++k) s += Ai[ty][k] * Aj[tx][k];
    } else {
      for (int k = 0; k < m - k0; ++k) s += Ai[ty][k] * Aj[tx][k];
    }
    __syncthreads();
  }
  const i64 i = i0 + ty, j = j0 + tx;
  if (i < n && j <= i) C[i * n + j] = beta * C[i * n + j] + alpha * s;
}

/// The epilogue of the matrix-vector products: y = scale * s [+ add] [+ y before], in that order.
__device__ __forceinline__ void gemv_store(double* y, i64 r, double s, double scale, const double* add, int accumulate) {
  double o = scale * s;
  if (add) o = o + add[r];
  if (accumulate) o = y[r] + o;
  y[r] = o;
}

/// y = A v (A rows x cols): a warp per row (blocks of 32 x 8).
extern "C" __global__ void s_gemv(double* y, const double* __restrict__ A, const double* __restrict__ v, i64 rows, i64 cols,
                                  double scale, const double* add, int accumulate) {
  const i64 r = (i64)blockIdx.x * blockDim.y + threadIdx.y;
  if (r >= rows) return;
  const double* a = A + r * cols;
  double s = 0.0;
  for (i64 j = threadIdx.x; j < cols; j += 32) s += a[j] * v[j];
  s = warp_sum(s);
  if (threadIdx.x == 0) gemv_store(y, r, s, scale, add, accumulate);
}

/// y = A^T v: 32 columns per block (blocks of 32 x 8), the 8 row groups' sums combined in shared memory.
extern "C" __global__ void s_gemv_t(double* y, const double* __restrict__ A, const double* __restrict__ v, i64 rows, i64 cols,
                                    double scale, const double* add, int accumulate) {
  __shared__ double part[8][33];
  const i64 c = (i64)blockIdx.x * 32 + threadIdx.x;
  double s = 0.0;
  if (c < cols)
    for (i64 r = threadIdx.y; r < rows; r += 8) s += v[r] * A[r * cols + c];
  part[threadIdx.y][threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.y != 0 || c >= cols) return;
  double t = part[0][threadIdx.x];
#pragma unroll
  for (int g = 1; g < 8; ++g) t += part[g][threadIdx.x];
  gemv_store(y, c, t, scale, add, accumulate);
}

/// y[i] = alpha (A x)[i] + beta (B x)[i]: a warp per row reading both rows.
extern "C" __global__ void s_gesummv(double* __restrict__ y, const double* __restrict__ A, const double* __restrict__ B,
                                     const double* __restrict__ x, double alpha, double beta, i64 n) {
  const i64 r = (i64)blockIdx.x * blockDim.y + threadIdx.y;
  if (r >= n) return;
  double sa = 0.0, sb = 0.0;
  for (i64 j = threadIdx.x; j < n; j += 32) {
    sa += A[r * n + j] * x[j];
    sb += B[r * n + j] * x[j];
  }
  sa = warp_sum(sa);
  sb = warp_sum(sb);
  if (threadIdx.x == 0) y[r] = alpha * sa + beta * sb;
}

extern "C" __global__ void s_gemver_update(double* __restrict__ A, const double* __restrict__ u1, const double* __restrict__ v1,
                                           const double* __restrict__ u2, const double* __restrict__ v2, i64 n) {
  const i64 j = (i64)blockIdx.x * blockDim.x + threadIdx.x, i = (i64)blockIdx.y * blockDim.y + threadIdx.y;
  if (i < n && j < n) A[i * n + j] = A[i * n + j] + u1[i] * v1[j] + u2[i] * v2[j];
}

/// A = A C4 row by row (np <= 1024): a block per row of np threads, the row staged in shared memory.
extern "C" __global__ void s_doitgen(double* __restrict__ A, const double* __restrict__ C4, i64 np) {
  __shared__ double row[1024];
  double* a = A + (i64)blockIdx.x * np;
  for (i64 q = threadIdx.x; q < np; q += blockDim.x) row[q] = a[q];
  __syncthreads();
  for (i64 p = threadIdx.x; p < np; p += blockDim.x) {
    double s = 0.0;
    for (i64 q = 0; q < np; ++q) s += row[q] * C4[q * np + p];
    a[p] = s;
  }
}

// ---- statistics ----

/// Column means and (when sd) standard deviations of data (n x m), two passes: 32 columns per block of 32 x 8.
extern "C" __global__ void s_column_stats(double* __restrict__ mean, double* __restrict__ sd, const double* __restrict__ data,
                                          i64 n, i64 m) {
  __shared__ double part[8][33];
  const i64 c = (i64)blockIdx.x * 32 + threadIdx.x;
  const int tx = threadIdx.x, ty = threadIdx.y;
  double s = 0.0;
  if (c < m)
    for (i64 r = ty; r < n; r += 8) s += data[r * m + c];
  part[ty][tx] = s;
  __syncthreads();
  if (ty == 0) {
    double t = part[0][tx];
    for (int g = 1; g < 8; ++g) t += part[g][tx];
    part[0][tx] = t / (double)n;
  }
  __syncthreads();
  const double mu = part[0][tx];
  if (ty == 0 && c < m) mean[c] = mu;
  if (!sd) return;
  double q = 0.0;
  if (c < m)
    for (i64 r = ty; r < n; r += 8) {
      const double d = data[r * m + c] - mu;
      q += d * d;
    }
  __syncthreads();
  part[ty][tx] = q;
  __syncthreads();
  if (ty != 0 || c >= m) return;
  double t = part[0][tx];
  for (int g = 1; g < 8; ++g) t += part[g][tx];
  sd[c] = sqrt(t / (double)n);
}

/// d = data - mean (covariance) or (data - mean) / (root_n * (sd <= 0.1 ? 1 : sd)) (correlation, sd given).
extern "C" __global__ void s_center(double* __restrict__ d, const double* __restrict__ data, const double* __restrict__ mean,
                                    const double* __restrict__ sd, double root_n, i64 n, i64 m) {
  const i64 j = (i64)blockIdx.x * blockDim.x + threadIdx.x, i = (i64)blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= n || j >= m) return;
  const double v = data[i * m + j] - mean[j];
  d[i * m + j] = sd ? v / (root_n * (sd[j] <= 0.1 ? 1.0 : sd[j])) : v;
}

/// Per-row mean, var, std (two passes) and z-scores: a warp per row (blocks of 32 x 8).
extern "C" __global__ void s_row_stats(double* __restrict__ mean, double* __restrict__ var, double* __restrict__ sd,
                                       double* __restrict__ zs, const double* __restrict__ x, i64 rows, i64 cols) {
  const i64 r = (i64)blockIdx.x * blockDim.y + threadIdx.y;
  if (r >= rows) return;
  const double* a = x + r * cols;
  double s = 0.0;
  for (i64 j = threadIdx.x; j < cols; j += 32) s += a[j];
  const double mu = warp_sum(s) / (double)cols;
  double q = 0.0;
  for (i64 j = threadIdx.x; j < cols; j += 32) {
    const double d = a[j] - mu;
    q += d * d;
  }
  const double v = warp_sum(q) / (double)cols, d = sqrt(v);
  double* z = zs + r * cols;
  for (i64 j = threadIdx.x; j < cols; j += 32) z[j] = (a[j] - mu) / d;
  if (threadIdx.x == 0) mean[r] = mu, var[r] = v, sd[r] = d;
}

/// One pass of normalize-clip-sum over x, block partials into partial[]: pass 0 sums x, pass 1 the squared
/// deviations from stats[0], pass 2 clip((x - stats[0]) / stats[1], -c, c).
extern "C" __global__ void s_ncs_pass(const double* __restrict__ x, i64 n, int pass, const double* __restrict__ stats, double c,
                                      double* __restrict__ partial) {
  const double mu = pass > 0 ? stats[0] : 0.0, sd = pass > 1 ? stats[1] : 1.0;
  double s = 0.0;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (i64)gridDim.x * blockDim.x) {
    const double v = x[i];
    if (pass == 0) s += v;
    else if (pass == 1) s += (v - mu) * (v - mu);
    else s += fmin(fmax((v - mu) / sd, -c), c);
  }
  s = block_sum(s);
  if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

/// Combines a pass's block partials: stats[0] = mean, stats[1] = std, stats[2] = the clipped sum.
extern "C" __global__ void s_ncs_final(const double* __restrict__ partial, int blocks, i64 n, int pass, double* __restrict__ stats) {
  double s = 0.0;
  for (int b = threadIdx.x; b < blocks; b += blockDim.x) s += partial[b];
  s = block_sum(s);
  if (threadIdx.x != 0) return;
  if (pass == 0) stats[0] = s / (double)n;
  else if (pass == 1) stats[1] = sqrt(s / (double)n);
  else stats[2] = s;
}

// ---- n-body and histogram ----

/// All-pairs accelerations: blocks of 128 bodies, the bodies j staged 128 at a time in shared memory.
extern "C" __global__ void s_nbody(double* __restrict__ ax, double* __restrict__ ay, double* __restrict__ az,
                                   const double* __restrict__ x, const double* __restrict__ y, const double* __restrict__ z,
                                   const double* __restrict__ m, double eps2, i64 n) {
  __shared__ double tx[128], ty[128], tz[128], tm[128];
  const i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
  const double xi = i < n ? x[i] : 0.0, yi = i < n ? y[i] : 0.0, zi = i < n ? z[i] : 0.0;
  double sx = 0.0, sy = 0.0, sz = 0.0;
  for (i64 base = 0; base < n; base += 128) {
    const i64 j = base + threadIdx.x;
    tx[threadIdx.x] = j < n ? x[j] : 0.0;
    ty[threadIdx.x] = j < n ? y[j] : 0.0;
    tz[threadIdx.x] = j < n ? z[j] : 0.0;
    tm[threadIdx.x] = j < n ? m[j] : 0.0;
    __syncthreads();
    const int count = (int)min((i64)128, n - base);
    for (int k = 0; k < count; ++k) {
      const double dx = tx[k] - xi, dy = ty[k] - yi, dz = tz[k] - zi;
      const double r2 = dx * dx + dy * dy + dz * dz + eps2;
      const double f = tm[k] / (r2 * sqrt(r2));
      sx += f * dx;
      sy += f * dy;
      sz += f * dz;
    }
    __syncthreads();
  }
  if (i < n) ax[i] = sx, ay[i] = sy, az[i] = sz;
}

/// hist[bin(x)][bin(y)] += 1 (bins^2 <= 4096): counts per block in shared memory, added to hist at the end.
extern "C" __global__ void s_hist2d(long long* __restrict__ hist, const double* __restrict__ x, const double* __restrict__ y, i64 n,
                                    int bins) {
  __shared__ unsigned int h[4096];
  const int cells = bins * bins;
  for (int b = threadIdx.x; b < cells; b += blockDim.x) h[b] = 0u;
  __syncthreads();
  const double scale = (double)bins;
  for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (i64)gridDim.x * blockDim.x)
    atomicAdd(&h[(i64)(x[i] * scale) * bins + (i64)(y[i] * scale)], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < cells; b += blockDim.x)
    if (h[b]) atomicAdd(reinterpret_cast<unsigned long long*>(&hist[b]), (unsigned long long)h[b]);
}
)CUDA";

using kiln::gpu::Dim3;

unsigned blocks(long long n, long long per) { return static_cast<unsigned>(std::max(1LL, (n + per - 1) / per)); }

/// Blocks of the grid reductions (about 8 per SM of an H100) and of the histogram.
constexpr int kReduceBlocks = 1024;

/// The module's kernels, in the order of kNames: a launch names one by its position, resolved when the code is
/// written, so that a hand launch costs what a hand-written launch costs (no name search).
enum Kernel : std::size_t {
  kJacobi1d,
  kJacobi2d,
  kHeat3d,
  kFdtdE,
  kFdtdH,
  kStencil27,
  kMatmul,
  kGram,
  kSyrk,
  kGemv,
  kGemvT,
  kGesummv,
  kGemverUpdate,
  kDoitgen,
  kColumnStats,
  kCenter,
  kRowStats,
  kNcsPass,
  kNcsFinal,
  kNbody,
  kHist2d,
  kKernels
};
constexpr std::array<const char*, kKernels> kNames = {
    "s_jacobi1d",     "s_jacobi2d", "s_heat3d",    "s_fdtd_e",   "s_fdtd_h",    "s_stencil27",     "s_matmul",
    "s_gram",         "s_syrk",     "s_gemv",      "s_gemv_t",   "s_gesummv",   "s_gemver_update", "s_doitgen",
    "s_column_stats", "s_center",   "s_row_stats", "s_ncs_pass", "s_ncs_final", "s_nbody",         "s_hist2d"};

}  // namespace

const std::string& suite_reference_source() {
  static const std::string source = kSource;
  return source;
}

const std::vector<std::string>& suite_reference_kernels() {
  static const std::vector<std::string> names(kNames.begin(), kNames.end());
  return names;
}

SuiteReference::SuiteReference(kiln::gpu::Device& dev, CUstream stream) : dev_(dev), stream_(stream) {
  const auto bin = kiln::codegen::cuda::compile_source(kSource, "suite_reference", dev.info().arch(), {},
                                                       /*kiln_float_rules=*/true, kiln::detail::cuda_options().lineinfo);
  compile_ms_ = bin.compile_ms;
  module_ = std::make_unique<kiln::gpu::Module>(dev, bin.arch, bin.cubin, bin.ptx, suite_reference_kernels());
  kiln::gpu::check(kiln::gpu::driver().cuMemAlloc(reinterpret_cast<CUdeviceptr*>(&partial_), (kReduceBlocks + 4) * sizeof(double)),
                   "allocating the suite reference's partials");
}

SuiteReference::~SuiteReference() {
  if (partial_) kiln::gpu::driver().cuMemFree(reinterpret_cast<CUdeviceptr>(partial_));
}

void SuiteReference::launch(std::size_t kernel, Dim3 grid, Dim3 block, void** params) const {
  kiln::gpu::launch(stream_, module_->function(kernel), grid, block, params);
}

void SuiteReference::jacobi_1d(double* A, double* B, long long n, long long tsteps) const {
  for (long long t = 0; t < tsteps; ++t) {
    void* ab[] = {&A, &B, &n};
    launch(kJacobi1d, {blocks(n - 2, 256)}, {256}, ab);
    void* ba[] = {&B, &A, &n};
    launch(kJacobi1d, {blocks(n - 2, 256)}, {256}, ba);
  }
}

void SuiteReference::jacobi_2d(double* A, double* B, long long n, long long tsteps) const {
  const Dim3 grid{blocks(n - 2, 32), blocks(n - 2, 8)}, block{32, 8};
  for (long long t = 0; t < tsteps; ++t) {
    void* ab[] = {&A, &B, &n};
    launch(kJacobi2d, grid, block, ab);
    void* ba[] = {&B, &A, &n};
    launch(kJacobi2d, grid, block, ba);
  }
}

void SuiteReference::heat_3d(double* A, double* B, long long n, long long tsteps) const {
  const Dim3 grid{blocks(n - 2, 32), blocks(n - 2, 8), static_cast<unsigned>(std::max(1LL, n - 2))}, block{32, 8};
  for (long long t = 0; t < tsteps; ++t) {
    void* ab[] = {&A, &B, &n};
    launch(kHeat3d, grid, block, ab);
    void* ba[] = {&B, &A, &n};
    launch(kHeat3d, grid, block, ba);
  }
}

void SuiteReference::fdtd_2d(double* ex, double* ey, double* hz, const double* fict, long long nx, long long ny, long long tmax) const {
  const Dim3 grid{blocks(ny, 32), blocks(nx, 8)}, block{32, 8};
  for (long long t = 0; t < tmax; ++t) {
    void* e[] = {&ex, &ey, &hz, &fict, &t, &nx, &ny};
    launch(kFdtdE, grid, block, e);
    void* h[] = {&ex, &ey, &hz, &nx, &ny};
    launch(kFdtdH, grid, block, h);
  }
}

void SuiteReference::matmul(double* out, const double* A, const double* B, const double* Cin, double alpha, double beta, long long ni,
                            long long nj, long long nk) const {
  void* p[] = {&out, &A, &B, &Cin, &alpha, &beta, &ni, &nj, &nk};
  launch(kMatmul, {blocks(nj, 16), blocks(ni, 16)}, {16, 16}, p);
}

void SuiteReference::gemm(double* C, const double* A, const double* B, double alpha, double beta, long long ni, long long nj,
                          long long nk) const {
  matmul(C, A, B, C, alpha, beta, ni, nj, nk);
}

void SuiteReference::two_mm(double* D, const double* A, const double* B, const double* C, double* tmp, double alpha, double beta,
                            long long ni, long long nj, long long nk, long long nl) const {
  matmul(tmp, A, B, nullptr, alpha, 0.0, ni, nj, nk);
  matmul(D, tmp, C, D, 1.0, beta, ni, nl, nj);
}

void SuiteReference::gemv(double* y, const double* A, const double* v, long long rows, long long cols, double scale, const double* add,
                          bool accumulate) const {
  int acc = accumulate ? 1 : 0;
  void* p[] = {&y, &A, &v, &rows, &cols, &scale, &add, &acc};
  launch(kGemv, {blocks(rows, 8)}, {32, 8}, p);
}

void SuiteReference::gemv_t(double* y, const double* A, const double* v, long long rows, long long cols, double scale, const double* add,
                            bool accumulate) const {
  int acc = accumulate ? 1 : 0;
  void* p[] = {&y, &A, &v, &rows, &cols, &scale, &add, &acc};
  launch(kGemvT, {blocks(cols, 32)}, {32, 8}, p);
}

void SuiteReference::atax(double* y, const double* A, const double* x, double* tmp, long long m, long long n) const {
  gemv(tmp, A, x, m, n, 1.0, nullptr, false);
  gemv_t(y, A, tmp, m, n, 1.0, nullptr, false);
}

void SuiteReference::bicg(double* s, double* q, const double* A, const double* r, const double* p, long long n, long long m) const {
  gemv_t(s, A, r, n, m, 1.0, nullptr, false);
  gemv(q, A, p, n, m, 1.0, nullptr, false);
}

void SuiteReference::mvt(double* x1, double* x2, const double* A, const double* y1, const double* y2, long long n) const {
  gemv(x1, A, y1, n, n, 1.0, nullptr, true);
  gemv_t(x2, A, y2, n, n, 1.0, nullptr, true);
}

void SuiteReference::gemver(double* A, double* x, double* w, const double* u1, const double* v1, const double* u2, const double* v2,
                            const double* y, const double* z, double alpha, double beta, long long n) const {
  void* p[] = {&A, &u1, &v1, &u2, &v2, &n};
  launch(kGemverUpdate, {blocks(n, 32), blocks(n, 8)}, {32, 8}, p);
  gemv_t(x, A, y, n, n, beta, z, true);
  gemv(w, A, x, n, n, alpha, nullptr, true);
}

void SuiteReference::gesummv(double* y, const double* A, const double* B, const double* x, double alpha, double beta, long long n) const {
  void* p[] = {&y, &A, &B, &x, &alpha, &beta, &n};
  launch(kGesummv, {blocks(n, 8)}, {32, 8}, p);
}

void SuiteReference::syrk(double* C, const double* A, double alpha, double beta, long long n, long long m) const {
  void* p[] = {&C, &A, &alpha, &beta, &n, &m};
  launch(kSyrk, {blocks(n, 16), blocks(n, 16)}, {16, 16}, p);
}

void SuiteReference::gram(double* out, const double* d, long long n, long long m, double divisor) const {
  void* p[] = {&out, &d, &n, &m, &divisor};
  launch(kGram, {blocks(m, 16), blocks(m, 16)}, {16, 16}, p);
}

void SuiteReference::column_stats(double* mean, double* sd, const double* data, long long n, long long m) const {
  void* p[] = {&mean, &sd, &data, &n, &m};
  launch(kColumnStats, {blocks(m, 32)}, {32, 8}, p);
}

void SuiteReference::covariance(double* cov, const double* data, double* d, double* mean, long long n, long long m) const {
  column_stats(mean, nullptr, data, n, m);
  const double* no_sd = nullptr;
  double root_n = 1.0;
  void* p[] = {&d, &data, &mean, &no_sd, &root_n, &n, &m};
  launch(kCenter, {blocks(m, 32), blocks(n, 8)}, {32, 8}, p);
  gram(cov, d, n, m, static_cast<double>(n - 1));
}

void SuiteReference::correlation(double* corr, const double* data, double* d, double* mean, double* sd, long long n, long long m) const {
  column_stats(mean, sd, data, n, m);
  double root_n = std::sqrt(static_cast<double>(n));
  void* p[] = {&d, &data, &mean, &sd, &root_n, &n, &m};
  launch(kCenter, {blocks(m, 32), blocks(n, 8)}, {32, 8}, p);
  gram(corr, d, n, m, 1.0);
}

void SuiteReference::doitgen(double* A, const double* C4, long long rows, long long np) const {
  if (np > 1024) throw kiln::ValueError("suite reference doitgen: at most 1024 columns (a block per row)");
  void* p[] = {&A, &C4, &np};
  launch(kDoitgen, {static_cast<unsigned>(rows)}, {static_cast<unsigned>((np + 31) / 32 * 32)}, p);
}

void SuiteReference::nbody(double* ax, double* ay, double* az, const double* x, const double* y, const double* z, const double* m,
                           double eps2, long long n) const {
  void* p[] = {&ax, &ay, &az, &x, &y, &z, &m, &eps2, &n};
  launch(kNbody, {blocks(n, 128)}, {128}, p);
}

void SuiteReference::row_stats(double* mean, double* var, double* sd, double* col_sd, double* col_mean, double* zs, const double* x,
                               long long rows, long long cols) const {
  void* p[] = {&mean, &var, &sd, &zs, &x, &rows, &cols};
  launch(kRowStats, {blocks(rows, 8)}, {32, 8}, p);
  column_stats(col_mean, col_sd, x, rows, cols);
}

double SuiteReference::normalize_clip_sum(const double* x, long long n, double c) const {
  double* stats = partial_ + kReduceBlocks;
  double* partial = partial_;
  int nb = static_cast<int>(std::min<long long>(kReduceBlocks, blocks(n, 256)));
  for (int pass = 0; pass < 3; ++pass) {
    void* p[] = {&x, &n, &pass, &stats, &c, &partial};
    launch(kNcsPass, {static_cast<unsigned>(nb)}, {256}, p);
    void* f[] = {&partial, &nb, &n, &pass, &stats};
    launch(kNcsFinal, {1}, {1024}, f);
  }
  double total = 0;
  kiln::gpu::check(kiln::gpu::driver().cuMemcpyDtoHAsync(&total, reinterpret_cast<CUdeviceptr>(stats + 2), sizeof total, stream_),
                   "reading the suite reference's sum");
  kiln::gpu::check(kiln::gpu::driver().cuStreamSynchronize(stream_), "synchronizing the suite reference");
  return total;
}

void SuiteReference::stencil27(double* out, const double* in, long long n) const {
  void* p[] = {&in, &out, &n};
  launch(kStencil27, {blocks(n, 32), blocks(n, 8), static_cast<unsigned>(std::max(1LL, n))}, {32, 8}, p);
}

void SuiteReference::hist2d(std::int64_t* hist, const double* x, const double* y, long long n, long long bins) const {
  if (bins * bins > 4096) throw kiln::ValueError("suite reference hist2d: at most 64 x 64 bins (shared-memory counts)");
  int b = static_cast<int>(bins);
  void* p[] = {&hist, &x, &y, &n, &b};
  launch(kHist2d, {static_cast<unsigned>(std::min<long long>(kReduceBlocks, blocks(n, 256)))}, {256}, p);
}

}  // namespace benchgpu
