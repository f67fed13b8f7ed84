// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Contractions (codegen/cuda/emit_contraction.cpp) on the CUDA target. Without a GPU: which parfors get a tiles
// variant (matrix products as kiln::dot lowers them, Gram products and triangles as spread_loops leaves them)
// and which do not, the launch model's rule between the variant and a thread per element, and NVRTC compiling
// every suite product warning-free for sm_90. On a GPU (skipped without one): the products through the tiles
// variant (KILN_CUDA_CONTRACTION=1, so that small sizes take it too) at sizes 0, 1, primes, sides that leave a
// tile, a chunk of steps or a warp part full, and large ones, with NaN, infinities and signed zeros, bit for bit
// against the interpreter, and the diagnostics naming the variant.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "bench/suite/kernels.hpp"
#include "codegen/cuda/emit_program.hpp"
#include "codegen/cuda/launch_model.hpp"
#include "codegen/cuda/nvrtc.hpp"
#include "cuda_rows.hpp"
#include "cuda_test_support.hpp"
#include "kiln/kiln.hpp"

namespace kiln {
namespace {

namespace cu = codegen::cuda;
namespace sk = suite::kiln_kernels;
namespace rows = cudatest::rows;

cu::Program emitted(const ir::Function& f) { return cu::emit_program(cudatest::offloaded(f), cu::EmitOptions{}); }

/// C = A B as a prange over the elements, each summing along k in order.
template <class T>
const auto matmul = [](Array<T, 2> C, Array<T, 2> A, Array<T, 2> B) {
  prange(shape(C.shape(0), C.shape(1)), [&](Int i, Int j) {
    Scalar<T> s = T(0);
    range(A.shape(1), [&](Int k) { s += A(i, k) * B(k, j); });
    C(i, j) = s;
  });
};

/// C = A^T B^T (A k x m, B n x k): both operands transposed, a row operand read along its slow index and a column
/// operand along its fast one (the opposite of matmul's).
template <class T>
const auto transposed = [](Array<T, 2> C, Array<T, 2> A, Array<T, 2> B) {
  prange(shape(C.shape(0), C.shape(1)), [&](Int i, Int j) {
    Scalar<T> s = T(0);
    range(A.shape(0), [&](Int k) { s += A(k, i) * B(j, k); });
    C(i, j) = s;
  });
};

/// C = A B with kiln::dot: a thread per element walking k when the elements fill a device (2^18 of them or
/// more; fewer are summed in chunks: lower_array_ops).
const auto dot_product = [](Array<double, 2> C, Array<double, 2> A, Array<double, 2> B) { C(all, all) = kiln::dot(A, B); };

using rows::gram;

/// The tiles variants among `p`'s kernels.
int tiled_kernels(const cu::Program& p) {
  int n = 0;
  for (const cu::GpuKernel& k : p.gpu_kernels) n += !k.tiles_name.empty();
  return n;
}

// ---- the rule and the form, no GPU needed ----------------------------------------------------------------------

TEST(ContractionCodegen, SuiteProductsGetATilesVariant) {
  struct Case {
    const char* name;
    ir::Function f;
    int variants;
  };
  const std::vector<Case> cases = {
      {"gemm", rows::lower_for_cuda("gemm", sk::gemm, {"C", "A", "B", "alpha", "beta"}), 1},
      {"two_mm", rows::lower_for_cuda("two_mm", sk::two_mm, {"D", "A", "B", "C", "alpha", "beta"}), 2},
      {"syrk", rows::lower_for_cuda("syrk", sk::syrk, {"C", "A", "alpha", "beta"}), 1},
      {"covariance", rows::lower_for_cuda("covariance", sk::covariance, {"data"}), 1},
      {"correlation", rows::lower_for_cuda("correlation", sk::correlation, {"data"}), 1},
      {"doitgen", rows::lower_for_cuda("doitgen", sk::doitgen, {"A", "C4"}), 1},
      {"gram", rows::lower_for_cuda("gram", gram, {"out", "d"}, 2), 1},
  };
  for (const Case& c : cases) {
    const cu::Program p = emitted(c.f);
    EXPECT_EQ(tiled_kernels(p), c.variants) << c.name << ":\n" << p.kernels;
    for (const cu::GpuKernel& k : p.gpu_kernels) {
      if (k.tiles_name.empty()) continue;
      EXPECT_NE(p.kernels.find("__launch_bounds__(256, 2) " + k.tiles_name + "("), std::string::npos) << c.name << ":\n" << p.kernels;
      EXPECT_NE(k.plan.find("a contraction"), std::string::npos) << k.plan;
      // The variant's own entry, after the kernel's.
      const std::vector<std::string> entries = p.entries();
      ASSERT_LT(static_cast<std::size_t>(k.tiles_entry), entries.size());
      EXPECT_EQ(entries[static_cast<std::size_t>(k.tiles_entry)], k.tiles_name);
    }
    std::string why;
    if (cu::nvrtc_available(&why)) {
      cu::Program prog;
      const cu::Binary bin = cudatest::compile_for_sm90(c.f, {}, &prog);
      EXPECT_EQ(bin.ptx.find("fma.rn.f64"), std::string::npos) << c.name << ": kiln does not contract a*b+c";
    }
  }
}

// f64 and f32 tiles are read a vector at a time (2 or 4 elements of a side in one 16-byte shared load); other
// types, and a side that mixes f32 with another type, element by element.
TEST(ContractionCodegen, FloatTilesAreReadAVectorAtATime) {
  const cu::Program d = emitted(rows::lower_for_cuda("matmul", matmul<double>, {"C", "A", "B"}, 2));
  ASSERT_EQ(tiled_kernels(d), 1) << d.kernels;
  EXPECT_NE(d.kernels.find("const double2 kiln_v0_1 = *reinterpret_cast<const double2*>"), std::string::npos) << d.kernels;
  EXPECT_EQ(d.kernels.find("float4"), std::string::npos) << d.kernels;
  const cu::Program f = emitted(rows::lower_for_cuda("transposed", transposed<float>, {"C", "A", "B"}, 2));
  ASSERT_EQ(tiled_kernels(f), 1) << f.kernels;
  EXPECT_NE(f.kernels.find("const float4 kiln_v0_0 = *reinterpret_cast<const float4*>"), std::string::npos) << f.kernels;
  EXPECT_NE(f.kernels.find("__shared__ __align__(16) float kiln_ct0[2][16][64 + 4]"), std::string::npos) << f.kernels;
  // A full chunk unrolled, the last one in a loop.
  EXPECT_NE(f.kernels.find("if (kiln_round == 16) {"), std::string::npos) << f.kernels;
  const cu::Program i = emitted(rows::lower_for_cuda("matmul", matmul<std::int64_t>, {"C", "A", "B"}, 2));
  ASSERT_EQ(tiled_kernels(i), 1) << i.kernels;
  EXPECT_EQ(i.kernels.find("kiln_v0_"), std::string::npos) << i.kernels;
  EXPECT_NE(i.kernels.find("[64 + 1]"), std::string::npos) << i.kernels;
  // 4- and 8-byte operands: each chunk copied by cp.async into the second of two sets of tiles; other sizes, or
  // the experiment override, through registers into one set.
  EXPECT_NE(d.kernels.find("cp.async.ca.shared.global [%0], [%1], 8;"), std::string::npos) << d.kernels;
  EXPECT_NE(f.kernels.find("cp.async.ca.shared.global [%0], [%1], 4;"), std::string::npos) << f.kernels;
  EXPECT_NE(d.kernels.find("kiln_ct0[2][16][64 + 2]"), std::string::npos) << d.kernels;
  for (const cu::GpuKernel& k : d.gpu_kernels) {  // the diagnostics' plan says so
    if (k.tiles_name.empty()) continue;
    EXPECT_NE(k.plan.find("read 2 row and 2 column element(s) a shared load"), std::string::npos) << k.plan;
    EXPECT_NE(k.plan.find("copied by cp.async"), std::string::npos) << k.plan;
  }
  EXPECT_EQ(d.kernels.find("kiln_cell0"), std::string::npos) << d.kernels;
  const cu::Program h = emitted(rows::lower_for_cuda("matmul", matmul<std::int16_t>, {"C", "A", "B"}, 2));
  ASSERT_EQ(tiled_kernels(h), 1) << h.kernels;
  EXPECT_EQ(h.kernels.find("cp.async"), std::string::npos) << h.kernels;
  EXPECT_NE(h.kernels.find("kiln_cell0"), std::string::npos) << h.kernels;
  cu::EmitOptions registers;
  registers.contraction_async = false;
  const cu::Program r = cu::emit_program(cudatest::offloaded(rows::lower_for_cuda("matmul", matmul<double>, {"C", "A", "B"}, 2)), registers);
  EXPECT_EQ(r.kernels.find("cp.async"), std::string::npos) << r.kernels;
  EXPECT_NE(r.kernels.find("kiln_cell0"), std::string::npos) << r.kernels;
  std::string why;
  if (cu::nvrtc_available(&why))
    for (const ir::Function& fn : {rows::lower_for_cuda("matmul", matmul<float>, {"C", "A", "B"}, 2),
                                   rows::lower_for_cuda("matmul", matmul<std::int16_t>, {"C", "A", "B"}, 2),
                                   rows::lower_for_cuda("transposed", transposed<double>, {"C", "A", "B"}, 2),
                                   rows::lower_for_cuda("matmul", matmul<std::int64_t>, {"C", "A", "B"}, 2)}) {
      cu::Program prog;
      const cu::Binary bin = cudatest::compile_for_sm90(fn, {}, &prog);
      EXPECT_NE(bin.ptx.find("ld.shared"), std::string::npos) << fn.name;
      EXPECT_EQ(bin.ptx.find("cp.async.ca.shared.global") != std::string::npos, prog.kernels.find("cp.async") != std::string::npos) << fn.name;
      EXPECT_EQ(bin.ptx.find("fma.rn.f"), std::string::npos) << fn.name << ": kiln does not contract a*b+c";
    }
}

// kiln rounds a*b + c twice; with Options::fast_math NVRTC gets --use_fast_math (--fmad=true) and the tiles'
// steps become FMAs, the form whose ceiling is twice the plain one (docs/gpu.md, "The ceiling").
TEST(ContractionCodegen, FastMathFusesTheStepsIntoFmas) {
  std::string why;
  if (!cu::nvrtc_available(&why)) GTEST_SKIP() << why;
  const ir::Function f = rows::lower_for_cuda("matmul", matmul<double>, {"C", "A", "B"}, 2);
  codegen::CodegenOptions fast;
  fast.fast_math = true;
  cu::Program prog;
  EXPECT_NE(cudatest::compile_for_sm90(f, fast, &prog).ptx.find("fma.rn.f64"), std::string::npos);
  EXPECT_EQ(cudatest::compile_for_sm90(f, {}, &prog).ptx.find("fma.rn.f64"), std::string::npos);
  ASSERT_EQ(tiled_kernels(prog), 1) << prog.kernels;
}

TEST(ContractionCodegen, TheTriangleIsTestedPerElementAndSkippedPerTile) {
  const cu::Program p = emitted(rows::lower_for_cuda("syrk", sk::syrk, {"C", "A", "alpha", "beta"}));
  EXPECT_NE(p.kernels.find("if (!__syncthreads_or(kiln_any)) continue;"), std::string::npos) << p.kernels;
  // A(i, k) and A(j, k): a tile of rows and one of columns, both fetched along k (A's contiguous index).
  EXPECT_NE(p.kernels.find("a row of the tile each"), std::string::npos) << p.kernels;
  EXPECT_NE(p.kernels.find("a column of the tile each"), std::string::npos) << p.kernels;
  EXPECT_NE(p.kernels.find("consecutive threads, consecutive steps"), std::string::npos) << p.kernels;
}

TEST(ContractionCodegen, ParforsTheRuleLeavesHaveNoVariant) {
  // A product with a vector: a 1-d parfor, no operand of columns.
  const auto matvec = [](Array<double, 1> y, Array<double, 2> A, Array<double, 1> x) { y(all) = kiln::dot(A, x); };
  // The loop's bound depends on the element (a triangle in k): the block's elements would run different chunks.
  const auto ragged = [](Array<double, 2> C, Array<double, 2> A, Array<double, 2> B) {
    prange(shape(C.shape(0), C.shape(1)), [&](Int i, Int j) {
      Double s = 0.0;
      range(i + 1, [&](Int k) { s += A(i, k) * B(k, j); });
      C(i, j) = s;
    });
  };
  // The loop reads an array the parfor writes: a tile would hold a copy from before the chunk.
  const auto self_update = [](Array<double, 2> C, Array<double, 2> A) {
    prange(shape(C.shape(0), C.shape(1)), [&](Int i, Int j) {
      Double s = 0.0;
      range(A.shape(1), [&](Int k) { s += A(i, k) * C(k, j); });
      C(i, j) = s;
    });
  };
  // Operands of one side only (every element of a row reads the same A(i, k)): nothing for a column tile.
  const auto one_side = [](Array<double, 2> C, Array<double, 2> A) {
    prange(shape(C.shape(0), C.shape(1)), [&](Int i, Int j) {
      Double s = 0.0;
      range(A.shape(1), [&](Int k) { s += A(i, k) * A(i, k); });
      C(i, j) = s + static_cast<Double>(j);
    });
  };
  for (const ir::Function& f :
       {rows::lower_for_cuda("matvec", matvec, {"y", "A", "x"}), rows::lower_for_cuda("ragged", ragged, {"C", "A", "B"}, 2),
        rows::lower_for_cuda("self_update", self_update, {"C", "A"}, 2), rows::lower_for_cuda("one_side", one_side, {"C", "A"}, 2)}) {
    const cu::Program p = emitted(f);
    EXPECT_EQ(tiled_kernels(p), 0) << f.name << ":\n" << p.kernels;
  }
}

// Under a triangle's test, the copies of a tile that fail it run the loop with the others: a load the test keeps
// in range (X(i - j, k), read in place: it reads both i and j) would be read at a negative row by them, where the
// plain form never reads it. A load every element reads alike (w(k)) keeps the variant.
TEST(ContractionCodegen, UnderATestOnlyLoadsEveryElementSharesAreReadInPlace) {
  const auto banded = [](Array<double, 2> C, Array<double, 2> A, Array<double, 2> X) {
    prange(shape(C.shape(0), C.shape(1)), [&](Int i, Int j) {
      if_(j <= i, [&] {
        Double s = 0.0;
        range(A.shape(1), [&](Int k) { s += A(i, k) * A(j, k) * X(i - j, k); });
        C(i, j) = s;
      });
    });
  };
  const auto weighted = [](Array<double, 2> C, Array<double, 2> A, Array<double, 1> w) {
    prange(shape(C.shape(0), C.shape(1)), [&](Int i, Int j) {
      if_(j <= i, [&] {
        Double s = 0.0;
        range(A.shape(1), [&](Int k) { s += A(i, k) * A(j, k) * w(k); });
        C(i, j) = s;
      });
    });
  };
  const cu::Program b = emitted(rows::lower_for_cuda("banded", banded, {"C", "A", "X"}, 2));
  EXPECT_EQ(tiled_kernels(b), 0) << b.kernels;
  const cu::Program w = emitted(rows::lower_for_cuda("weighted", weighted, {"C", "A", "w"}, 2));
  EXPECT_EQ(tiled_kernels(w), 1) << w.kernels;
}

TEST(ContractionLaunch, TheTilesVariantRunsUnlessTheOverrideSaysOtherwise) {
  const cu::DeviceShape h100{132, 2048, 2147483647u};
  const cu::Program p = emitted(rows::lower_for_cuda("gemm", sk::gemm, {"C", "A", "B", "alpha", "beta"}));
  ASSERT_EQ(tiled_kernels(p), 1);
  const cu::GpuKernel* k = nullptr;
  for (const cu::GpuKernel& x : p.gpu_kernels)
    if (!x.tiles_name.empty()) k = &x;
  // A block of 256 threads per 64 x 64 tile of elements, columns along x; skinny and small products too (the
  // thread per element was slower at every shape measured: launch_model.cpp).
  for (const auto& [rows_, cols, gx, gy] : {std::tuple<std::uint64_t, std::uint64_t, unsigned, unsigned>{2000, 2100, 33, 32},
                                            {65536, 8, 1, 1024}, {1, 1, 1, 1}, {256, 256, 4, 4}, {5000000, 3, 1, 65535}}) {
    const std::uint64_t n[2] = {rows_, cols};
    const cu::LaunchChoice c = cu::choose_launch(*k, n, {}, h100, {});
    EXPECT_TRUE(c.tiles) << rows_ << " x " << cols;
    EXPECT_EQ(c.reason, cu::LaunchReason::ContractionTiles);
    EXPECT_EQ(c.geometry.block.x, 256u);
    EXPECT_EQ(c.geometry.grid.x, gx) << rows_ << " x " << cols;
    EXPECT_EQ(c.geometry.grid.y, gy) << rows_ << " x " << cols;  // capped: the tile loops stride over the rest
  }
  EXPECT_NE(std::string(cu::reason_text(cu::LaunchReason::ContractionTiles)).find("tiles variant"), std::string::npos);
  const std::uint64_t big[2] = {2000, 2100};
  cu::LaunchOverrides forced;
  forced.contraction = 0;
  const cu::LaunchChoice plain = cu::choose_launch(*k, big, {}, h100, forced);
  EXPECT_FALSE(plain.tiles);
  EXPECT_EQ(plain.reason, cu::LaunchReason::ContractionForced);
  EXPECT_EQ(plain.geometry.block.count(), 256u);  // the occupancy API's default block, as the kernel had before
  forced.contraction = 1;
  EXPECT_TRUE(cu::choose_launch(*k, big, {}, h100, forced).tiles);
  // A kernel without a variant keeps its own launch.
  cu::GpuKernel plain_kernel = *k;
  plain_kernel.tiles_entry = -1;
  EXPECT_FALSE(cu::choose_launch(plain_kernel, big, {}, h100, {}).tiles);
}

// ---- on a GPU ---------------------------------------------------------------------------------------------------

// Every launch through the tiles variant (the model's choice too; forced so that the test says so): set before the
// first kernel reads the settings.
const bool kForced = setenv("KILN_CUDA_CONTRACTION", "1", 1) == 0;

class ContractionGpu : public kiln::cudatest::GpuTest {
 protected:
  void SetUp() override {
    ASSERT_TRUE(kForced);
    kiln::cudatest::GpuTest::SetUp();
  }
};

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b, std::size_t* first = nullptr) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(T)) != 0 && !(std::isnan(a[i]) && std::isnan(b[i]))) {
      if (first) *first = i;
      return false;
    }
  return true;
}

