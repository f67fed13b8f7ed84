// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The hand-written CUDA of the public kernel suite (bench/suite/kernels.hpp), f64 as the suite is, compiled by
// NVRTC in the same process with --fmad=false (kiln's rounding: a * b + c rounds twice) and launched on the
// stream the suite rows time (suite_reference.cpp).
#pragma once

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/cuda/context.hpp"
#include "runtime/cuda/module.hpp"

namespace benchgpu {

/// The suite's hand-written CUDA source (NVRTC; the CUDA codegen test compiles it without a GPU).
const std::string& suite_reference_source();
/// Its `extern "C"` kernels, in the order SuiteReference looks them up.
const std::vector<std::string>& suite_reference_kernels();

/// Every array is row-major and dense on the device; each call queues its kernels on `stream`.
class SuiteReference {
 public:
  SuiteReference(kiln::gpu::Device& dev, CUstream stream);
  ~SuiteReference();
  double compile_ms() const { return compile_ms_; }

  // PolyBench/C 4.2 (the arithmetic of bench/suite/kernels.hpp, in its order where it sums in sequence).
  void jacobi_1d(double* A, double* B, long long n, long long tsteps) const;
  void jacobi_2d(double* A, double* B, long long n, long long tsteps) const;
  void heat_3d(double* A, double* B, long long n, long long tsteps) const;
  void fdtd_2d(double* ex, double* ey, double* hz, const double* fict, long long nx, long long ny, long long tmax) const;
  /// C = alpha A B + beta C (A ni x nk, B nk x nj), 16 x 16 shared-memory tiles, k in order.
  void gemm(double* C, const double* A, const double* B, double alpha, double beta, long long ni, long long nj, long long nk) const;
  /// D = (alpha A B) C + beta D; tmp (ni x nj) receives alpha A B.
  void two_mm(double* D, const double* A, const double* B, const double* C, double* tmp, double alpha, double beta, long long ni,
              long long nj, long long nk, long long nl) const;
  /// y = A^T (A x); tmp (m) receives A x.
  void atax(double* y, const double* A, const double* x, double* tmp, long long m, long long n) const;
  /// s = r^T A, q = A p (A n x m).
  void bicg(double* s, double* q, const double* A, const double* r, const double* p, long long n, long long m) const;
  void mvt(double* x1, double* x2, const double* A, const double* y1, const double* y2, long long n) const;
  void gemver(double* A, double* x, double* w, const double* u1, const double* v1, const double* u2, const double* v2,
              const double* y, const double* z, double alpha, double beta, long long n) const;
  void gesummv(double* y, const double* A, const double* B, const double* x, double alpha, double beta, long long n) const;
  /// The lower triangle of C = alpha A A^T + beta C (A n x m), tiles of 16 x 16, k in order.
  void syrk(double* C, const double* A, double alpha, double beta, long long n, long long m) const;
  /// cov = D^T D / (n - 1), D = data - column means (d: n x m scratch, mean: m scratch).
  void covariance(double* cov, const double* data, double* d, double* mean, long long n, long long m) const;
  /// corr = D^T D, D = (data - mean) / (sqrt(n) * (std <= 0.1 ? 1 : std)) (d, mean, sd scratch).
  void correlation(double* corr, const double* data, double* d, double* mean, double* sd, long long n, long long m) const;
  /// A = A C4 row by row (A rows x np).
  void doitgen(double* A, const double* C4, long long rows, long long np) const;

  // Kernels users commonly write.
  /// All-pairs accelerations, 128 bodies at a time staged in shared memory, j in order.
  void nbody(double* ax, double* ay, double* az, const double* x, const double* y, const double* z, const double* m, double eps2,
             long long n) const;
  /// Per-row mean, var, std and z-scores (a warp per row), per-column std (col_mean: cols scratch).
  void row_stats(double* mean, double* var, double* sd, double* col_sd, double* col_mean, double* zs, const double* x,
                 long long rows, long long cols) const;
  /// sum(clip((x - mean) / std, -c, c)): three grid reductions; waits for the total.
  double normalize_clip_sum(const double* x, long long n, double c) const;
  void stencil27(double* out, const double* in, long long n) const;
  /// Adds the 2-d histogram of (x, y) in [0, 1)^2 to hist (bins x bins), privatized per block in shared memory.
  void hist2d(std::int64_t* hist, const double* x, const double* y, long long n, long long bins) const;

 private:
  /// Queues kernel `kernel` (its position in the module, suite_reference.cpp's Kernel).
  void launch(std::size_t kernel, kiln::gpu::Dim3 grid, kiln::gpu::Dim3 block, void** params) const;
  /// y = scale * (A v) [+ add] [+ y before] for A rows x cols: a warp per row.
  void gemv(double* y, const double* A, const double* v, long long rows, long long cols, double scale, const double* add,
            bool accumulate) const;
  /// y = scale * (A^T v) [+ add] [+ y before]: 32 columns per block, 8 row groups combined in shared memory.
  void gemv_t(double* y, const double* A, const double* v, long long rows, long long cols, double scale, const double* add,
              bool accumulate) const;
  /// out (ni x nj) = alpha * (A B) [+ beta * Cin]; A ni x nk, B nk x nj.
  void matmul(double* out, const double* A, const double* B, const double* Cin, double alpha, double beta, long long ni,
              long long nj, long long nk) const;
  /// out (m x m) = d^T d / divisor for d (n x m).
  void gram(double* out, const double* d, long long n, long long m, double divisor) const;
  void column_stats(double* mean, double* sd, const double* data, long long n, long long m) const;

  kiln::gpu::Device& dev_;
  CUstream stream_;
  double compile_ms_ = 0;
  std::unique_ptr<kiln::gpu::Module> module_;
  double* partial_ = nullptr;  ///< reduction partials and results (device memory)
};

}  // namespace benchgpu
