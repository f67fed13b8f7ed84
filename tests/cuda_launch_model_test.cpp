// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CUDA launch model (codegen/cuda/launch_model.hpp) without a GPU: each kernel's plan as the emitter
// states it, and each clause of the launch rule with the reason it reports, on an H100's shape and a small
// device's; on a GPU (skipped without one), the reasons in a kernel's diagnostics.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bench/gpu/kiln_kernels.hpp"
#include "codegen/cuda/emit_program.hpp"
#include "codegen/cuda/launch_model.hpp"
#include "cuda_rows.hpp"
#include "cuda_test_support.hpp"
#include "kiln/kiln.hpp"

namespace kiln {
namespace {

namespace cu = codegen::cuda;
namespace rows = cudatest::rows;

const cu::DeviceShape kH100{132, 2048, 2147483647u};
const cu::DeviceShape kSmall{20, 1024, 2147483647u};

const auto saxpy = [](Float a, Array<float> x, Array<float> y) { prange(x.shape(0), [&](Int i) { y[i] = a * x[i] + y[i]; }); };

/// The kernels of `f` emitted with the default settings.
std::vector<cu::GpuKernel> kernels(const ir::Function& f) {
  return cu::emit_program(cudatest::offloaded(f), cu::EmitOptions{}).gpu_kernels;
}

cu::GpuKernel elementwise(int unroll, int rank = 1) {
  cu::GpuKernel k;
  k.strategy = cu::Strategy::Elementwise;
  k.unroll = unroll;
  k.rank = rank;
  return k;
}

TEST(LaunchModel, EachKernelStatesTheRuleThatPlannedIt) {
  const auto sax = kernels(rows::lower_for_cuda("saxpy", saxpy, {"a", "x", "y"}));
  ASSERT_EQ(sax.size(), 1u);
  // saxpy updates y in place, so its rounds also load every iteration before they store (emit_kernel.cpp).
  EXPECT_EQ(sax[0].plan,
            "straight-line body: up to 4 iterations per thread per round, where the grid still fills the device; "
            "each round computes its iterations' values before it stores them (independent iterations: no load waits "
            "for an earlier iteration's store, as an in-place update's would)");
  const auto nb = kernels(rows::lower_for_cuda("nbody", benchgpu::nbody, {"ax", "ay", "az", "x", "y", "z", "m", "eps2"}));
  ASSERT_EQ(nb.size(), 1u);
  EXPECT_NE(nb[0].plan.find("every row runs one loop over a shared range: 4 load(s) of each step fetched once per block of up to 256 rows into 4096 bytes"),
            std::string::npos)
      << nb[0].plan;
  const auto dot = [](Array<double> x, Array<double> y) {
    Double s = 0.0;
    prange(x.shape(0), [&](Int i) { s += x[i] * y[i]; });
    return s;
  };
  const auto d = kernels(rows::lower_for_cuda("dot", dot, {"x", "y"}));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d[0].plan.find("1 reduction(s): blocks of 256 threads"), std::string::npos) << d[0].plan;
  const auto triangle = [](Array<float> x, Array<float> f) {
    prange(x.shape(0), [&](Int i) {
      Float acc = 0.0f;
      range(i, [&](Int j) { acc += x[j]; });
      f[i] = acc;
    });
  };
  const auto t = kernels(rows::lower_for_cuda("triangle", triangle, {"x", "f"}));
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].unroll, 1);
  EXPECT_NE(t[0].plan.find("the body runs a sequential loop"), std::string::npos) << t[0].plan;
}