/// Uniform values in [-1, 1); with `specials`, a few NaN, infinities and signed zeros among them.
template <class T>
NDArray<T> random_nd(std::vector<std::int64_t> shape, std::uint64_t seed, bool specials = false) {
  NDArray<T> a(shape);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  for (std::int64_t i = 0; i < a.size(); ++i) a.data()[i] = static_cast<T>(u(rng));
  if (specials && a.size() > 0) {
    const T s[] = {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity(), T(-0.0), T(0.0)};
    for (std::int64_t q = 0; q < std::max<std::int64_t>(1, a.size() / 97); ++q) a.data()[(q * 7919) % a.size()] = s[q % 5];
  }
  return a;
}

using Shape3 = std::tuple<std::int64_t, std::int64_t, std::int64_t>;

/// Sizes: empty, one, primes, a tile's side +- 1, a chunk of steps +- 1, and large ones.
const std::vector<Shape3>& product_shapes() {
  static const std::vector<Shape3> all = {{0, 5, 7},    {4, 0, 7},     {3, 5, 0},      {1, 1, 1},       {2, 3, 5},     {17, 19, 23},
                                          {64, 64, 16}, {65, 63, 17},  {63, 65, 15},   {127, 129, 131}, {1, 200, 300}, {200, 1, 300},
                                          {257, 251, 97}, {300, 257, 131}};
  return all;
}

