// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Matrix products on the CPU (passes/product_tiles.cpp): register tiles of rows by lanes of columns, each output
// summed in order along the contracted axis. Compiled kernels against the interpreter bit for bit (NaN as NaN),
// f32 and f64, empty, unit, prime and large extents on both sides of the tiles' threshold, transposed operands,
// Gram matrices and products written as i-k-j loops, every thread count; and the decision with its reason in the diagnostics.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kiln/kiln.hpp"
#include "tools/test_support/threads.hpp"

namespace kiln {
namespace {

using test_support::Threads;

/// Values in [-1, 1), with NaN, infinities, -0 and +0 among them where `specials` (a few per thousand).
template <class T>
NDArray<T> random_array(std::vector<std::int64_t> shape, unsigned seed, bool specials) {
  NDArray<T> a(shape);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> d(-1, 1);
  const T odd[] = {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity(),
                   -std::numeric_limits<T>::infinity(), T(-0.0), T(0.0)};
  for (std::int64_t e = 0; e < a.size(); ++e) {
    a.data()[e] = static_cast<T>(d(rng));
    if (specials && rng() % 512 == 0) a.data()[e] = odd[rng() % 5];
  }
  return a;
}

/// Bit for bit, or both NaN (which NaN an operation returns depends on its operands' order in the machine
/// instruction, which kiln does not define).
template <class T>
::testing::AssertionResult same(const NDArray<T>& want, const NDArray<T>& got) {
  if (want.shape() != got.shape()) return ::testing::AssertionFailure() << "shapes differ";
  for (std::int64_t e = 0; e < want.size(); ++e) {
    const T a = want.data()[e], b = got.data()[e];
    if (std::memcmp(&a, &b, sizeof(T)) != 0 && !(std::isnan(a) && std::isnan(b)))
      return ::testing::AssertionFailure() << "element " << e << ": interpreter " << a << ", cpu " << b;
  }
  return ::testing::AssertionSuccess();
}

struct Extents {
  std::int64_t ni, nk, nj;
};
// Empty and unit extents, primes, rows around the threshold of 32 row tiles (61 rows: 31 tiles, whole-space
// schedule; 63: 32 tiles and a last single row; 64), columns around the lane groups (16 f64, 32 f32), and a
// product with few rows but many outputs (tiled for the outputs' sake).
const std::vector<Extents> kExtents = {{0, 5, 7},     {5, 0, 7},    {5, 7, 0},    {1, 1, 1},     {2, 3, 1},
                                       {61, 13, 37},  {63, 13, 37}, {64, 1, 16},  {67, 29, 33},  {131, 17, 101},
                                       {97, 257, 65}, {3, 5, 30011}};

template <class T, class K>
void check_products(const K& k, bool transposed_a, bool specials) {
  unsigned seed = 1;
  for (const Extents& x : kExtents) {
    const NDArray<T> a = random_array<T>(transposed_a ? std::vector<std::int64_t>{x.nk, x.ni} : std::vector<std::int64_t>{x.ni, x.nk},
                                         seed++, specials);
    const NDArray<T> b = random_array<T>({x.nk, x.nj}, seed++, specials);
    const NDArray<T> want = k.on(Target::interpreter)(a, b);
    for (int threads : {1, 2, 3}) {
      Threads t(threads);
      EXPECT_TRUE(same(want, k.on(Target::cpu)(a, b))) << x.ni << "x" << x.nk << "x" << x.nj << " threads " << threads;
    }
  }
}

template <class T>
auto make_product() {
  return jit("product", [](Array<T, 2> a, Array<T, 2> b) { return kiln::dot(a, b); });
}

template <class T>
auto make_product_at() {
  return jit("product_at", [](Array<T, 2> a, Array<T, 2> b) { return kiln::dot(a.T(), b); });
}

TEST(CpuProducts, MatchTheInterpreterBitwiseF64) {
  const auto k = make_product<double>();
  check_products<double>(k, false, false);
  check_products<double>(k, false, true);
}

TEST(CpuProducts, MatchTheInterpreterBitwiseF32) {
  const auto k = make_product<float>();
  check_products<float>(k, false, false);
  check_products<float>(k, false, true);
}

TEST(CpuProducts, ATransposedRowOperandIsTiledToo) {
  const auto k = make_product_at<double>();
  check_products<double>(k, true, true);
  const auto k32 = make_product_at<float>();
  check_products<float>(k32, true, false);
}

// The column operand transposed reads b[j, k]: lanes across j would gather, so the blocked schedule stays.
TEST(CpuProducts, ATransposedColumnOperandKeepsTheBlockedSchedule) {
  const auto k = jit("product_bt", [](Array<double, 2> a, Array<double, 2> b) { return kiln::dot(a, b.T()); });
  for (const Extents& x : {Extents{0, 3, 3}, Extents{67, 13, 37}, Extents{131, 17, 101}}) {
    const NDArray<double> a = random_array<double>({x.ni, x.nk}, 5, true), b = random_array<double>({x.nj, x.nk}, 6, true);
    EXPECT_TRUE(same(k.on(Target::interpreter)(a, b), k.on(Target::cpu)(a, b)));
  }
  EXPECT_NE(k.diagnostics().find("not tiled as a product: the column factor"), std::string::npos) << k.diagnostics();
  EXPECT_NE(k.diagnostics().find("does not step by one element along the columns"), std::string::npos) << k.diagnostics();
}

// A Gram matrix dᵀ d written as loops in i-k-j order (tile_products): each element accumulated from zero in order
// of k, the lets per step of k copied per row of a tile.
template <class T>
void check_gram() {
  const auto k = jit("gram", [](Array<T, 2> d) {
    const Int n = d.shape(0), m = d.shape(1);
    auto out = kiln::zeros<T>(m, m);
    prange(m, [&](Int i) {
      range(n, [&](Int kk) {
        const Scalar<T> dki = d(kk, i);
        range(m, [&](Int j) { out(i, j) += dki * d(kk, j); });
      });
    });
    return out;
  });
  for (const auto& [n, m] : std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 3}, {3, 0}, {1, 1}, {7, 2}, {13, 31}, {29, 67}, {101, 33}}) {
    const NDArray<T> d = random_array<T>({n, m}, static_cast<unsigned>(n * 100 + m), true);
    const NDArray<T> want = k.on(Target::interpreter)(d);
    for (int threads : {1, 2, 3}) {
      Threads t(threads);
      EXPECT_TRUE(same(want, k.on(Target::cpu)(d))) << n << "x" << m << " threads " << threads;
    }
  }
  EXPECT_NE(k.diagnostics().find("loops over k then j accumulating products into their own elements -> register tiles"),
            std::string::npos)
      << k.diagnostics();
}

