// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Tiled loops (codegen/cuda/emit_tiled.cpp) on the CUDA target. Without a GPU: which parfors the rule takes
// (every row runs one loop over a shared range, reading arrays at indices of the loop's index alone) and
// which it leaves, the tiles' layout, and NVRTC compiling them for sm_90 without a warning. On a GPU
// (skipped without one): n = 1, primes, counts that leave a block or a round part full, every block size the
// launch model picks, several arrays, f32 and f64, a 2-d parfor, a conditional read past the array's end, all
// against the interpreter bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench/gpu/kiln_kernels.hpp"
#include "codegen/cuda/emit_program.hpp"
#include "codegen/cuda/nvrtc.hpp"
#include "cuda_rows.hpp"
#include "cuda_test_support.hpp"
#include "kiln/kiln.hpp"

namespace kiln {
namespace {

namespace cu = codegen::cuda;
using cudatest::compile_for_sm90;
namespace rows = cudatest::rows;

void require_nvrtc() {
  std::string why;
  if (!cu::nvrtc_available(&why)) GTEST_SKIP() << "NVRTC is not available: " << why;
}

/// Emits `f` (lowered for CUDA) with the default emission settings.
cu::Program emitted(const ir::Function& f) { return cu::emit_program(cudatest::offloaded(f), cu::EmitOptions{}); }

/// Potential of every point of a 2-d grid from a list of charges (f64, two arrays read at the loop's index,
/// a 2-d parfor): every grid point sums over all charges in order.
const auto potential = [](Array<double, 2> gx, Array<double, 1> cx, Array<double, 1> q, Array<double, 2> out) {
  prange(shape(gx.shape(0), gx.shape(1)), [&](Int r, Int c) {
    Double acc = 0.0;
    const Double g = gx(r, c);
    range(cx.shape(0), [&](Int j) {
      const Double d = cx[j] - g;
      acc += q[j] / kiln::sqrt(d * d + 0.25);
    });
    out(r, c) = acc;
  });
};

/// A loop over [1, hi) with hi past the end of w: w is read only where the condition holds (j < n), which
/// the tiles' fetches must respect; the row's own element is skipped (j != i), as n-body codes skip self.
const auto guarded = [](Array<float, 1> x, Array<float, 1> w, Int hi, Array<float, 1> out) {
  prange(x.shape(0), [&](Int i) {
    Float acc = 1.0f;
    const Float xi = x[i];
    range(1, hi, [&](Int j) {
      if_(j < w.shape(0) && j != i, [&] { acc = acc * 0.5f + w[j] * xi; });
    });
    out[i] = acc;
  });
};

/// A gather: idx[j] is the same for every row at step j (tiled), y[idx[j]] is read where the loop reads it.
const auto gather = [](Array<float, 1> x, Array<std::int64_t, 1> idx, Array<float, 1> y, Array<float, 1> out) {
  prange(x.shape(0), [&](Int i) {
    Float acc = 0.0f;
    range(idx.shape(0), [&](Int j) { acc += y[idx[j]] * x[i]; });
    out[i] = acc;
  });
};

TEST(TiledCodegen, NBodyIsTiledWithOneVectorCellPerStep) {
  const cu::Program p = emitted(rows::lower_for_cuda("nbody", benchgpu::nbody, {"ax", "ay", "az", "x", "y", "z", "m", "eps2"}));
  ASSERT_EQ(p.gpu_kernels.size(), 1u) << p.kernels;
  EXPECT_EQ(p.gpu_kernels[0].strategy, cu::Strategy::Tiled) << p.kernels;
  // m, x, y and z at step j (in the order the body reads them): one float tile of four cells per step (a 16-byte read of a step's cells).
  EXPECT_NE(p.kernels.find("__shared__ __align__(16) float kiln_tile0[256 * 4];  // m, x, y, z"), std::string::npos) << p.kernels;
  EXPECT_NE(p.kernels.find("__launch_bounds__(256) nbody_k0"), std::string::npos) << p.kernels;
  EXPECT_NE(p.kernels.find("4 load(s) of each step fetched once per block"), std::string::npos) << p.kernels;
  require_nvrtc();
  cu::Program prog;
  const cu::Binary bin = compile_for_sm90(rows::lower_for_cuda("nbody", benchgpu::nbody, {"ax", "ay", "az", "x", "y", "z", "m", "eps2"}), {}, &prog);
  EXPECT_EQ(bin.ptx.find("fma.rn.f32"), std::string::npos) << "kiln does not contract a*b+c:\n" << bin.ptx;
  EXPECT_NE(bin.ptx.find("bar.sync"), std::string::npos);
}

/// `f`'s one kernel must be a tiled loop whose source holds each of `present` and none of `absent`; NVRTC compiles
/// it where NVRTC is available.
void expect_tiled(const ir::Function& f, std::initializer_list<const char*> present, std::initializer_list<const char*> absent = {}) {
  const cu::Program p = emitted(f);
  ASSERT_EQ(p.gpu_kernels.size(), 1u) << p.kernels;
  EXPECT_EQ(p.gpu_kernels[0].strategy, cu::Strategy::Tiled) << p.kernels;
  for (const char* s : present) EXPECT_NE(p.kernels.find(s), std::string::npos) << "no '" << s << "' in\n" << p.kernels;
  for (const char* s : absent) EXPECT_EQ(p.kernels.find(s), std::string::npos) << "'" << s << "' in\n" << p.kernels;
  std::string why;
  if (cu::nvrtc_available(&why)) compile_for_sm90(f);
}

TEST(TiledCodegen, SeveralArraysOfF64InA2dParfor) {
  expect_tiled(rows::lower_for_cuda("potential", potential, {"gx", "cx", "q", "out"}, 2), {"double kiln_tile0[256 * 2];  // q, cx"});
}

TEST(TiledCodegen, ConditionalReadsAreFetchedWithinTheExtents) {
  // The fetch tests the index against w's extent: steps past the end of w leave the cell alone.
  expect_tiled(rows::lower_for_cuda("guarded", guarded, {"x", "w", "hi", "out"}), {"< (unsigned long long)w_n0) kiln_tile0["});
}

TEST(TiledCodegen, AGatherTilesTheIndexAndReadsTheElementInPlace) {
  // y[idx[j]] differs by step only through a load: y is read in place.
  expect_tiled(rows::lower_for_cuda("gather", gather, {"x", "idx", "y", "out"}), {"long long kiln_tile0[256 * 1];  // idx"}, {"float kiln_tile"});
}

TEST(TiledCodegen, LoopsTheRuleLeavesKeepOneThreadPerRow) {
  // A range that depends on the row (a triangle): the block's rows would run different rounds.
  const auto triangle = [](Array<float, 1> x, Array<float, 1> f) {
    prange(x.shape(0), [&](Int i) {
      Float acc = 0.0f;
      range(i, [&](Int j) { acc += x[j]; });
      f[i] = acc;
    });
  };
  // Reads at indices that depend on the row: no element is shared by the block's rows at a step.
  const auto rowwise = [](Array<float, 2> a, Array<float, 1> f) {
    prange(a.shape(0), [&](Int i) {
      Float acc = 0.0f;
      range(a.shape(1), [&](Int j) { acc += a(i, j) * a(i, j); });
      f[i] = acc;
    });
  };
  // The loop reads an array the parfor writes: a tile would hold a copy from before the round.
  const auto self_update = [](Array<float, 1> x) {
    prange(x.shape(0), [&](Int i) {
      Float acc = 0.0f;
      range(x.shape(0), [&](Int j) { acc += x[j]; });
      x[i] = acc;
    });
  };
  for (const ir::Function& f : {rows::lower_for_cuda("triangle", triangle, {"x", "f"}), rows::lower_for_cuda("rowwise", rowwise, {"a", "f"}, 2),
                                rows::lower_for_cuda("self_update", self_update, {"x"}),
                                // A bounds check (y[idx[j]] may be out of range) may leave a thread's
                                // iterations before the block's barriers.
                                rows::lower_for_cuda("gather_checked", gather, {"x", "idx", "y", "out"}, 1, true)}) {
    const cu::Program p = emitted(f);
    ASSERT_FALSE(p.gpu_kernels.empty()) << f.name << ": no kernel, so nothing below would be checked";
    for (const cu::GpuKernel& k : p.gpu_kernels) EXPECT_NE(k.strategy, cu::Strategy::Tiled) << f.name << ":\n" << p.kernels;
  }
}

// ---- on a GPU ---------------------------------------------------------------------------------------------------

class TiledGpu : public kiln::cudatest::GpuTest {};

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(T)) != 0 && !(std::isnan(a[i]) && std::isnan(b[i]))) return false;
  return true;
}