template <class T>
void expect_matmul_matches(std::uint64_t seed, bool specials) {
  auto g = jit("matmul", matmul<T>, Options().on(Target::cuda));
  auto in = jit("matmul", matmul<T>, Options().on(Target::interpreter));
  for (const auto& [m, n, k] : product_shapes()) {
    const NDArray<T> A = random_nd<T>({m, k}, seed + static_cast<std::uint64_t>(m), specials), B = random_nd<T>({k, n}, seed + 1, specials);
    NDArray<T> C({m, n}), R({m, n});
    g(C, A, B);
    in(R, A, B);
    std::size_t at = 0;
    EXPECT_TRUE(same_bits(C.to_vector(), R.to_vector(), &at)) << m << " x " << n << " x " << k << ": element " << at;
  }
  EXPECT_NE(g.diagnostics().find("matmul_k0_tiles"), std::string::npos) << g.diagnostics();
}

/// Products with at least 2^18 elements (kiln::dot's thread per element), sides that are not multiples of a tile.
const std::vector<Shape3>& dot_shapes() {
  static const std::vector<Shape3> all = {{521, 509, 1}, {521, 509, 37}, {4099, 67, 67}};
  return all;
}

TEST_F(ContractionGpu, MatrixProductsMatchTheInterpreterBitwise) {
  expect_matmul_matches<double>(1, false);
  expect_matmul_matches<float>(2, false);
}

