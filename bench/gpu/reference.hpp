// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The hand-written CUDA reference of every benchmark row, compiled in the same process (reference.cpp).
#pragma once

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "kiln/device.hpp"
#include "runtime/cuda/context.hpp"
#include "runtime/cuda/module.hpp"

namespace benchgpu {

class Reference {
 public:
  /// Blocks of the reductions' first pass (about one wave of 256-thread blocks on an H100).
  static constexpr int kBlocks = 1024;

  /// `contract`: NVRTC's default, a*b+c fused into one rounding; false: --fmad=false, kiln's rounding.
  Reference(kiln::gpu::Device& dev, bool contract);
  double compile_ms() const { return compile_ms_; }

  // Each queues its kernels on the device's stream; the scalar ones wait for their result.
  void fused(const float* a, const float* b, const float* c, float* out, long long n) const;
  float dot(const float* x, const float* y, long long n) const;
  double pi(long long n) const;
  void softmax(const float* x, float* out, long long n) const;
  void smooth1d(const float* x, float* out, long long n) const;
  void jacobi2d(const float* a, float* out, int rows, int cols) const;
  /// `steps` leapfrog steps of the 2-d wave equation, the three buffers rotating as kiln's wave2d rotates them.
  void wave2d(float* prev, float* cur, float* next, int rows, int cols, int steps) const;
  void black_scholes(const float* s, const float* k, const float* t, float* call, float* put, long long n, float r, float v) const;
  /// Per-row mean, variance and standard deviation of a rows x cols matrix (a warp per row).
  void row_stats(const float* x, float* mean, float* var, float* sd, int rows, int cols) const;
  /// Adds the counts of x (values in [0, 1), bin = int(x * bins)) to hist with one global atomicAdd per element.
  void histogram_atomic(const float* x, long long n, int* hist, int bins) const;
  /// All-pairs accelerations of n bodies, shared-memory tiles of 256 bodies.
  void nbody(const float* x, const float* y, const float* z, const float* m, float* ax, float* ay, float* az, int n) const;
  /// A 7- or 27-point 3-d stencil with a nearest border (clamped reads), one element per thread.
  void stencil3d(int points, const float* a, float* out, int nz, int ny, int nx) const;
  void empty() const;  ///< an empty kernel: the floor of launch overhead
  void synchronize() const;

 private:
  static constexpr std::size_t kMaxParams = 16;
  /// Queues kernel `kernel` (its position in the module, reference.cpp's Kernel) with at most kMaxParams parameters.
  void launch(std::size_t kernel, unsigned grid_x, unsigned block_x, std::initializer_list<void*> params, unsigned grid_y = 1,
              unsigned block_y = 1, unsigned grid_z = 1) const;
  static unsigned blocks(long long n, unsigned threads);
  template <class T>
  T read(const T* device) const;

  kiln::gpu::Device& dev_;
  double compile_ms_ = 0;
  std::unique_ptr<kiln::gpu::Module> module_;
  kiln::DeviceArray<double> partial_;  ///< block partials, then the results
};

}  // namespace benchgpu