template <class T>
NDArray<T> random_nd(std::vector<std::int64_t> shape, std::uint64_t seed, double lo = -1, double hi = 1) {
  NDArray<T> a(shape);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  for (std::int64_t i = 0; i < a.size(); ++i) a.data()[i] = static_cast<T>(u(rng));
  return a;
}

TEST_F(TiledGpu, NBodyMatchesTheInterpreterBitwiseForEveryCount) {
  auto g = jit("nbody", benchgpu::nbody, Options().on(Target::cuda));
  auto in = jit("nbody", benchgpu::nbody, Options().on(Target::interpreter));
  // One body; primes; one short of, at and past a block (and a round) of 256; several blocks with a tail.
  for (std::int64_t n : {1, 2, 7, 97, 255, 256, 257, 1021, 1543}) {
    const auto s = static_cast<std::uint64_t>(n);
    const NDArray<float> x = random_nd<float>({n}, s), y = random_nd<float>({n}, s + 1), z = random_nd<float>({n}, s + 2),
                         m = random_nd<float>({n}, s + 3, 0.5, 1);
    NDArray<float> ax({n}), ay({n}), az({n}), rx({n}), ry({n}), rz({n});
    g(ax, ay, az, x, y, z, m, benchgpu::kNbodyEps2);
    in(rx, ry, rz, x, y, z, m, benchgpu::kNbodyEps2);
    EXPECT_TRUE(same_bits(ax.to_vector(), rx.to_vector())) << n << " bodies";
    EXPECT_TRUE(same_bits(ay.to_vector(), ry.to_vector())) << n << " bodies";
    EXPECT_TRUE(same_bits(az.to_vector(), rz.to_vector())) << n << " bodies";
  }
  EXPECT_NE(g.diagnostics().find("tiled loop"), std::string::npos) << g.diagnostics();
}