TEST(LaunchModel, CoarsensWhenOnePerThreadWouldTakeMoreThanAWave) {
  const cu::KernelOccupancy occ{1024, 128, 2048};
  const cu::LaunchOverrides none;
  // 2^27 elements, 4 per thread: 2^25 threads, 124 waves of an H100's 270 336 resident threads.
  std::uint64_t big[] = {1ull << 27};
  const cu::LaunchChoice a = cu::choose_launch(elementwise(4), big, occ, kH100, none);
  EXPECT_EQ(a.reason, cu::LaunchReason::Coarsened);
  EXPECT_EQ(a.per_thread, 4);
  EXPECT_EQ(a.geometry.block.x, 128u);  // 1-d: the compact block
  EXPECT_EQ(a.geometry.grid.x, (1u << 27) / (128 * 4));
  // 2^20 elements: one per thread would be 3.9 waves (8192 blocks, each wave waiting for the one before); 4 per
  // thread are 2048 blocks, all resident at once.
  std::uint64_t mid[] = {1ull << 20};
  const cu::LaunchChoice b = cu::choose_launch(elementwise(4), mid, occ, kH100, none);
  EXPECT_EQ(b.reason, cu::LaunchReason::Coarsened);
  EXPECT_EQ(b.per_thread, 4);
  EXPECT_EQ(b.geometry.grid.x, (1u << 20) / (128 * 4));
  // 2^18 elements fit one wave one per thread: every load is in flight at once without coarsening.
  std::uint64_t wave[] = {1ull << 18};
  const cu::LaunchChoice w = cu::choose_launch(elementwise(4), wave, occ, kH100, none);
  EXPECT_EQ(w.reason, cu::LaunchReason::NotCoarsened);
  EXPECT_EQ(w.per_thread, 1);
  EXPECT_EQ(w.geometry.grid.x, (1u << 18) / 128);
  // One more element than a wave holds is coarsened.
  std::uint64_t over[] = {132ull * 2048 + 1};
  EXPECT_EQ(cu::choose_launch(elementwise(4), over, occ, kH100, none).reason, cu::LaunchReason::Coarsened);
  std::uint64_t full[] = {132ull * 2048};
  EXPECT_EQ(cu::choose_launch(elementwise(4), full, occ, kH100, none).reason, cu::LaunchReason::NotCoarsened);
  // The same count on a device with 20 SMs of 1024 threads is 12 waves: coarsened.
  EXPECT_EQ(cu::choose_launch(elementwise(4), wave, occ, kSmall, none).reason, cu::LaunchReason::Coarsened);
  // Fewer resident threads (a register-heavy kernel) lower the bar.
  EXPECT_EQ(cu::choose_launch(elementwise(4), wave, {1024, 128, 256}, kH100, none).reason, cu::LaunchReason::Coarsened);
  // KILN_CUDA_COARSEN_WAVES moves it: at 16 waves (the rule before, for U = 4) 2^20 runs one per thread.
  cu::LaunchOverrides sixteen;
  sixteen.coarsen_waves = 16;
  const cu::LaunchChoice o = cu::choose_launch(elementwise(4), mid, occ, kH100, sixteen);
  EXPECT_EQ(o.reason, cu::LaunchReason::NotCoarsened);
  EXPECT_EQ(o.geometry.grid.x, (1u << 20) / 128);
  // A kernel emitted without coarsening (a loop in its body, or KILN_CUDA_UNROLL=1): 8 waves at most.
  const cu::LaunchChoice c = cu::choose_launch(elementwise(1), big, occ, kH100, none);
  EXPECT_EQ(c.reason, cu::LaunchReason::OnePerThread);
  EXPECT_EQ(c.geometry.grid.x, 132u * (2048 / 128) * static_cast<unsigned>(cu::kMaxWaves));
  // KILN_CUDA_WAVES overrides the cap.
  cu::LaunchOverrides waves;
  waves.waves = 0;
  EXPECT_EQ(cu::choose_launch(elementwise(1), big, occ, kH100, waves).geometry.grid.x, (1u << 27) / 128);
  // 2-d kernels keep the occupancy API's block, 128 threads wide along the contiguous axis.
  std::uint64_t plane[] = {4096, 4096};
  const cu::LaunchChoice d = cu::choose_launch(elementwise(4, 2), plane, occ, kH100, none);
  EXPECT_EQ(d.reason, cu::LaunchReason::Coarsened);
  EXPECT_EQ(d.geometry.block.x * d.geometry.block.y, 1024u);
  std::uint64_t small_plane[] = {256, 256};
  EXPECT_EQ(cu::choose_launch(elementwise(4, 2), small_plane, occ, kH100, none).per_thread, 1);
  std::uint64_t mid_plane[] = {1024, 1024};
  EXPECT_EQ(cu::choose_launch(elementwise(4, 2), mid_plane, occ, kH100, none).per_thread, 4);
}