TEST_F(ContractionGpu, NaNInfinitiesAndSignedZerosKeepTheirBits) {
  expect_matmul_matches<double>(3, true);
  expect_matmul_matches<float>(4, true);
}

// Both operands transposed (f64 and f32: vector reads of both sides), and 64-bit integers (scalar reads, a side's
// elements 16 apart): every shape of product_shapes, bit for bit.
template <class T>
void expect_transposed_matches(std::uint64_t seed) {
  auto g = jit("transposed", transposed<T>, Options().on(Target::cuda));
  auto in = jit("transposed", transposed<T>, Options().on(Target::interpreter));
  for (const auto& [m, n, k] : product_shapes()) {
    const NDArray<T> A = random_nd<T>({k, m}, seed + static_cast<std::uint64_t>(n), true), B = random_nd<T>({n, k}, seed + 1, true);
    NDArray<T> C({m, n}), R({m, n});
    g(C, A, B);
    in(R, A, B);
    std::size_t at = 0;
    EXPECT_TRUE(same_bits(C.to_vector(), R.to_vector(), &at)) << m << " x " << n << " x " << k << ": element " << at;
  }
  EXPECT_NE(g.diagnostics().find("transposed_k0_tiles"), std::string::npos) << g.diagnostics();
}

TEST_F(ContractionGpu, TransposedOperandsAndIntegersMatchTheInterpreterBitwise) {
  expect_transposed_matches<double>(31);
  expect_transposed_matches<float>(32);
  auto g = jit("matmul", matmul<std::int64_t>, Options().on(Target::cuda));
  auto in = jit("matmul", matmul<std::int64_t>, Options().on(Target::interpreter));
  std::mt19937_64 rng(33);
  for (const auto& [m, n, k] : product_shapes()) {
    NDArray<std::int64_t> A({m, k}), B({k, n}), C({m, n}), R({m, n});
    for (std::int64_t q = 0; q < A.size(); ++q) A.data()[q] = static_cast<std::int64_t>(rng()) >> 20;
    for (std::int64_t q = 0; q < B.size(); ++q) B.data()[q] = static_cast<std::int64_t>(rng() % 2001) - 1000;
    g(C, A, B);
    in(R, A, B);
    EXPECT_EQ(C.to_vector(), R.to_vector()) << m << " x " << n << " x " << k;
  }
  EXPECT_NE(g.diagnostics().find("matmul_k0_tiles"), std::string::npos) << g.diagnostics();
}

