// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// complex64 and complex128 on the CUDA backend: the kernels of complex_kernels.hpp are emitted and compiled by
// NVRTC for sm_90 without a warning, and those of plain arithmetic without a fused multiply-add (a contracted
// a·c - b·d would round once where the definition rounds twice); on a GPU (skipped without one) the arithmetic, |z| and sqrt match the
// interpreter bit for bit, exp/log/arg within a few ulps, the product bit for bit and the sums within rounding.
#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "codegen/cuda/emit_program.hpp"
#include "codegen/cuda/nvrtc.hpp"
#include "cuda_rows.hpp"
#include "cuda_test_support.hpp"
#include "frontend/settings.hpp"
#include "kiln/device.hpp"
#include "kiln/kiln.hpp"
#include "tests/complex_kernels.hpp"

namespace kiln {
namespace {

namespace cu = codegen::cuda;
using cxtest::same;

void require_nvrtc() {
  std::string why;
  if (!cu::nvrtc_available(&why)) GTEST_SKIP() << "NVRTC is not available: " << why;
}

/// Emits `fn` for CUDA and compiles it for sm_90: every entry in the PTX, no NVRTC warning, and no fma unless
/// the kernel calls the math library (exp, log, sin, cos, atan2 are written with fma in CUDA's libdevice).
template <class F>
void compiles_clean(const std::string& name, const F& fn, std::vector<std::string> names, bool math_library = false) {
  SCOPED_TRACE(name);
  const ir::Function f = cudatest::rows::lower_for_cuda(name, fn, std::move(names));
  const cu::Program prog = cu::emit_program(cudatest::offloaded(f), kiln::detail::cuda_options().emit);
  const cu::Binary bin = cu::compile_source(prog.source(), f.name, "sm_90", {});
  for (const std::string& entry : prog.entries())
    EXPECT_NE(bin.ptx.find(".entry " + entry), std::string::npos) << "no entry " << entry;
  EXPECT_EQ(bin.log, "") << "NVRTC warnings for\n" << prog.source();
  if (!math_library) {
    EXPECT_EQ(bin.ptx.find("fma.rn"), std::string::npos) << "a contracted multiply-add:\n" << prog.source();
  }
}

const auto reductions = [](Array<std::complex<double>, 1> x, Array<std::complex<float>, 1> y) {
  const Complex128 s = kiln::sum(x), p = kiln::prod(x);
  const Complex64 m = kiln::mean(y);
  return std::make_tuple(kiln::real(s), kiln::imag(s), kiln::real(p), kiln::imag(p), kiln::real(m), kiln::imag(m));
};

const auto scalars = [](Complex64 a, Array<std::complex<float>, 1> x) {
  kiln::prange(x.shape(0), [&](Int i) { x[i] = a * x[i] / (x[i] + a); });
  return kiln::sum(x);
};

TEST(ComplexCuda, EveryKernelCompilesWithoutWarningsOrFma) {
  require_nvrtc();
  compiles_clean("arith_c64", cxtest::arith<float>, {"x", "y", "r", "out"});
  compiles_clean("arith_c128", cxtest::arith<double>, {"x", "y", "r", "out"});
  compiles_clean("functions_c64", cxtest::functions<float>, {"x", "y", "out"}, true);
  compiles_clean("functions_c128", cxtest::functions<double>, {"x", "y", "out"}, true);
  compiles_clean("reductions", reductions, {"x", "y"});
  compiles_clean("scalars", scalars, {"a_re", "a_im", "x"});
}

// ---- on a GPU: against the interpreter ---------------------------------------------------------------------

class ComplexGpu : public cudatest::GpuTest {};

const std::int64_t kSizes[] = {0, 1, 13, 1021, 1000003};

template <class R>
void gpu_arith() {
  auto gpu = jit("arith", cxtest::arith<R>, Options().on(Target::cuda));
  auto ref = jit("arith", cxtest::arith<R>, Options().on(Target::interpreter));
  for (std::int64_t n : kSizes) {
    SCOPED_TRACE(::testing::Message() << sizeof(R) * 16 << "-bit complex, n=" << n);
    const auto x = cxtest::operands<R>(static_cast<std::size_t>(n), 1), y = cxtest::operands<R>(static_cast<std::size_t>(n), 2);
    std::vector<R> r(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < r.size(); ++i) r[i] = y[i].real();
    std::vector<std::complex<R>> o1(static_cast<std::size_t>(cxtest::kArithRows * n)), o2(o1.size());
    gpu(x, y, r, ArrayRef<std::complex<R>>(o1.data(), {cxtest::kArithRows, n}));
    ref(x, y, r, ArrayRef<std::complex<R>>(o2.data(), {cxtest::kArithRows, n}));
    for (std::size_t k = 0; k < o1.size(); ++k)
      ASSERT_TRUE(same(o1[k], o2[k])) << "row " << k / static_cast<std::size_t>(n) << ": " << o1[k] << " vs " << o2[k];
  }
}

TEST_F(ComplexGpu, ArithmeticMatchesTheInterpreterBitwise) {
  gpu_arith<float>();
  gpu_arith<double>();
}

template <class R>
void gpu_functions() {
  auto gpu = jit("functions", cxtest::functions<R>, Options().on(Target::cuda));
  auto ref = jit("functions", cxtest::functions<R>, Options().on(Target::interpreter));
  const std::int64_t n = 100003;
  const auto x = cxtest::operands<R>(static_cast<std::size_t>(n), 3), y = cxtest::operands<R>(static_cast<std::size_t>(n), 4);
  std::vector<std::complex<R>> o1(static_cast<std::size_t>(cxtest::kFunctionRows * n)), o2(o1.size());
  gpu(x, y, ArrayRef<std::complex<R>>(o1.data(), {cxtest::kFunctionRows, n}));
  ref(x, y, ArrayRef<std::complex<R>>(o2.data(), {cxtest::kFunctionRows, n}));
  for (int row : {0, 4, 6})  // |z|, sqrt and the comparisons: the same bits
    for (std::int64_t i = 0; i < n; ++i) {
      const std::size_t k = static_cast<std::size_t>(row * n + i);
      ASSERT_TRUE(same(o1[k], o2[k])) << "row " << row << " at " << i << ": " << o1[k] << " vs " << o2[k];
    }
  for (int row : {1, 2, 3})  // arg, exp, log: the targets' own atan2/exp/log/sin/cos, within a few ulps
    for (std::int64_t i = 0; i < n; ++i) {
      const std::size_t k = static_cast<std::size_t>(row * n + i);
      const std::complex<R> a = o1[k], b = o2[k];
      if (!std::isfinite(b.real()) || !std::isfinite(b.imag())) continue;
      const R tol = 16 * std::numeric_limits<R>::epsilon() * (std::abs(b) + R(1e-30));
      ASSERT_NEAR(a.real(), b.real(), tol) << "row " << row << " at " << i;
      ASSERT_NEAR(a.imag(), b.imag(), tol) << "row " << row << " at " << i;
    }
}

TEST_F(ComplexGpu, FunctionsMatchTheInterpreter) {
  gpu_functions<float>();
  gpu_functions<double>();
}

TEST_F(ComplexGpu, ReductionsAndScalarArgumentsMatchTheInterpreter) {
  std::vector<std::complex<double>> x(1000003);
  std::vector<std::complex<float>> y(1000003);
  std::mt19937 rng(8);
  std::uniform_real_distribution<double> u(0.999, 1.001);
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = {u(rng), u(rng) - 1};
    // y's parts on a grid of 1/16: its partial sums are exact in f32, so its mean is the same bits anywhere.
    y[i] = {static_cast<float>(std::round(u(rng) * 16) / 16), static_cast<float>(std::round((u(rng) - 1) * 16) / 16)};
  }
  const auto g = jit("reductions", reductions, Options().on(Target::cuda))(x, y);
  const auto r = jit("reductions", reductions, Options().on(Target::interpreter))(x, y);
  // The sums are real kiln::sums, blocked differently on each target: they agree within the rounding of a
  // sum, a small multiple of eps * sum |x_i| (here about 1e6 * 1.1e-16; the H100 differed by 3.4e-8). The
  // product is a sequential loop of the definition's products: the same bits.
  const double sum_tolerance = 1e4 * 1.1e-16 * static_cast<double>(x.size());
  EXPECT_NEAR(std::get<0>(g), std::get<0>(r), sum_tolerance);
  EXPECT_NEAR(std::get<1>(g), std::get<1>(r), sum_tolerance);
  EXPECT_TRUE(same(std::get<2>(g), std::get<2>(r)) && same(std::get<3>(g), std::get<3>(r))) << "prod";
  EXPECT_TRUE(same(std::get<4>(g), std::get<4>(r)) && same(std::get<5>(g), std::get<5>(r))) << "mean";
  std::vector<std::complex<float>> z1(y.begin(), y.begin() + 10007), z2 = z1;
  const std::complex<float> s1 = jit("scalars", scalars, Options().on(Target::cuda))(std::complex<float>(0.5f, -2), z1);
  const std::complex<float> s2 = jit("scalars", scalars, Options().on(Target::interpreter))(std::complex<float>(0.5f, -2), z2);
  EXPECT_NEAR(std::abs(s1 - s2), 0.0f, 1e-3f * std::abs(s2)) << s1 << " vs " << s2;
  for (std::size_t i = 0; i < z1.size(); ++i) ASSERT_TRUE(same(z1[i], z2[i])) << i;
}

}  // namespace
}  // namespace kiln