TEST(CpuProducts, AGramMatrixWrittenAsLoopsF64) { check_gram<double>(); }
TEST(CpuProducts, AGramMatrixWrittenAsLoopsF32) { check_gram<float>(); }

// Loops accumulating into an argument: each element starts from its own value. A nest whose products read the
// array it accumulates into keeps its loops, and the diagnostics say why.
TEST(CpuProducts, LoopsAccumulatingIntoAnArgument) {
  const auto k = jit("accumulate", [](Array<double, 2> c, Array<double, 2> a, Array<double, 2> b) {
    prange(c.shape(0), [&](Int i) {
      range(a.shape(1), [&](Int kk) { range(c.shape(1), [&](Int j) { c(i, j) += a(i, kk) * b(kk, j); }); });
    });
  });
  for (const Extents& x : {Extents{0, 2, 2}, Extents{1, 1, 1}, Extents{5, 0, 3}, Extents{67, 29, 33}, Extents{31, 17, 101}}) {
    const NDArray<double> a = random_array<double>({x.ni, x.nk}, 21, true), b = random_array<double>({x.nk, x.nj}, 22, true);
    const NDArray<double> c0 = random_array<double>({x.ni, x.nj}, 23, true);
    NDArray<double> want = c0, got = c0;
    k.on(Target::interpreter)(want, a, b);
    k.on(Target::cpu)(got, a, b);
    EXPECT_TRUE(same(want, got)) << x.ni << "x" << x.nk << "x" << x.nj;
  }
  EXPECT_NE(k.diagnostics().find("-> register tiles"), std::string::npos) << k.diagnostics();

  const auto self = jit("self", [](Array<double, 2> c, Array<double, 2> a) {
    prange(c.shape(0), [&](Int i) {
      range(a.shape(1), [&](Int kk) { range(c.shape(1), [&](Int j) { c(i, j) += a(i, kk) * c(kk, j); }); });
    });
  });
  NDArray<double> c = random_array<double>({9, 9}, 24, false), c2 = c;
  const NDArray<double> a = random_array<double>({9, 9}, 25, false);
  Threads one(1);  // rows read rows that other iterations write: one thread runs them in the interpreter's order
  self.on(Target::interpreter)(c, a);
  self.on(Target::cpu)(c2, a);
  EXPECT_TRUE(same(c, c2));
  EXPECT_NE(self.diagnostics().find("not tiled: the products read c"), std::string::npos) << self.diagnostics();
}