TEST_F(ContractionGpu, DotMatchesTheInterpreterBitwise) {
  auto g = jit("dot_product", dot_product, Options().on(Target::cuda));
  auto in = jit("dot_product", dot_product, Options().on(Target::interpreter));
  for (const auto& [m, n, k] : dot_shapes()) {
    const NDArray<double> A = random_nd<double>({m, k}, 5, true), B = random_nd<double>({k, n}, 6);
    NDArray<double> C({m, n}), R({m, n});
    g(C, A, B);
    in(R, A, B);
    std::size_t at = 0;
    EXPECT_TRUE(same_bits(C.to_vector(), R.to_vector(), &at)) << m << " x " << n << " x " << k << ": element " << at;
  }
  EXPECT_NE(g.diagnostics().find("_tiles"), std::string::npos) << g.diagnostics();
}

/// kiln::dot's result against the interpreter's: bit for bit where it is a thread per element walking k (what
/// the tiles variant computes), which lower_array_ops chooses for at least 2^18 elements or a single chunk of
/// at most 64 steps; with fewer elements it sums chunks of k in order and folds them (its own order, not the
/// variant's): there within rounding.
void expect_dot_result(const NDArray<double>& got, const NDArray<double>& want, std::int64_t elements, std::int64_t k, const char* what) {
  const std::vector<double> g = got.to_vector(), w = want.to_vector();
  if (elements >= (std::int64_t{1} << 18) || k <= 64) {
    std::size_t at = 0;
    EXPECT_TRUE(same_bits(g, w, &at)) << what << ": " << elements << " elements, " << k << " steps: element " << at;
    return;
  }
  ASSERT_EQ(g.size(), w.size());
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(w[i]) || std::isinf(w[i])) {
      EXPECT_TRUE(std::isnan(w[i]) ? std::isnan(g[i]) : g[i] == w[i]) << what << " element " << i;
      continue;
    }
    EXPECT_NEAR(g[i], w[i], 1e-12 * (1 + std::fabs(w[i]))) << what << " element " << i;
  }
}