TEST(LaunchModel, FixedFormsReportTheirOwnClause) {
  const cu::KernelOccupancy occ{1024, 128, 2048};
  const cu::LaunchOverrides none;
  cu::GpuKernel tiled;
  tiled.strategy = cu::Strategy::Tiled;
  std::uint64_t bodies[] = {65536};
  const cu::LaunchChoice t = cu::choose_launch(tiled, bodies, occ, kH100, none);
  EXPECT_EQ(t.reason, cu::LaunchReason::Tiled);
  EXPECT_EQ(t.geometry.block.x, static_cast<unsigned>(cu::kTiledThreads));
  EXPECT_EQ(t.geometry.grid.x, 65536u / cu::kTiledThreads);
  // 4000 rows: 16 blocks of 256 would leave 116 SMs idle; blocks of 32 give 125 SMs a block each.
  std::uint64_t few[] = {4000};
  const cu::LaunchChoice f = cu::choose_launch(tiled, few, occ, kH100, none);
  EXPECT_EQ(f.reason, cu::LaunchReason::TiledSmallBlocks);
  EXPECT_EQ(f.geometry.block.x, 32u);
  EXPECT_EQ(f.geometry.grid.x, 125u);
  std::uint64_t some[] = {20000};  // 157 blocks of 128 cover the 132 SMs; 79 of 256 would not
  EXPECT_EQ(cu::choose_launch(tiled, some, occ, kH100, none).geometry.block.x, 128u);
  EXPECT_EQ(cu::choose_launch(tiled, some, occ, kSmall, none).geometry.block.x, 256u);
  cu::GpuKernel reduce;
  reduce.strategy = cu::Strategy::Reduce;
  reduce.unroll = 4;
  const cu::LaunchChoice r = cu::choose_launch(reduce, bodies, occ, kH100, none);
  EXPECT_EQ(r.reason, cu::LaunchReason::FixedReduction);
  // The same geometry on any device: the partials, and so the rounding, do not depend on it.
  const cu::LaunchChoice r2 = cu::choose_launch(reduce, bodies, {256, 256, 512}, kSmall, none);
  EXPECT_EQ(r.geometry.grid.count(), r2.geometry.grid.count());
  EXPECT_EQ(r.geometry.block.count(), r2.geometry.block.count());
  cu::GpuKernel coop;
  coop.strategy = cu::Strategy::Cooperative;
  std::uint64_t row_count[] = {4000};
  const cu::LaunchChoice c = cu::choose_launch(coop, row_count, occ, kH100, none, 5000);
  EXPECT_EQ(c.reason, cu::LaunchReason::Cooperative);
  EXPECT_EQ(c.geometry.block.x, cu::cooperative_geometry(4000, 5000, kH100).block.x);
  cu::LaunchOverrides warp;
  warp.row_threads = 32;
  EXPECT_EQ(cu::choose_launch(coop, row_count, occ, kH100, warp, 5000).geometry.block.x, 32u);
  for (cu::LaunchReason why : {cu::LaunchReason::FixedReduction, cu::LaunchReason::Cooperative, cu::LaunchReason::Staged, cu::LaunchReason::Tiled,
                               cu::LaunchReason::TiledSmallBlocks, cu::LaunchReason::Stencil, cu::LaunchReason::Coarsened,
                               cu::LaunchReason::NotCoarsened, cu::LaunchReason::OnePerThread})
    EXPECT_GT(cu::reason_text(why).size(), 20u);
}

class LaunchModelGpu : public cudatest::GpuTest {};

TEST_F(LaunchModelGpu, DiagnosticsNameEachKernelsPlanAndLatestLaunch) {
  auto k = jit("saxpy", saxpy, Options().on(Target::cuda));
  NDArray<float> x({1000}), y({1000});
  k(2.0f, x, y);
  const std::string d = k.diagnostics();
  EXPECT_NE(d.find("saxpy_k0: 1-d, elementwise; straight-line body"), std::string::npos) << d;
  EXPECT_NE(d.find("last launch: 1000 iterations"), std::string::npos) << d;
  EXPECT_NE(d.find(std::string(cu::reason_text(cu::LaunchReason::NotCoarsened))), std::string::npos) << d;
}

}  // namespace
}  // namespace kiln