// gemm as users write it: the product feeds an elementwise expression stored back into an argument.
TEST(CpuProducts, InsideAnExpressionStoredIntoAnArgument) {
  const auto k = jit("gemm", [](Array<double, 2> c, Array<double, 2> a, Array<double, 2> b, Double alpha, Double beta) {
    c(all, all) = alpha * kiln::dot(a, b) + beta * c;
  });
  for (const Extents& x : {Extents{0, 2, 2}, Extents{1, 1, 1}, Extents{67, 29, 33}, Extents{131, 17, 101}}) {
    const NDArray<double> a = random_array<double>({x.ni, x.nk}, 9, true), b = random_array<double>({x.nk, x.nj}, 10, true);
    const NDArray<double> c0 = random_array<double>({x.ni, x.nj}, 11, true);
    NDArray<double> want = c0, got = c0;
    k.on(Target::interpreter)(want, a, b, 1.5, 1.2);
    k.on(Target::cpu)(got, a, b, 1.5, 1.2);
    EXPECT_TRUE(same(want, got)) << x.ni << "x" << x.nk << "x" << x.nj;
  }
}

TEST(CpuProducts, TheDecisionAndItsReasonAreInTheDiagnostics) {
  const auto k = make_product<double>();
  const NDArray<double> a = random_array<double>({3, 2}, 31, false), b = random_array<double>({2, 5}, 32, false);
  (void)k.on(Target::cpu)(a, b);  // the diagnostics are the compiled kernel's
  const std::string d = k.diagnostics();
  EXPECT_NE(d.find("reduce along axis 1 is a product (rows "), std::string::npos) << d;
  EXPECT_NE(d.find("register tiles of 2 rows by vectors of columns, each output summed in order along the axis"), std::string::npos) << d;
  // The backend's lanes take the columns (the traced space is (i, j, k), k its columns), several vectors at once.
  EXPECT_NE(d.find("lanes across k: a sequential loop carries dot_acc0, dot_acc1"), std::string::npos) << d;
  EXPECT_NE(d.find("vectors of lanes at a time"), std::string::npos) << d;
  // A sum along an axis that is not a product keeps the blocked schedule, without a word about products.
  const auto s = jit("column_sums", [](Array<double, 2> x) { return kiln::sum(x, 0); });
  (void)s.on(Target::cpu)(a);
  EXPECT_EQ(s.diagnostics().find("is a product"), std::string::npos) << s.diagnostics();
  EXPECT_EQ(s.diagnostics().find("not tiled"), std::string::npos) << s.diagnostics();
  EXPECT_NE(s.diagnostics().find("parfor over blocks of 1024"), std::string::npos) << s.diagnostics();
}

}  // namespace
}  // namespace kiln