TEST_F(ContractionGpu, SuiteProductsMatchTheInterpreterBitwise) {
  auto gg = jit("gemm", sk::gemm, Options().on(Target::cuda));
  auto gi = jit("gemm", sk::gemm, Options().on(Target::interpreter));
  auto sg = jit("syrk", sk::syrk, Options().on(Target::cuda));
  auto si = jit("syrk", sk::syrk, Options().on(Target::interpreter));
  auto dg = jit("doitgen", sk::doitgen, Options().on(Target::cuda));
  auto di = jit("doitgen", sk::doitgen, Options().on(Target::interpreter));
  std::vector<Shape3> shapes = product_shapes();
  shapes.insert(shapes.end(), dot_shapes().begin(), dot_shapes().end());
  for (const auto& [m, n, k] : shapes) {
    const NDArray<double> A = random_nd<double>({m, k}, 11, true), B = random_nd<double>({k, n}, 12);
    NDArray<double> C = random_nd<double>({m, n}, 13), R = C.clone();
    gg(C, A, B, 1.5, -0.25);
    gi(R, A, B, 1.5, -0.25);
    expect_dot_result(C, R, m * n, k, "gemm");
    // syrk: C (m x m) from A (m x k), its lower triangle.
    if (m > 600) continue;  // the interpreter's time
    NDArray<double> S = random_nd<double>({m, m}, 14), Q = S.clone();
    sg(S, A, 0.5, 2.0);
    si(Q, A, 0.5, 2.0);
    EXPECT_TRUE(same_bits(S.to_vector(), Q.to_vector())) << "syrk " << m << " x " << k;
    // doitgen: A (m x k) = A C4 (C4 k x k), in place.
    NDArray<double> X = random_nd<double>({m, k}, 15), Y = X.clone();
    const NDArray<double> C4 = random_nd<double>({k, k}, 16);
    dg(X, C4);
    di(Y, C4);
    expect_dot_result(X, Y, m * k, k, "doitgen");
  }
  EXPECT_NE(gg.diagnostics().find("_tiles"), std::string::npos) << gg.diagnostics();
  EXPECT_NE(sg.diagnostics().find("_tiles"), std::string::npos) << sg.diagnostics();
  std::cout << sg.diagnostics();  // the plan and the latest launch's reason, for the record
}

TEST_F(ContractionGpu, GramProductsMatchTheInterpreterBitwise) {
  auto g = jit("gram", gram, Options().on(Target::cuda));
  auto in = jit("gram", gram, Options().on(Target::interpreter));
  for (const auto& [n, m] : {std::pair<std::int64_t, std::int64_t>{0, 4}, {5, 0}, {1, 1}, {7, 3}, {33, 65}, {100, 63}, {513, 257}, {2000, 300}}) {
    const NDArray<double> d = random_nd<double>({n, m}, 21, true);
    NDArray<double> out = random_nd<double>({m, m}, 22), ref = out.clone();
    g(out, d);
    in(ref, d);
    EXPECT_TRUE(same_bits(out.to_vector(), ref.to_vector())) << n << " x " << m;
  }
  EXPECT_NE(g.diagnostics().find("_tiles"), std::string::npos) << g.diagnostics();
}

}  // namespace
}  // namespace kiln