TEST_F(TiledGpu, TwoF64ArraysInA2dParforMatchTheInterpreterBitwise) {
  auto g = jit("potential", potential, Options().on(Target::cuda));
  auto in = jit("potential", potential, Options().on(Target::interpreter));
  // Few rows (blocks of 32 on an H100), 10 000 rows (blocks of 64) and 40 200 rows (blocks of 256, the last part
  // full); charges that leave the last round part full.
  for (auto [rows_, cols, charges] : {std::tuple<std::int64_t, std::int64_t, std::int64_t>{1, 1, 1}, {3, 5, 300}, {17, 31, 513}, {2, 257, 7},
                                      {100, 100, 50}, {200, 201, 300}}) {
    const NDArray<double> gx = random_nd<double>({rows_, cols}, 11), cx = random_nd<double>({charges}, 12), q = random_nd<double>({charges}, 13);
    NDArray<double> out({rows_, cols}), ref({rows_, cols});
    g(gx, cx, q, out);
    in(gx, cx, q, ref);
    EXPECT_TRUE(same_bits(out.to_vector(), ref.to_vector())) << rows_ << " x " << cols << ", " << charges << " charges";
  }
}

TEST_F(TiledGpu, ConditionalReadsAndGathersMatchTheInterpreterBitwise) {
  auto g = jit("guarded", guarded, Options().on(Target::cuda));
  auto in = jit("guarded", guarded, Options().on(Target::interpreter));
  for (std::int64_t n : {1, 13, 300}) {
    const NDArray<float> x = random_nd<float>({n}, 21), w = random_nd<float>({n + 5}, 22);
    NDArray<float> out({n}), ref({n});
    // The loop runs 600 steps past w's last element: only the fetches within w's extent read it.
    g(x, w, std::int64_t{n + 600}, out);
    in(x, w, std::int64_t{n + 600}, ref);
    EXPECT_TRUE(same_bits(out.to_vector(), ref.to_vector())) << n;
  }
  auto gg = jit("gather", gather, Options().on(Target::cuda));
  auto gi = jit("gather", gather, Options().on(Target::interpreter));
  for (std::int64_t n : {333, 20000}) {  // blocks of 32 and of 128 on an H100
    const std::int64_t steps = 777;
    const NDArray<float> x = random_nd<float>({n}, 31), y = random_nd<float>({n}, 32);
    NDArray<std::int64_t> idx({steps});
    for (std::int64_t j = 0; j < steps; ++j) idx.data()[j] = (j * 37) % n;
    NDArray<float> out({n}), ref({n});
    gg(x, idx, y, out);
    gi(x, idx, y, ref);
    EXPECT_TRUE(same_bits(out.to_vector(), ref.to_vector())) << n;
  }
}

}  // namespace
}  // namespace kiln
